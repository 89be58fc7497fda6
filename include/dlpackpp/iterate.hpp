// SPDX-License-Identifier: Apache-2.0
/// @file
/// Any-rank element loops over a TensorView: for_each_element() and for_each_indexed() visit
/// every element of a view whose rank is known only at run time, in ascending addresses
/// wherever the layout allows it, and copy_row_major() copies one into compact row-major
/// memory, so callers never write an odometer. Opt-in (not in the umbrella
/// header).
#pragma once

#include "dlpackpp/detail/checked.hpp"
#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/rules/access.hpp"
#include "dlpackpp/tensor_view.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

namespace detail {

/// A loop nest over at most this many dimensions of extent >= 2: a valid tensor has fewer,
/// since their product (its element count) fits in int64_t. Size-1 dimensions are dropped.
inline constexpr int iteration_max_dims = 64;

/// The loop nest for one view, outermost dimension first. Strides are in elements and never
/// negative: a dimension walked backwards in memory is flipped (`base` moves to its far end),
/// and the dimensions are sorted by stride. When the strides nest (each at least the span of
/// the dimensions inside it, as in every compact or padded layout) that order visits
/// ascending addresses; interleaved strides are walked in the same stride order, which then
/// is not ascending.
struct IterationPlan {
  std::int64_t extent[iteration_max_dims];
  std::int64_t stride[iteration_max_dims];
  int dim[iteration_max_dims];       // the view's dimension each loop walks
  bool flipped[iteration_max_dims];  // walked from its last index down
  int rank = 0;                      // loops in the nest
  std::int64_t base_offset = 0;      // elements from the first element to the first visited
  bool empty = false;                // no elements at all
};

/// Builds the loop nest: drops size-1 dimensions, flips negative strides, sorts by stride
/// (largest outermost, ties keeping the view's order) and, when `merge`, fuses each pair of
/// neighbouring loops that walk memory as one (a compact view becomes a single loop).
inline void plan_iteration(IntSpan shape, IntSpan strides, bool merge, IterationPlan& p) noexcept {
  p.rank = 0;
  p.base_offset = 0;
  p.empty = false;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) {
      p.empty = true;
      return;
    }
  }
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    DLPACKPP_ASSERT(p.rank < iteration_max_dims,
                    "more dimensions of extent >= 2 than int64 can count");
    const int r = p.rank++;
    const bool flip = strides[d] < 0;
    p.extent[r] = shape[d];
    p.stride[r] = flip ? -strides[d] : strides[d];
    p.dim[r] = static_cast<int>(d);
    p.flipped[r] = flip;
    if (flip) p.base_offset += strides[d] * (shape[d] - 1);
    // Insertion sort by descending stride; equal strides keep the view's order.
    for (int k = r; k > 0 && p.stride[k - 1] < p.stride[k]; --k) {
      std::swap(p.extent[k - 1], p.extent[k]);
      std::swap(p.stride[k - 1], p.stride[k]);
      std::swap(p.dim[k - 1], p.dim[k]);
      std::swap(p.flipped[k - 1], p.flipped[k]);
    }
  }
  if (!merge || p.rank < 2) return;
  // Fuse loop r into its inner neighbour when it steps exactly over the neighbour's span.
  int kept = p.rank - 1;  // loops kept..rank-1 are settled, innermost last
  for (int r = p.rank - 2; r >= 0; --r) {
    std::int64_t span = 0;
    if (!mul_overflows(p.stride[kept], p.extent[kept], span) && p.stride[r] == span) {
      p.extent[kept] *= p.extent[r];
    } else {
      --kept;
      p.extent[kept] = p.extent[r];
      p.stride[kept] = p.stride[r];
    }
  }
  const int fused = p.rank - kept;
  for (int r = 0; r < fused; ++r) {
    p.extent[r] = p.extent[kept + r];
    p.stride[r] = p.stride[kept + r];
  }
  p.rank = fused;  // dim/flipped no longer describe fused loops; only the indexed walk reads them
}

/// The one odometer of the walks: calls `inner()` at the start of every innermost run and
/// `move(r, k)` to move loop r (an outer loop, all but the last) by k of its steps: 1 forward,
/// or -(extent - 1) back to its start when it wraps, before the next loop steps forward, so a
/// pointer never leaves the tensor's span. `move` keeps whatever the walk tracks (pointers,
/// indices) in step.
template <class Inner, class Move>
DLPACKPP_FORCE_INLINE void walk_outer(const IterationPlan& p, Inner&& inner, Move&& move) {
  const int outer = p.rank - 1;
  std::int64_t counter[iteration_max_dims];
  for (int r = 0; r < outer; ++r) counter[r] = 0;
  for (;;) {
    inner();
    int r = outer - 1;
    for (; r >= 0; --r) {
      if (++counter[r] < p.extent[r]) {
        move(r, std::int64_t{1});
        break;
      }
      counter[r] = 0;
      move(r, 1 - p.extent[r]);
    }
    if (r < 0) return;
  }
}

/// Typed host access to every element: element_problem()'s checks (dtype, writability,
/// alignment), addressable elements, and memory the host can read.
template <class T>
Result<T*> iteration_pointer(const TensorView& view) {
  if (DLPACKPP_UNLIKELY(!view.device().is_host_accessible())) {
    return make_error(Errc::device_mismatch, "device is ", view.device().to_string(),
                      ", element loops need memory the host can access");
  }
  if (DLPACKPP_UNLIKELY(!addressable(view.dtype(), view.flags())))
    return packed_error(view.dtype());
  return view.try_data<T>();
}

/// Where both walks start: iteration_pointer()'s checks, then the plan; the first element to
/// visit (NULL when the view is empty, which `p.empty` also says).
template <class T>
Result<T*> start_walk(const TensorView& view, bool merge, IterationPlan& p) {
  Result<T*> first = iteration_pointer<T>(view);
  if (DLPACKPP_UNLIKELY(!first)) return first;
  plan_iteration(view.shape(), view.strides(), merge, p);
  if (p.empty) return static_cast<T*>(nullptr);
  return *first + p.base_offset;
}

}  // namespace detail

/// Calls `f(x)` with a `T&` for every element of `view`, for any rank, largest stride
/// outermost: in ascending addresses whenever the strides nest (a compact or padded view,
/// whatever its dimension order, is read front to back); interleaved strides, such as {3, 2}
/// for shape {2, 3}, are walked in that stride order, not in ascending addresses. Size-1 dimensions
/// are skipped, negative strides walked backwards in index order, and loops that walk memory as one
/// are fused, so the innermost loop is a contiguous pointer loop whenever the layout allows. Checks
/// as TensorView::data<T>() does (Errc::dtype_mismatch, read_only for a non-const T, misaligned),
/// refuses packed sub-byte types (Errc::unsupported_dtype) and memory the host cannot read
/// (Errc::device_mismatch). An element that stride 0 repeats is visited once per index. For example
/// `for_each_element<const float>(view, [&](float x) { sum += x; });`.
template <class T, class F>
Result<void> try_for_each_element(const TensorView& view, F&& f) {
  detail::IterationPlan p;
  const Result<T*> first = detail::start_walk<T>(view, true, p);
  if (DLPACKPP_UNLIKELY(!first)) return first.error();
  if (p.empty) return {};
  T* base = *first;
  if (p.rank == 0) {
    f(*base);
    return {};
  }
  const std::int64_t n = p.extent[p.rank - 1];
  const std::int64_t s = p.stride[p.rank - 1];
  T* q = base;
  const auto move = [&](int r, std::int64_t k) { q += p.stride[r] * k; };
  if (s == 1) {
    detail::walk_outer(
        p,
        [&] {
          for (T *e = q, *const end = q + n; e != end; ++e) f(*e);
        },
        move);
  } else {
    detail::walk_outer(
        p,
        [&] {
          for (std::int64_t i = 0; i < n; ++i) f(q[i * s]);
        },
        move);
  }
  return {};
}

/// As try_for_each_element, throwing on failure.
template <class T, class F>
void for_each_element(const TensorView& view, F&& f) {
  try_for_each_element<T>(view, std::forward<F>(f)).value();
}

/// Calls `f(index, x)` for every element of `view`: `index` is an IntSpan of ndim() values
/// (valid during the call) and `x` a `T&` to the element at that index. Visited in the order
/// for_each_element takes, with the same checks, but no loops are fused, since each index is
/// reported. For example
/// `for_each_indexed<float>(v, [](IntSpan i, float& x) { x = float(i[0]); });`.
template <class T, class F>
Result<void> try_for_each_indexed(const TensorView& view, F&& f) {
  detail::IterationPlan p;
  const Result<T*> first = detail::start_walk<T>(view, false, p);
  if (DLPACKPP_UNLIKELY(!first)) return first.error();
  if (p.empty) return {};
  T* base = *first;
  // The index of every dimension, size-1 ones (always 0) included; only a view with more
  // dimensions than a valid tensor can have of extent >= 2 needs the heap for it.
  const int ndim = view.ndim();
  std::int64_t index_storage[detail::iteration_max_dims] = {};
  std::unique_ptr<std::int64_t[]> index_heap;
  std::int64_t* index = index_storage;
  if (ndim > detail::iteration_max_dims) {
    index_heap.reset(new std::int64_t[static_cast<std::size_t>(ndim)]());
    index = index_heap.get();
  }
  const IntSpan index_span(index, static_cast<std::size_t>(ndim));
  if (p.rank == 0) {
    f(index_span, *base);
    return {};
  }
  // Outer loops set their dimension's index when they step; the innermost loop counts its own.
  for (int r = 0; r < p.rank; ++r) index[p.dim[r]] = p.flipped[r] ? p.extent[r] - 1 : 0;
  const int inner = p.rank - 1;
  const std::int64_t n = p.extent[inner];
  const std::int64_t s = p.stride[inner];
  std::int64_t& i_inner = index[p.dim[inner]];
  const std::int64_t start = i_inner;
  const std::int64_t step = p.flipped[inner] ? -1 : 1;
  T* q = base;
  detail::walk_outer(
      p,
      [&] {
        i_inner = start;
        for (std::int64_t i = 0; i < n; ++i, i_inner += step) f(index_span, q[i * s]);
      },
      [&](int r, std::int64_t k) {
        q += p.stride[r] * k;
        index[p.dim[r]] += p.flipped[r] ? -k : k;
      });
  return {};
}

/// As try_for_each_indexed, throwing on failure.
template <class T, class F>
void for_each_indexed(const TensorView& view, F&& f) {
  try_for_each_indexed<T>(view, std::forward<F>(f)).value();
}

/// Copies the elements of `view` into `dst`, compact and row-major (view.nbytes() bytes): the
/// copy a consumer makes to own a strided view's elements. Any dtype of whole bytes per
/// element (or padded sub-byte), in memory the host can read (Errc::device_mismatch
/// otherwise); packed sub-byte elements only from a contiguous view (Errc::not_contiguous
/// otherwise), whose bytes are copied as they are. Reads the source in the order
/// for_each_element takes.
inline Result<void> try_copy_row_major(const TensorView& view, void* dst) {
  if (DLPACKPP_UNLIKELY(!view.device().is_host_accessible())) {
    return detail::make_error(Errc::device_mismatch, "device is ", view.device().to_string(),
                              ", copying needs memory the host can access");
  }
  if (view.numel() == 0) return {};
  const auto* src = static_cast<const unsigned char*>(view.const_data());
  auto* out = static_cast<unsigned char*>(dst);
  if (view.is_contiguous()) {
    std::memcpy(out, src, static_cast<std::size_t>(view.nbytes()));
    return {};
  }
  if (DLPACKPP_UNLIKELY(!detail::addressable(view.dtype(), view.flags()))) {
    return detail::make_error(Errc::not_contiguous, "a strided ", view.dtype().to_string(),
                              " view: packed sub-byte elements are copied only when contiguous");
  }
  const std::int64_t item = view.nbytes() / view.numel();  // bytes per element
  detail::IterationPlan p;
  detail::plan_iteration(view.shape(), view.strides(), false, p);
  // Each loop's step in the destination: its dimension's row-major stride, negated for a
  // flipped loop, which then starts at the destination's far end of that dimension.
  // Zeroed although the loop below fills every entry read: GCC 13 at -O3 cannot see that.
  std::int64_t to_stride[detail::iteration_max_dims] = {};
  std::int64_t to_first = 0;
  const IntSpan shape = view.shape();
  for (int r = 0; r < p.rank; ++r) {
    std::int64_t row_major = 1;
    for (std::size_t d = static_cast<std::size_t>(p.dim[r]) + 1; d < shape.size(); ++d) {
      row_major *= shape[d];
    }
    to_stride[r] = p.flipped[r] ? -row_major : row_major;
    if (p.flipped[r]) to_first += row_major * (p.extent[r] - 1);
  }
  const unsigned char* from = src + static_cast<std::ptrdiff_t>(p.base_offset * item);
  unsigned char* to = out + static_cast<std::ptrdiff_t>(to_first * item);
  const auto copy = static_cast<std::size_t>(item);
  if (p.rank == 0) {  // only size-1 dimensions: one element
    std::memcpy(to, from, copy);
    return {};
  }
  const int inner = p.rank - 1;
  const std::int64_t n = p.extent[inner];
  const auto from_step = static_cast<std::ptrdiff_t>(p.stride[inner] * item);
  const auto to_step = static_cast<std::ptrdiff_t>(to_stride[inner] * item);
  const auto runs = static_cast<std::ptrdiff_t>(n);
  detail::walk_outer(
      p,
      [&] {
        for (std::ptrdiff_t i = 0; i < runs; ++i) {
          std::memcpy(to + i * to_step, from + i * from_step, copy);
        }
      },
      [&](int r, std::int64_t k) {
        from += static_cast<std::ptrdiff_t>(p.stride[r] * k * item);
        to += static_cast<std::ptrdiff_t>(to_stride[r] * k * item);
      });
  return {};
}

/// As try_copy_row_major, throwing on failure.
inline void copy_row_major(const TensorView& view, void* dst) {
  try_copy_row_major(view, dst).value();
}

DLPACKPP_END_NAMESPACE
