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

/// Where a view reads its tensor: the producer's own DLTensor when that outlives the view
/// (a managed tensor's), otherwise a copy kept here, so a view of a temporary DLTensor stays
/// valid. Values the view must keep itself (compact strides for NULL, copies for a view of
/// raw parts) live inline up to DLPACKPP_VIEW_INLINE_NDIM dimensions, above it on a shared
/// heap block. Copying re-points whatever pointed into the source at this storage; copying a
/// view of a managed tensor (nothing kept) is three words and one test.
class ViewStorage {
  static constexpr int inline_ndim = DLPACKPP_VIEW_INLINE_NDIM;
  // What this storage keeps itself (bits of kept_): a copy of the tensor (tensor_ is &own_),
  // the shape inline (own_.shape is inline_), the strides inline (strides_ is inline_ +
  // inline_ndim), a heap block. A view of a managed tensor's DLTensor keeps none of them,
  // so copying it is three words and one test.
  enum : unsigned { kept_tensor = 1u, kept_shape = 2u, kept_strides = 4u, kept_heap = 8u };

 public:
  /// An empty storage, filled by view_in_place() or view_copy_of().
  ViewStorage() noexcept = default;
  /// Copies `other`, re-pointing what pointed into it.
  DLPACKPP_FORCE_INLINE ViewStorage(const ViewStorage& other) noexcept { copy_from(other); }
  /// As the copy (a heap block, rare, is shared rather than taken).
  DLPACKPP_FORCE_INLINE ViewStorage(ViewStorage&& other) noexcept { copy_from(other); }
  /// Copies `other`, re-pointing what pointed into it.
  ViewStorage& operator=(const ViewStorage& other) noexcept {
    if (this != &other) {
      heap_ = SharedArray<std::int64_t>();
      copy_from(other);
    }
    return *this;
  }
  /// As the copy assignment.
  ViewStorage& operator=(ViewStorage&& other) noexcept {
    return *this = static_cast<const ViewStorage&>(other);
  }
  ~ViewStorage() = default;

  /// Views `t` in place: it must outlive this storage. NULL strides become compact row-major
  /// strides, kept inline (no allocation) up to DLPACKPP_VIEW_INLINE_NDIM dimensions.
  DLPACKPP_FORCE_INLINE void view_in_place(const DLTensor& t) {
    tensor_ = &t;
    strides_ = t.strides;
    if (t.strides == nullptr && t.ndim > 0) {
      if (DLPACKPP_UNLIKELY(t.ndim > inline_ndim)) {
        compact_strides_to_heap();
      } else {
        write_compact_strides(t.shape, static_cast<int>(t.ndim), inline_ + inline_ndim);
        strides_ = inline_ + inline_ndim;
        kept_ |= kept_strides;
      }
    }
  }
  /// Views a copy of `t` (its arrays must outlive this storage; `t` itself need not).
  DLPACKPP_FORCE_INLINE void view_copy_of(const DLTensor& t) {
    own_ = t;
    kept_ = kept_tensor;
    view_in_place(own_);
  }

  /// Keeps a copy of the viewed DLTensor, so that a storage made by view_in_place() no longer
  /// needs it; the arrays are still read where they are.
  void keep_tensor() noexcept {
    if ((kept_ & kept_tensor) != 0) return;
    own_ = *tensor_;
    tensor_ = &own_;
    kept_ |= kept_tensor;
  }

  /// Keeps copies of both arrays (strides normalized already), so nothing the caller passed
  /// needs to outlive the view.
  void copy_arrays() {
    own_ = *tensor_;
    tensor_ = &own_;
    kept_ = (kept_ & kept_heap) | kept_tensor;
    const int ndim = static_cast<int>(own_.ndim);
    if (ndim == 0) return;
    const std::int64_t* shape = own_.shape;
    const std::int64_t* strides = strides_;  // may live in heap_ or inline_: read first
    SharedArray<std::int64_t> heap;
    std::int64_t* out = inline_;
    std::size_t capacity = inline_ndim;
    if (ndim > inline_ndim) {
      capacity = static_cast<std::size_t>(ndim);
      heap = SharedArray<std::int64_t>(2 * capacity);
      out = heap.data();
      kept_ |= kept_heap;
    } else {
      kept_ |= kept_shape | kept_strides;
    }
    // Strides first: inline strides are moved to where they already are.
    for (int d = 0; d < ndim; ++d) out[capacity + static_cast<std::size_t>(d)] = strides[d];
    for (int d = 0; d < ndim; ++d) out[d] = shape[d];
    own_.shape = out;
    own_.strides = nullptr;  // strides() has them; nothing here points at another view's copy
    strides_ = out + capacity;
    if (ndim > inline_ndim) heap_ = static_cast<SharedArray<std::int64_t>&&>(heap);
  }

  /// The viewed tensor; its strides may be NULL (strides() has the normalized ones).
  const DLTensor& tensor() const noexcept { return *tensor_; }
  /// ndim extents.
  const std::int64_t* shape() const noexcept { return tensor_->shape; }
  /// ndim strides, never NULL for ndim > 0.
  const std::int64_t* strides() const noexcept { return strides_; }

 private:
  // Copies `other`'s pointers; only what it keeps itself needs more (take_kept).
  DLPACKPP_FORCE_INLINE void copy_from(const ViewStorage& other) noexcept {
    tensor_ = other.tensor_;
    strides_ = other.strides_;
    kept_ = other.kept_;
    if (DLPACKPP_UNLIKELY(kept_ != 0)) take_kept(other);
  }
  // Copies what `other` keeps itself, re-pointed here; a heap block is shared.
  void take_kept(const ViewStorage& other) noexcept {
    const auto ndim = static_cast<std::size_t>(other.tensor_->ndim);
    if ((kept_ & kept_heap) != 0) heap_ = other.heap_;
    if ((kept_ & kept_tensor) != 0) {
      own_ = other.own_;
      tensor_ = &own_;
      if ((kept_ & kept_shape) != 0) {
        for (std::size_t d = 0; d < ndim; ++d) inline_[d] = other.inline_[d];
        own_.shape = inline_;
      }
    }
    if ((kept_ & kept_strides) != 0) {
      for (std::size_t d = 0; d < ndim; ++d) {
        inline_[inline_ndim + d] = other.inline_[inline_ndim + d];
      }
      strides_ = inline_ + inline_ndim;
    }
  }

  // Rare (ranks above the inline capacity), so it stays out of the inlined path.
  DLPACKPP_COLD void compact_strides_to_heap() {
    const auto ndim = static_cast<std::size_t>(tensor_->ndim);
    SharedArray<std::int64_t> strides(ndim);
    write_compact_strides(tensor_->shape, static_cast<int>(ndim), strides.data());
    strides_ = strides.data();
    heap_ = static_cast<SharedArray<std::int64_t>&&>(strides);
    kept_ |= kept_heap;
  }

  const DLTensor* tensor_;
  const std::int64_t* strides_;
  unsigned kept_ = 0;
  DLTensor own_;  // the viewed tensor when tensor_ points here; unread otherwise
  SharedArray<std::int64_t> heap_;
  // Written before it is read, never zero-filled: views are made on hot paths.
  std::int64_t inline_[2 * inline_ndim];
};

}  // namespace detail
DLPACKPP_END_NAMESPACE
