// SPDX-License-Identifier: Apache-2.0
// The strided layouts a producer may send, one description each (shape, strides, where the
// first element sits, what byte_offset carries), shared by the view and accessor tests.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <utility>
#include <vector>

namespace dlpackpp_test {

/// Extents or strides, in elements.
using Ints = std::vector<std::int64_t>;

/// A way to lay a tensor's elements out in memory.
enum class Layout {
  c_contiguous,          ///< row-major, compact
  fortran,               ///< column-major, compact
  permuted,              ///< a transpose at ndim 2, a rotation of the axes beyond
  sliced,                ///< every other element of a parent twice as long in the last axis
  negative,              ///< even axes run backwards, odd ones forwards
  zero_size,             ///< the middle axis empty, data NULL
  size_one_odd_strides,  ///< every other extent 1, its stride anything (0 and INT64_MAX too)
  byte_offset,           ///< row-major with the first element past data, in byte_offset
  null_strides,          ///< row-major, conveyed as NULL strides
};

/// Every layout, for grids.
inline constexpr Layout all_layouts[] = {Layout::c_contiguous,
                                         Layout::fortran,
                                         Layout::permuted,
                                         Layout::sliced,
                                         Layout::negative,
                                         Layout::zero_size,
                                         Layout::size_one_odd_strides,
                                         Layout::byte_offset,
                                         Layout::null_strides};

/// The layout's name, for test names and failures.
inline const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::c_contiguous:
      return "c_contiguous";
    case Layout::fortran:
      return "fortran";
    case Layout::permuted:
      return "permuted";
    case Layout::sliced:
      return "sliced";
    case Layout::negative:
      return "negative";
    case Layout::zero_size:
      return "zero_size";
    case Layout::size_one_odd_strides:
      return "size_one_odd_strides";
    case Layout::byte_offset:
      return "byte_offset";
    case Layout::null_strides:
      return "null_strides";
  }
  return "?";
}

/// Failures name the layout instead of printing its bytes.
inline void PrintTo(Layout layout, std::ostream* os) { *os << layout_name(layout); }

/// Row-major strides; a zero extent counts as 1 so that the strides stay meaningful.
inline Ints row_major(const Ints& shape) {
  Ints strides(shape.size());
  std::int64_t running = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = running;
    running *= std::max<std::int64_t>(shape[d], 1);
  }
  return strides;
}

/// Column-major strides, zero extents counted as in row_major().
inline Ints column_major(const Ints& shape) {
  Ints strides(shape.size());
  std::int64_t running = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    strides[d] = running;
    running *= std::max<std::int64_t>(shape[d], 1);
  }
  return strides;
}

/// A producer's tensor of one layout, in elements. Its memory holds `offset_elements`, then
/// the `span` elements the tensor reaches; element (0, ..., 0) is `first` past the lowest.
struct Strided {
  Ints shape;
  Ints strides;  // what the tensor's strides mean, also where they are sent as NULL
  bool null_strides = false;
  bool null_data = false;
  std::int64_t first = 0;
  std::int64_t span = 0;
  std::int64_t offset_elements = 0;
};

/// `layout` over `shape` (permuted rotates it, zero_size empties its middle axis,
/// size_one_odd_strides sets every other extent to 1).
inline Strided make_layout(Layout layout, Ints shape) {
  Strided s;
  s.shape = std::move(shape);
  const std::size_t n = s.shape.size();
  s.strides = row_major(s.shape);
  switch (layout) {
    case Layout::c_contiguous:
      break;
    case Layout::fortran:
      s.strides = column_major(s.shape);
      break;
    case Layout::permuted:
      std::rotate(s.shape.begin(), s.shape.begin() + (n > 0 ? 1 : 0), s.shape.end());
      std::rotate(s.strides.begin(), s.strides.begin() + (n > 0 ? 1 : 0), s.strides.end());
      break;
    case Layout::sliced:
      if (n > 0) {
        Ints parent = s.shape;
        parent.back() *= 2;
        s.strides = row_major(parent);
        s.strides.back() = 2;
      }
      break;
    case Layout::negative:
      for (std::size_t d = 0; d < n; d += 2) s.strides[d] = -s.strides[d];
      break;
    case Layout::zero_size:
      if (n > 0) s.shape[n / 2] = 0;
      s.strides = row_major(s.shape);
      s.null_data = true;
      break;
    case Layout::size_one_odd_strides: {
      const std::int64_t odd[] = {7, -5, 0, 1000003, INT64_MAX};
      for (std::size_t d = 0; d < n; d += 2) s.shape[d] = 1;
      s.strides = row_major(s.shape);
      for (std::size_t d = 0; d < n; d += 2) s.strides[d] = odd[(d / 2) % 5];
      break;
    }
    case Layout::byte_offset:
      s.offset_elements = 3;
      break;
    case Layout::null_strides:
      s.null_strides = true;
      break;
  }
  std::int64_t low = 0;
  std::int64_t high = 0;
  bool empty = false;
  for (std::size_t d = 0; d < n; ++d) {
    empty = empty || s.shape[d] == 0;
    if (s.shape[d] > 1) {  // an axis of extent 1 reaches no other element, whatever its stride
      const std::int64_t reach = (s.shape[d] - 1) * s.strides[d];
      (reach < 0 ? low : high) += reach;
    }
  }
  s.first = -low;
  s.span = empty ? 0 : high - low + 1;
  return s;
}

}  // namespace dlpackpp_test
