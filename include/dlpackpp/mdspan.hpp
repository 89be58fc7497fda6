// SPDX-License-Identifier: Apache-2.0
/// @file
/// mdspan interop: to_mdspan<T, Rank>() / to_mdspan<T, Extents>() view a TensorView as a
/// `layout_stride` mdspan, and from_mdspan() exports an mdspan with an owner as a managed
/// tensor. Uses `std::mdspan` where the standard library has it (`__cpp_lib_mdspan`, C++23),
/// else CCCL's `cuda::std::mdspan` (`<cuda/std/mdspan>`, shipped with the CUDA toolkit, usable
/// in host-only C++17 code). Opt-in (not in the umbrella header); with neither available it
/// defines DLPACKPP_HAS_MDSPAN as 0 and nothing else.
#pragma once

#include "dlpackpp/detail/config.hpp"

#ifndef DLPACKPP_MDSPAN_USE_CUDA_STD
/// 1 picks cuda::std::mdspan even where std::mdspan exists (for mdspans kernels index).
#define DLPACKPP_MDSPAN_USE_CUDA_STD 0
#endif
#if __has_include(<version>)
#include <version>
#endif
#if defined(__cpp_lib_mdspan) && !DLPACKPP_MDSPAN_USE_CUDA_STD
#include <array>
#include <mdspan>
/// The namespace whose mdspan dlpackpp uses: `std` or `cuda::std`.
#define DLPACKPP_MDSPAN_NAMESPACE std
/// 1 when an mdspan was found and this header defines its functions.
#define DLPACKPP_HAS_MDSPAN 1
#elif __has_include(<cuda/std/mdspan>)
#include <cuda/std/array>
#include <cuda/std/mdspan>
/// The namespace whose mdspan dlpackpp uses: `std` or `cuda::std`.
#define DLPACKPP_MDSPAN_NAMESPACE cuda::std
/// 1 when an mdspan was found and this header defines its functions.
#define DLPACKPP_HAS_MDSPAN 1
#else
/// 0: neither std::mdspan nor `<cuda/std/mdspan>` is available; nothing else is defined.
#define DLPACKPP_HAS_MDSPAN 0
#endif

#if DLPACKPP_HAS_MDSPAN

#include "dlpackpp/detail/checked.hpp"
#include "dlpackpp/detail/layout.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/iterate.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/producers.hpp"
#include "dlpackpp/rules/access.hpp"
#include "dlpackpp/tensor_view.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

/// What to_mdspan returns: an mdspan of T over `Extents` with `layout_stride`.
template <class T, class Extents>
using strided_mdspan =
    DLPACKPP_MDSPAN_NAMESPACE::mdspan<T, Extents, DLPACKPP_MDSPAN_NAMESPACE::layout_stride>;

/// Rank-N dynamic extents indexed by int64_t, DLPack's own index type.
template <std::size_t N>
using dynamic_extents = DLPACKPP_MDSPAN_NAMESPACE::dextents<std::int64_t, N>;

namespace detail {

template <class E>
struct is_extents : std::false_type {};
template <class I, std::size_t... X>
struct is_extents<DLPACKPP_MDSPAN_NAMESPACE::extents<I, X...>> : std::true_type {};

/// A value outside an mdspan's index type.
DLPACKPP_COLD inline Error index_type_error(const char* what, std::int64_t value) {
  return make_error(Errc::size_overflow, what, value, " does not fit in the mdspan's index type");
}

/// The strides layout_stride gets: the view's own, except on dimensions where no stride is
/// ever multiplied by a non-zero index (extent 1, or any dimension of an empty tensor),
/// which get the smallest stride that keeps the mapping valid. Refuses what layout_stride
/// cannot express: a non-positive stride that matters, or two elements sharing an address.
inline Result<void> mdspan_strides(const TensorView& view, std::int64_t* out) {
  const int ndim = view.ndim();
  const IntSpan shape = view.shape();
  if (view.numel() == 0) {
    write_compact_strides(shape.data(), ndim, out);
    return {};
  }
  for (int d = 0; d < ndim; ++d) {
    const std::int64_t stride = view.strides()[static_cast<std::size_t>(d)];
    if (shape[static_cast<std::size_t>(d)] == 1) {
      out[d] = 1;
    } else if (DLPACKPP_UNLIKELY(stride <= 0)) {
      return make_error(Errc::invalid_argument, "strides[", d, "] is ", stride,
                        "; layout_stride needs positive strides");
    } else {
      out[d] = stride;
    }
  }
  // Nested: walked outermost first, each stride must step over everything inside it, the
  // precondition of layout_stride (an interleaved layout may still be one-to-one, as {2, 3}
  // with strides {3, 2} is, but layout_stride cannot say so).
  IterationPlan p;
  plan_iteration(shape, view.strides(), false, p);
  for (int r = 0; r + 1 < p.rank; ++r) {
    std::int64_t inner_span = 0;
    if (!mul_overflows(p.stride[r + 1], p.extent[r + 1], inner_span) && p.stride[r] < inner_span) {
      return make_error(Errc::invalid_argument, "strides[", p.dim[r], "] is ", p.stride[r],
                        ", inside the span of dimension ", p.dim[r + 1],
                        ": the strides interleave, and layout_stride needs strides that nest");
    }
  }
  return {};
}

/// Every extent, stride and the span they reach must fit in the index type.
template <class Index>
Result<void> fits_index_type(IntSpan shape, const std::int64_t* strides) {
  using limits = std::numeric_limits<Index>;
  const auto max = static_cast<std::uint64_t>(limits::max());
  std::int64_t span = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<std::uint64_t>(shape[d]) > max) return index_type_error("extent ", shape[d]);
    if (static_cast<std::uint64_t>(strides[d]) > max)
      return index_type_error("stride ", strides[d]);
    std::int64_t reach = 0;
    if (shape[d] > 0 &&
        (mul_overflows(strides[d], shape[d] - 1, reach) || add_overflows(span, reach, span))) {
      return index_type_error("the strided span of extent ", shape[d]);
    }
  }
  if (static_cast<std::uint64_t>(span) > max) return index_type_error("the strided span ", span);
  return {};
}

}  // namespace detail

/// Views `view` as a `layout_stride` mdspan with extents `Extents` (a `std::extents` /
/// `cuda::std::extents`, static or dynamic). Checks as TensorView::accessor<T, rank>() does
/// (Errc::dtype_mismatch, read_only for a non-const T, misaligned, rank_mismatch,
/// unsupported_dtype for packed sub-byte types), then the static extents
/// (Errc::shape_mismatch), what layout_stride can express (Errc::invalid_argument for a
/// negative, zero or overlapping stride on a dimension of extent > 1) and the index type
/// (Errc::size_overflow). The device is not checked: a cuda::std::mdspan over GPU memory is
/// for kernels. The mdspan borrows like the view does. For example
/// `to_mdspan<const float, dynamic_extents<2>>(view)`.
template <class T, class Extents>
Result<strided_mdspan<T, Extents>> try_to_mdspan(const TensorView& view) {
  static_assert(detail::is_extents<Extents>::value,
                "dlpackpp: the second template argument of to_mdspan is a rank or an extents type");
  constexpr std::size_t rank = Extents::rank();
  constexpr std::size_t slots = rank > 0 ? rank : 1;
  using index_type = typename Extents::index_type;
  std::int64_t wanted[slots] = {};
  for (std::size_t r = 0; r < rank; ++r) {
    const std::size_t fixed = Extents::static_extent(r);
    wanted[r] =
        fixed == DLPACKPP_MDSPAN_NAMESPACE::dynamic_extent ? -1 : static_cast<std::int64_t>(fixed);
  }
  // The rank and extents first, so a wrong rank reads as one of the shape; then the checks of
  // accessor<T, rank>() (whose rank check then passes).
  Result<void> ok = detail::shape_problem(view.shape(), IntSpan(wanted, rank));
  if (DLPACKPP_UNLIKELY(!ok)) return ok.error();
  ok = detail::accessor_problem<T, static_cast<int>(rank)>(view.dtype(), view.flags(), view.ndim(),
                                                           view.const_data());
  if (DLPACKPP_UNLIKELY(!ok)) return ok.error();
  std::int64_t strides[slots] = {};
  ok = detail::mdspan_strides(view, strides);
  if (DLPACKPP_UNLIKELY(!ok)) return ok.error();
  ok = detail::fits_index_type<index_type>(view.shape(), strides);
  if (DLPACKPP_UNLIKELY(!ok)) return ok.error();

  DLPACKPP_MDSPAN_NAMESPACE::array<index_type, rank> extents_in{};
  DLPACKPP_MDSPAN_NAMESPACE::array<index_type, rank> strides_in{};
  for (std::size_t r = 0; r < rank; ++r) {
    extents_in[r] = static_cast<index_type>(view.shape()[r]);
    strides_in[r] = static_cast<index_type>(strides[r]);
  }
  using mapping = typename DLPACKPP_MDSPAN_NAMESPACE::layout_stride::template mapping<Extents>;
  T* data = static_cast<T*>(const_cast<void*>(view.const_data()));
  return strided_mdspan<T, Extents>(data, mapping(Extents(extents_in), strides_in));
}
/// to_mdspan with rank-`Rank` dynamic int64_t extents, e.g. `try_to_mdspan<float, 2>(view)`.
template <class T, std::size_t Rank>
Result<strided_mdspan<T, dynamic_extents<Rank>>> try_to_mdspan(const TensorView& view) {
  return try_to_mdspan<T, dynamic_extents<Rank>>(view);
}
/// As try_to_mdspan<T, Extents>, throwing on failure.
template <class T, class Extents>
strided_mdspan<T, Extents> to_mdspan(const TensorView& view) {
  return try_to_mdspan<T, Extents>(view).value();
}
/// As try_to_mdspan<T, Rank>, throwing on failure. For example
/// `auto m = to_mdspan<const float, 2>(view); float x = m[1, 2];` (C++23; CCCL's C++17
/// mdspan spells it `m(1, 2)`).
template <class T, std::size_t Rank>
strided_mdspan<T, dynamic_extents<Rank>> to_mdspan(const TensorView& view) {
  return try_to_mdspan<T, dynamic_extents<Rank>>(view).value();
}

/// Exports the elements an mdspan sees as a managed tensor, as wrap() does: `owner` keeps
/// the memory alive and is destroyed when the consumer is done (on failure it is not
/// consumed). Any layout with strides (layout_right, layout_left, layout_stride) and a plain
/// pointer data handle; a const element type makes the export READ_ONLY. For example
/// `from_mdspan(m, std::move(buffer_owner))`, or `from_mdspan(to_mdspan<float, 2>(t.view()),
/// std::move(t))` to hand a managed tensor on through an mdspan.
template <class Handle = DefaultManagedTensor, class T, class Extents, class Layout, class Accessor,
          class Owner>
Result<Handle> try_from_mdspan(
    const DLPACKPP_MDSPAN_NAMESPACE::mdspan<T, Extents, Layout, Accessor>& m, Owner&& owner,
    Device device = Device::cpu(), std::uint64_t flags = 0) {
  static_assert(std::is_same<typename Accessor::data_handle_type, T*>::value,
                "dlpackpp: from_mdspan needs an accessor whose data handle is a plain T*");
  constexpr std::size_t rank = Extents::rank();
  constexpr std::size_t slots = rank > 0 ? rank : 1;
  std::int64_t shape[slots] = {};
  std::int64_t strides[slots] = {};
  for (std::size_t r = 0; r < rank; ++r) {
    shape[r] = static_cast<std::int64_t>(m.extent(r));
    strides[r] = static_cast<std::int64_t>(m.stride(r));
  }
  using E = std::remove_cv_t<T>;
  void* data = const_cast<E*>(m.data_handle());
  return try_wrap<Handle>(data, dtype_of<E>, IntSpan(shape, rank), IntSpan(strides, rank), device,
                          std::forward<Owner>(owner), flags | detail::export_flags<Handle, T>());
}
/// As try_from_mdspan, throwing on failure.
template <class Handle = DefaultManagedTensor, class T, class Extents, class Layout, class Accessor,
          class Owner>
Handle from_mdspan(const DLPACKPP_MDSPAN_NAMESPACE::mdspan<T, Extents, Layout, Accessor>& m,
                   Owner&& owner, Device device = Device::cpu(), std::uint64_t flags = 0) {
  return try_from_mdspan<Handle>(m, std::forward<Owner>(owner), device, flags).value();
}

DLPACKPP_END_NAMESPACE

#endif  // DLPACKPP_HAS_MDSPAN
