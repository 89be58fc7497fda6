// SPDX-License-Identifier: Apache-2.0
/// @file
/// ViewStorage: what a TensorView holds (the viewed DLTensor and room for the shape and
/// strides it must keep itself), so the view class reads as its public contract.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/layout.hpp"
#include "dlpackpp/detail/shared_array.hpp"
#include "dlpackpp/dlpack.hpp"

#include <cstddef>
#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// A copy of the viewed DLTensor whose shape and strides point at the producer's arrays
/// where it sent them. Values the view must keep itself (compact strides for NULL, copies
/// for a view of raw parts) live inline up to DLPACKPP_VIEW_INLINE_NDIM dimensions, above it
/// on a shared heap block. The copy's pointers are always the ones to read, so the hot
/// accessors need no branch; copying re-points those that point inline at the copy's own
/// inline values.
class ViewStorage {
  static constexpr int inline_ndim = DLPACKPP_VIEW_INLINE_NDIM;

 public:
  /// An empty storage, filled by borrow().
  ViewStorage() noexcept = default;
  /// Copies `other`, its inline values included.
  ViewStorage(const ViewStorage& other) noexcept : tensor_(other.tensor_), heap_(other.heap_) {
    take_inline(other);
  }
  /// As the copy, taking the heap block instead of sharing it.
  ViewStorage(ViewStorage&& other) noexcept
      : tensor_(other.tensor_), heap_(static_cast<SharedArray<std::int64_t>&&>(other.heap_)) {
    take_inline(other);
  }
  /// Copies `other`, its inline values included.
  ViewStorage& operator=(const ViewStorage& other) noexcept {
    if (this != &other) {
      tensor_ = other.tensor_;
      heap_ = other.heap_;
      take_inline(other);
    }
    return *this;
  }
  /// As the copy assignment, taking the heap block instead of sharing it.
  ViewStorage& operator=(ViewStorage&& other) noexcept {
    if (this != &other) {
      tensor_ = other.tensor_;
      heap_ = static_cast<SharedArray<std::int64_t>&&>(other.heap_);
      take_inline(other);
    }
    return *this;
  }
  ~ViewStorage() = default;

  /// Views `t`'s own arrays; NULL strides become compact row-major strides, kept inline (no
  /// allocation) up to DLPACKPP_VIEW_INLINE_NDIM dimensions.
  DLPACKPP_FORCE_INLINE void borrow(const DLTensor& t) {
    tensor_ = t;
    if (t.strides == nullptr && t.ndim > 0) {
      if (DLPACKPP_UNLIKELY(t.ndim > inline_ndim)) {
        compact_strides_to_heap();
      } else {
        write_compact_strides(t.shape, static_cast<int>(t.ndim), inline_strides());
        tensor_.strides = inline_strides();
      }
    }
  }

  /// Keeps copies of both arrays (strides normalized already), so nothing the caller passed
  /// needs to outlive the view.
  void copy_arrays() {
    const int ndim = static_cast<int>(tensor_.ndim);
    if (ndim == 0) return;
    const std::int64_t* shape = tensor_.shape;
    const std::int64_t* strides = tensor_.strides;  // may live in heap_ or inline_: read first
    SharedArray<std::int64_t> heap;
    std::int64_t* out = inline_;
    std::size_t capacity = inline_ndim;
    if (ndim > inline_ndim) {
      capacity = static_cast<std::size_t>(ndim);
      heap = SharedArray<std::int64_t>(2 * capacity);
      out = heap.data();
    }
    // Strides first: inline strides are moved to where they already are.
    for (int d = 0; d < ndim; ++d) out[capacity + static_cast<std::size_t>(d)] = strides[d];
    for (int d = 0; d < ndim; ++d) out[d] = shape[d];
    tensor_.shape = out;
    tensor_.strides = out + capacity;
    heap_ = static_cast<SharedArray<std::int64_t>&&>(heap);
  }

  /// The viewed tensor as copied; for ndim > 0 its shape and strides are never NULL.
  const DLTensor& tensor() const noexcept { return tensor_; }
  /// ndim extents.
  const std::int64_t* shape() const noexcept { return tensor_.shape; }
  /// ndim strides, never NULL for ndim > 0.
  const std::int64_t* strides() const noexcept { return tensor_.strides; }

 private:
  std::int64_t* inline_strides() noexcept { return inline_ + inline_ndim; }

  // Re-points what pointed at `other`'s inline values at copies of them here.
  void take_inline(const ViewStorage& other) noexcept {
    const auto ndim = static_cast<std::size_t>(tensor_.ndim);
    if (other.tensor_.shape == other.inline_) {
      for (std::size_t d = 0; d < ndim; ++d) inline_[d] = other.inline_[d];
      tensor_.shape = inline_;
    }
    if (other.tensor_.strides == other.inline_ + inline_ndim) {
      for (std::size_t d = 0; d < ndim; ++d)
        inline_[inline_ndim + d] = other.inline_[inline_ndim + d];
      tensor_.strides = inline_strides();
    }
  }

  // Rare (ranks above the inline capacity), so it stays out of the inlined path.
  DLPACKPP_COLD void compact_strides_to_heap() {
    const auto ndim = static_cast<std::size_t>(tensor_.ndim);
    SharedArray<std::int64_t> strides(ndim);
    write_compact_strides(tensor_.shape, static_cast<int>(ndim), strides.data());
    tensor_.strides = strides.data();
    heap_ = static_cast<SharedArray<std::int64_t>&&>(strides);
  }

  DLTensor tensor_;
  SharedArray<std::int64_t> heap_;
  // Written before it is read, never zero-filled: views are made on hot paths.
  std::int64_t inline_[2 * inline_ndim];
};

}  // namespace detail
DLPACKPP_END_NAMESPACE
