// SPDX-License-Identifier: Apache-2.0
/// @file
/// The layout rules every part of dlpackpp shares: compact row-major strides, element counts
/// and density, each written once.
#pragma once

#include "dlpackpp/detail/checked.hpp"
#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/dlpack.hpp"

#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// The header's own field type for shape/strides: `int64_t*` in most, `const int64_t*` in some.
using shape_field_t = decltype(DLTensor{}.shape);

/// Ranks up to this have their per-tensor passes unrolled (see each_dim_inside_out).
inline constexpr int unrolled_ndim = 8;

/// Calls `step(d)` for d = ndim - 1 down to 0 (innermost dimension first) and stops at the
/// first step that returns false; true when none did. Ranks up to unrolled_ndim jump into a
/// straight line of steps with constant d, so a small tensor pays no loop counter or index
/// arithmetic; higher ranks loop down to that line first. A negative ndim runs no step.
template <class Step>
DLPACKPP_FORCE_INLINE constexpr bool each_dim_inside_out(int ndim, Step&& step) {
  static_assert(unrolled_ndim == 8, "the cases below spell out unrolled_ndim steps");
  if (ndim == 1) return step(0);  // the commonest rank, without the jump table
  switch (ndim) {
    default:
      if (ndim < 0) return true;
      for (int d = ndim - 1; d >= unrolled_ndim; --d) {
        if (!step(d)) return false;
      }
      [[fallthrough]];
    case 8:
      if (!step(7)) return false;
      [[fallthrough]];
    case 7:
      if (!step(6)) return false;
      [[fallthrough]];
    case 6:
      if (!step(5)) return false;
      [[fallthrough]];
    case 5:
      if (!step(4)) return false;
      [[fallthrough]];
    case 4:
      if (!step(3)) return false;
      [[fallthrough]];
    case 3:
      if (!step(2)) return false;
      [[fallthrough]];
    case 2:
      if (!step(1)) return false;
      [[fallthrough]];
    case 1:
      if (!step(0)) return false;
      [[fallthrough]];
    case 0:
      return true;
  }
}

/// The compact row-major strides of `shape`, written to `out` unless it is NULL: each is the
/// product of the extents to its right, a zero extent counting as one so that an empty
/// tensor keeps meaningful strides. shape[0] never enters a stride, so an empty tensor's
/// unbounded leading extent is never multiplied. A non-NULL `shape_copy` receives the
/// extents in the same pass (an export fills its block this way). Returns -1, or the
/// dimension whose extent made a stride overflow int64 (what was written is then
/// unspecified). The one place compact strides of any shape are computed: validation asks
/// whether they fit, views and exports write them (an export of positive extents writes them
/// as the running count of its one checking pass, detail::quick_export).
DLPACKPP_FORCE_INLINE int compact_strides(const std::int64_t* shape, int ndim, std::int64_t* out,
                                          std::int64_t* shape_copy = nullptr) noexcept {
  std::int64_t running = 1;
  int overflowed = -1;
  each_dim_inside_out(ndim, [&](int d) DLPACKPP_LAMBDA_FORCE_INLINE {
    if (out != nullptr) out[d] = running;
    if (shape_copy != nullptr) shape_copy[d] = shape[d];
    const std::int64_t extent = d > 0 ? shape[d] : 1;
    if (DLPACKPP_UNLIKELY(mul_overflows(running, extent == 0 ? 1 : extent, running))) {
      overflowed = d;
      return false;
    }
    return true;
  });
  return overflowed;
}

/// Writes the compact row-major strides of `shape` to `out`, for a shape whose strides are
/// known to fit (validation proved it) or whose values nobody checked (a wrong stride for a
/// wrong tensor, never undefined behaviour).
inline void write_compact_strides(const std::int64_t* shape, int ndim, std::int64_t* out) noexcept {
  static_cast<void>(compact_strides(shape, ndim, out));
}

/// The element count of a shape nobody checked. Wrapping unsigned arithmetic gives the right
/// answer for every valid tensor (an empty one has a zero factor, which wins whatever wrapped
/// before it) and no undefined behaviour for anything else. The one place an unchecked
/// element count is computed; try_numel() (rules/diagnose.hpp) is its checked twin.
DLPACKPP_FORCE_INLINE constexpr std::int64_t numel_unchecked(const std::int64_t* shape,
                                                             int ndim) noexcept {
  std::uint64_t numel = 1;
  each_dim_inside_out(ndim, [&](int d) DLPACKPP_LAMBDA_FORCE_INLINE {
    numel *= static_cast<std::uint64_t>(shape[d]);
    return true;
  });
  return static_cast<std::int64_t>(numel);
}

/// Element count and row-major density of a tensor with strides that nobody checked, in one
/// pass from the innermost dimension out (the row-major stride of a dimension is the count
/// inside it). Wrapping arithmetic, as in numel_unchecked(). The producer's strides usually
/// are the running count, so that compare comes first and a size-1 dimension's extent is
/// only looked at when its stride differs.
DLPACKPP_FORCE_INLINE void count_and_density(const std::int64_t* shape, const std::int64_t* strides,
                                             int ndim, std::int64_t& numel,
                                             bool& contiguous) noexcept {
  std::uint64_t count = 1;
  bool dense = true;
  each_dim_inside_out(ndim, [&](int d) DLPACKPP_LAMBDA_FORCE_INLINE {
    const auto extent = static_cast<std::uint64_t>(shape[d]);
    if (DLPACKPP_UNLIKELY(static_cast<std::uint64_t>(strides[d]) != count) && extent != 1) {
      dense = false;
    }
    count *= extent;
    return true;
  });
  numel = static_cast<std::int64_t>(count);
  contiguous = DLPACKPP_LIKELY(dense) || count == 0;
}

/// Element count and row-major density of a tensor nobody checked, whose strides may be
/// NULL (compact, so dense).
DLPACKPP_FORCE_INLINE void count_layout(const DLTensor& t, std::int64_t& numel,
                                        bool& contiguous) noexcept {
  const auto ndim = static_cast<int>(t.ndim);
  if (t.strides != nullptr) {
    count_and_density(t.shape, t.strides, ndim, numel, contiguous);
  } else {
    numel = numel_unchecked(t.shape, ndim);
    contiguous = true;
  }
}

/// Dense in row-major (or, with `fortran`, column-major) order: each stride is the product of
/// the extents inside it. Size-1 dimensions (any stride) and empty tensors never spoil it.
constexpr bool dense_in_order(const std::int64_t* shape, const std::int64_t* strides, int ndim,
                              bool fortran) noexcept {
  std::uint64_t expected = 1;
  bool dense = true;
  for (int k = 0; k < ndim; ++k) {
    const int d = fortran ? k : ndim - 1 - k;
    if (shape[d] == 0) return true;
    if (shape[d] != 1 && static_cast<std::uint64_t>(strides[d]) != expected) dense = false;
    expected *= static_cast<std::uint64_t>(shape[d]);
  }
  return dense;
}

/// Dense under some permutation of the dimensions (no gaps, no overlaps, positive strides)
/// for a non-empty tensor. In a dense layout each stride is the product of the smaller ones'
/// extents, so strides grow strictly and can be matched in increasing order without sorting
/// (or allocating).
inline bool dense_in_some_order(const std::int64_t* shape, const std::int64_t* strides,
                                int ndim) noexcept {
  int remaining = 0;
  for (int d = 0; d < ndim; ++d) remaining += shape[d] != 1 ? 1 : 0;
  std::int64_t expected = 1;
  for (; remaining > 0; --remaining) {
    int match = -1;
    for (int d = 0; d < ndim; ++d) {
      if (shape[d] != 1 && strides[d] == expected) {
        if (match != -1) return false;  // two dimensions share a stride: overlap
        match = d;
      }
    }
    if (match == -1) return false;
    expected *= shape[match];
  }
  return true;
}

}  // namespace detail
DLPACKPP_END_NAMESPACE
