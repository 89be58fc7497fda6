// SPDX-License-Identifier: Apache-2.0
/// @file
/// TensorAccessor<T, N>: a trivially copyable strided accessor to pass into kernels by value.
#pragma once

#include "dlpackpp/detail/config.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <type_traits>

DLPACKPP_BEGIN_NAMESPACE

namespace detail {
template <class... I>
constexpr bool all_integral = (std::is_integral<I>::value && ...);

/// Reports an index outside its dimension and aborts: on the host through the contract
/// handler's channel, in device code (which cannot abort) with printf and a trap.
DLPACKPP_HOST_DEVICE inline void index_out_of_range(int dim, std::int64_t i,
                                                    std::int64_t size) noexcept {
#if defined(__CUDA_ARCH__)
  printf("dlpackpp: TensorAccessor index %lld out of range [0, %lld) in dimension %d\n",
         static_cast<long long>(i), static_cast<long long>(size), dim);
  __trap();
#elif defined(__HIP_DEVICE_COMPILE__)
  static_cast<void>(dim), static_cast<void>(i), static_cast<void>(size);
  __builtin_trap();
#else
  std::fprintf(stderr,
               "dlpackpp: TensorAccessor index %lld out of range [0, %lld) in dimension %d\n",
               static_cast<long long>(i), static_cast<long long>(size), dim);
  assert_fail(__FILE__, __LINE__, "TensorAccessor index out of range");
#endif
}

/// The DLPACKPP_ACCESSOR_BOUNDS_CHECK test of index `i` in dimension `dim`.
DLPACKPP_HOST_DEVICE DLPACKPP_FORCE_INLINE void check_index(int dim, std::int64_t i,
                                                            std::int64_t size) noexcept {
#if DLPACKPP_ACCESSOR_BOUNDS_CHECK
  if (DLPACKPP_UNLIKELY(i < 0 || i >= size)) index_out_of_range(dim, i, size);
#else
  static_cast<void>(dim), static_cast<void>(i), static_cast<void>(size);
#endif
}

/// The sizes and strides of a rank-N accessor or slice, carried by value so that a slice
/// kept from a temporary accessor (`auto row = v.accessor<float, 2>()[1];`) stays valid.
template <int N>
struct AccessorLayout {
  std::int64_t sizes[N > 0 ? static_cast<std::size_t>(N) : 1] = {};
  std::int64_t strides[N > 0 ? static_cast<std::size_t>(N) : 1] = {};
};

/// A rank-N slice of a TensorAccessor: what chained operator[] returns. It copies its
/// N sizes and strides (the compiler drops the copies in an indexing chain).
template <class T, int N>
class AccessorSlice {
 public:
  DLPACKPP_HOST_DEVICE AccessorSlice(T* data, const std::int64_t* sizes,
                                     const std::int64_t* strides, int first_dim) noexcept
      : data_(data), first_dim_(first_dim) {
    for (int d = 0; d < N; ++d) {
      layout_.sizes[d] = sizes[d];
      layout_.strides[d] = strides[d];
    }
  }

  /// Drops the leading dimension.
  DLPACKPP_HOST_DEVICE DLPACKPP_FORCE_INLINE decltype(auto) operator[](
      std::int64_t i) const noexcept {
    check_index(first_dim_, i, layout_.sizes[0]);
    if constexpr (N == 1) {
      return data_[i * layout_.strides[0]];
    } else {
      return AccessorSlice<T, N - 1>(data_ + i * layout_.strides[0], layout_.sizes + 1,
                                     layout_.strides + 1, first_dim_ + 1);
    }
  }
  /// Extent of dimension d of this slice.
  DLPACKPP_HOST_DEVICE constexpr std::int64_t size(int d) const noexcept {
    return layout_.sizes[d];
  }
  /// Stride (elements) of dimension d of this slice.
  DLPACKPP_HOST_DEVICE constexpr std::int64_t stride(int d) const noexcept {
    return layout_.strides[d];
  }
  /// The slice's first element.
  DLPACKPP_HOST_DEVICE constexpr T* data() const noexcept { return data_; }

 private:
  T* data_;
  AccessorLayout<N> layout_;
  int first_dim_;
};
}  // namespace detail

/// Typed, strided, rank-N access to a tensor's elements. Checks (dtype, rank, writability)
/// happened when TensorView::accessor<T, N>() made it, so indexing is bare arithmetic and the
/// accessor can be copied by value into a CUDA/HIP kernel. Indices are not bounds-checked
/// unless DLPACKPP_ACCESSOR_BOUNDS_CHECK is 1.
template <class T, int N>
class TensorAccessor {
  static_assert(N >= 0, "TensorAccessor rank must be >= 0");
  // Arrays cannot be empty, so a rank-0 accessor keeps one unused slot.
  static constexpr std::size_t slots = N > 0 ? static_cast<std::size_t>(N) : 1;

 public:
  /// Element type (const when the accessor is read-only).
  using element_type = T;
  /// The rank.
  static constexpr int rank = N;

  /// An accessor over nothing; index only one made by TensorView::accessor().
  constexpr TensorAccessor() noexcept = default;

  /// From a first-element pointer and N sizes and strides (in elements); the caller vouches
  /// for them. TensorView::accessor() is the checked way to make one.
  DLPACKPP_HOST_DEVICE TensorAccessor(T* data, const std::int64_t* sizes,
                                      const std::int64_t* strides) noexcept
      : data_(data) {
    for (int d = 0; d < N; ++d) {
      sizes_[d] = sizes[d];
      strides_[d] = strides[d];
    }
  }

  /// The element at (i0, ..., iN-1).
  template <class... I, std::enable_if_t<sizeof...(I) == N && detail::all_integral<I...>, int> = 0>
  DLPACKPP_HOST_DEVICE DLPACKPP_FORCE_INLINE T& operator()(I... index) const noexcept {
    const std::int64_t idx[slots] = {static_cast<std::int64_t>(index)...};
    std::int64_t offset = 0;
    for (int d = 0; d < N; ++d) {
      detail::check_index(d, idx[d], sizes_[d]);
      offset += idx[d] * strides_[d];
    }
    static_cast<void>(idx);
    return data_[offset];
  }

  /// Index the leading dimension: an element for N == 1, a rank N-1 slice otherwise.
  template <int M = N, std::enable_if_t<(M >= 1), int> = 0>
  DLPACKPP_HOST_DEVICE DLPACKPP_FORCE_INLINE decltype(auto) operator[](
      std::int64_t i) const noexcept {
    return detail::AccessorSlice<T, N>(data_, sizes_, strides_, 0)[i];
  }

  /// Extent of dimension d.
  DLPACKPP_HOST_DEVICE constexpr std::int64_t size(int d) const noexcept { return sizes_[d]; }
  /// Stride of dimension d, in elements (may be negative).
  DLPACKPP_HOST_DEVICE constexpr std::int64_t stride(int d) const noexcept { return strides_[d]; }
  /// The first element (data + byte_offset of the tensor).
  DLPACKPP_HOST_DEVICE constexpr T* data() const noexcept { return data_; }

 private:
  T* data_ = nullptr;
  std::int64_t sizes_[slots] = {};
  std::int64_t strides_[slots] = {};
};

DLPACKPP_END_NAMESPACE
