// SPDX-License-Identifier: Apache-2.0
/// @file
/// ViewArrays: where a TensorView's shape and strides live, so the view itself reads as its
/// public contract.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/layout.hpp"
#include "dlpackpp/detail/shared_array.hpp"

#include <cstddef>
#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// A view's shape and strides: the producer's arrays where it sent them, otherwise values
/// kept inline (compact strides for NULL, copies for raw-parts views), or on a shared heap
/// block above DLPACKPP_VIEW_INLINE_NDIM. A NULL pointer means "inline", so the object never
/// points into itself and plain copies stay valid.
class ViewArrays {
  static constexpr int inline_ndim = DLPACKPP_VIEW_INLINE_NDIM;

 public:
  /// Borrows the producer's arrays; NULL strides become compact row-major strides, which
  /// allocate only above DLPACKPP_VIEW_INLINE_NDIM dimensions.
  void borrow(const std::int64_t* shape, const std::int64_t* strides, int ndim) {
    shape_ = shape;
    strides_ = strides;
    if (strides == nullptr && ndim > 0) {
      if (DLPACKPP_UNLIKELY(ndim > inline_ndim)) {
        copy_to_heap(shape, nullptr, ndim);
        shape_ = shape;
      } else {
        write_compact_strides(shape, ndim, inline_ + inline_ndim);
      }
    }
  }

  /// Keeps copies of both arrays, so nothing the caller passed needs to outlive the view.
  void copy(const std::int64_t* shape, const std::int64_t* strides, int ndim) {
    if (ndim > inline_ndim) {
      copy_to_heap(shape, strides, ndim);
      return;
    }
    for (int d = 0; d < ndim; ++d) {
      inline_[d] = shape[d];
      inline_[inline_ndim + d] = strides[d];
    }
    shape_ = nullptr;
    strides_ = nullptr;
    heap_ = SharedArray<std::int64_t>();
  }

  /// ndim extents.
  const std::int64_t* shape() const noexcept { return shape_ != nullptr ? shape_ : inline_; }
  /// ndim strides, never NULL for ndim > 0.
  const std::int64_t* strides() const noexcept {
    return strides_ != nullptr ? strides_ : inline_ + inline_ndim;
  }

 private:
  // Rare (ranks above the inline capacity), so it stays out of the inlined path. NULL
  // `strides` means compact.
  DLPACKPP_COLD void copy_to_heap(const std::int64_t* shape, const std::int64_t* strides,
                                  int ndim) {
    const auto n = static_cast<std::size_t>(ndim);
    SharedArray<std::int64_t> arrays(2 * n);
    std::int64_t* out = arrays.data();
    for (std::size_t d = 0; d < n; ++d) out[d] = shape[d];
    if (strides == nullptr) {
      write_compact_strides(shape, ndim, out + n);
    } else {
      for (std::size_t d = 0; d < n; ++d) out[n + d] = strides[d];
    }
    shape_ = out;
    strides_ = out + n;
    heap_ = static_cast<SharedArray<std::int64_t>&&>(arrays);
  }

  const std::int64_t* shape_ = nullptr;
  const std::int64_t* strides_ = nullptr;
  SharedArray<std::int64_t> heap_;
  // Written before it is read, never zero-filled: views are made on hot paths.
  std::int64_t inline_[2 * inline_ndim];
};

}  // namespace detail
DLPACKPP_END_NAMESPACE
