// SPDX-License-Identifier: Apache-2.0
/// @file
/// BasicManagedTensor: unique ownership of a DLManagedTensorVersioned or legacy
/// DLManagedTensor, with checked adoption (conversions between the two: conversions.hpp). Its
/// parts live in managed_tensor/: the adoption checks, the structs' traits and release, and the
/// stand-in for ManagedTensor where dlpack.h has no versioned struct.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/int_array.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/managed_tensor/adoption.hpp"
#include "dlpackpp/managed_tensor/traits.hpp"
#include "dlpackpp/managed_tensor/unavailable.hpp"
#include "dlpackpp/tensor_view.hpp"
#include "dlpackpp/validate.hpp"

#include <cstdint>
#include <iosfwd>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

template <class DLManaged>
struct AdoptedTensor;
template <class DLManaged, class T, int N>
struct AdoptedAccessor;

/// Unique ownership of a DLPack managed tensor (`DLManagedTensorVersioned` or the legacy
/// `DLManagedTensor`): one pointer, move-only, the producer's deleter called exactly once
/// (never when it is NULL) on destruction or reset().
template <class DLManaged>
class BasicManagedTensor {
  using traits = detail::managed_traits<DLManaged>;
  using adoption = detail::Adoption<DLManaged>;

 public:
  /// The C struct this handle owns.
  using managed_type = DLManaged;
  /// True for DLManagedTensorVersioned.
  static constexpr bool is_versioned = traits::versioned;

  /// An empty handle.
  constexpr BasicManagedTensor() noexcept = default;

  /// Adopts `p` after checking it (see adopt); NULL makes an empty handle. On failure the
  /// tensor has been handed back to its producer and Error is thrown.
  explicit BasicManagedTensor(DLManaged* p) : ptr_(p == nullptr ? nullptr : adopt(p).release()) {}

  BasicManagedTensor(const BasicManagedTensor&) = delete;
  BasicManagedTensor& operator=(const BasicManagedTensor&) = delete;
  /// Takes `other`'s tensor, leaving it empty.
  BasicManagedTensor(BasicManagedTensor&& other) noexcept : ptr_(other.ptr_) {
    other.ptr_ = nullptr;
  }
  /// Releases the current tensor and takes `other`'s, leaving it empty. Self-move is a no-op.
  BasicManagedTensor& operator=(BasicManagedTensor&& other) noexcept {
    if (this != &other) {
      DLManaged* outgoing = ptr_;
      ptr_ = other.ptr_;
      other.ptr_ = nullptr;
      detail::release_to_producer(outgoing);
    }
    return *this;
  }
  /// Hands the tensor back to its producer.
  ~BasicManagedTensor() { detail::release_to_producer(ptr_); }

  /// Takes ownership of `p` and checks it. A versioned tensor whose major version differs
  /// from the header's is released without reading past `flags` (Errc::version_mismatch);
  /// a newer minor is accepted. A malformed tensor is released and its validation error
  /// returned. NULL is Errc::null_pointer. Never throws a validation error.
  DLPACKPP_FORCE_INLINE static Result<BasicManagedTensor> try_adopt(
      DLManaged* p, const ValidateOptions& options = {}) {
    detail::TensorFacts facts;
    if (DLPACKPP_UNLIKELY(!adoption::accepts(p, options, facts))) {
      return adoption::adopt_slowly(p, options, facts);
    }
    return Result<BasicManagedTensor>(adopt_unchecked(p));
  }
  /// As try_adopt, throwing the Error (after the tensor has been released).
  DLPACKPP_FORCE_INLINE static BasicManagedTensor adopt(DLManaged* p,
                                                        const ValidateOptions& options = {}) {
    detail::TensorFacts facts;
    if (DLPACKPP_UNLIKELY(!adoption::accepts(p, options, facts))) {
      return adoption::adopt_slowly(p, options, facts).value();
    }
    return adopt_unchecked(p);
  }

  /// Adopts `p` as adopt() does and, from the same validation pass, a view of it that keeps
  /// what validation learned (element count, layout, flags): `auto [t, v] = adopt_with_view(p);`.
  /// The view reads the tensor in place and stays valid while `t`, or whatever `t` is moved
  /// into, owns it. Failures release the tensor and report exactly as adopt() does.
  DLPACKPP_FORCE_INLINE static AdoptedTensor<DLManaged> adopt_with_view(
      DLManaged* p, const ValidateOptions& options = {}) {
    detail::TensorFacts facts;
    if (DLPACKPP_UNLIKELY(!adoption::accepts(p, options, facts))) {
      BasicManagedTensor owned = adoption::adopt_slowly(p, options, facts).value();
      return with_view(std::move(owned), facts);
    }
    return with_view(adopt_unchecked(p), facts);
  }
  /// The typed one-pass consume: adopts `p` as adopt() does and, in the same pass, checks
  /// what accessor<T, N>() checks (dtype_of<T>, rank N, writability for a non-const T,
  /// alignment, addressable elements), returning the handle and the accessor. Nothing is
  /// checked twice: the dtype and rank tests stand in for the generic ones. Any failure
  /// releases the tensor once and reports adopt()'s error, or else the accessor's.
  template <class T, int N>
  DLPACKPP_FORCE_INLINE static AdoptedAccessor<DLManaged, T, N> adopt_as(
      DLManaged* p, const ValidateOptions& options = {}) {
    if (DLPACKPP_UNLIKELY(!(adoption::template accepts_as<T, N>(p, options)))) {
      return adoption::template adopt_as_slowly<T, N>(p, options).value();
    }
    return {adopt_unchecked(p), adoption::template typed_accessor<T, N>(p->dl_tensor)};
  }
  /// Non-throwing adopt_as().
  template <class T, int N>
  DLPACKPP_FORCE_INLINE static Result<AdoptedAccessor<DLManaged, T, N>> try_adopt_as(
      DLManaged* p, const ValidateOptions& options = {}) {
    if (DLPACKPP_UNLIKELY(!(adoption::template accepts_as<T, N>(p, options)))) {
      return adoption::template adopt_as_slowly<T, N>(p, options);
    }
    return AdoptedAccessor<DLManaged, T, N>{adopt_unchecked(p),
                                            adoption::template typed_accessor<T, N>(p->dl_tensor)};
  }

  /// Non-throwing adopt_with_view().
  DLPACKPP_FORCE_INLINE static Result<AdoptedTensor<DLManaged>> try_adopt_with_view(
      DLManaged* p, const ValidateOptions& options = {}) {
    detail::TensorFacts facts;
    if (DLPACKPP_UNLIKELY(!adoption::accepts(p, options, facts))) {
      Result<BasicManagedTensor> owned = adoption::adopt_slowly(p, options, facts);
      if (!owned) return owned.error();
      return with_view(*std::move(owned), facts);
    }
    // Built inside the Result: the pair (a view among it) is never moved into it.
    return Result<AdoptedTensor<DLManaged>>(detail::BuildWith{},
                                            [&] { return with_view(adopt_unchecked(p), facts); });
  }
  /// Takes ownership of `p` without any check, for producers the caller trusts.
  static BasicManagedTensor adopt_unchecked(DLManaged* p) noexcept {
    BasicManagedTensor t;
    t.ptr_ = p;
    return t;
  }

  /// The owned struct (NULL when empty); ownership stays here.
  DLManaged* get() const noexcept { return ptr_; }
  /// Gives up ownership, e.g. to return the tensor to a framework; the handle is left empty.
  [[nodiscard]] DLManaged* release() noexcept {
    DLManaged* p = ptr_;
    ptr_ = nullptr;
    return p;
  }
  /// Hands the tensor back to its producer now; the handle is left empty.
  void reset() noexcept { detail::release_to_producer(release()); }
  /// Exchanges tensors with `other`.
  void swap(BasicManagedTensor& other) noexcept { std::swap(ptr_, other.ptr_); }
  /// Exchanges tensors.
  friend void swap(BasicManagedTensor& a, BasicManagedTensor& b) noexcept { a.swap(b); }
  /// True when a tensor is owned.
  explicit operator bool() const noexcept { return ptr_ != nullptr; }

  /// A view of the tensor carrying its flags (so READ_ONLY guards every mutable path); valid
  /// while this handle owns the tensor. Raw access without the flags goes through get().
  TensorView view() const& DLPACKPP_LIFETIMEBOUND {
    return TensorView::of_managed(tensor(), flags());
  }
  /// Deleted: the view would outlive the temporary's tensor (its deleter runs first).
  TensorView view() const&& = delete;

  /// Number of dimensions.
  int ndim() const noexcept { return static_cast<int>(tensor().ndim); }
  /// The extents, straight from the producer; valid while this handle owns the tensor.
  IntSpan shape() const& noexcept DLPACKPP_LIFETIMEBOUND {
    return {tensor().shape, static_cast<std::size_t>(tensor().ndim)};
  }
  /// Deleted: the extents die with the temporary's tensor.
  IntSpan shape() const&& = delete;
  /// The strides by value (derived compact ones when the producer sent NULL).
  Strides strides() const { return Strides(view().strides()); }
  /// Element type.
  DataType dtype() const noexcept { return tensor().dtype; }
  /// Where the memory lives.
  Device device() const noexcept { return tensor().device; }
  /// Number of elements.
  std::int64_t numel() const noexcept {
    return detail::numel_unchecked(tensor().shape, static_cast<int>(tensor().ndim));
  }
  /// Bytes of the elements (packed or padded sub-byte aware).
  std::int64_t nbytes() const noexcept {
    return detail::nbytes_of_valid(dtype(), numel(), flags());
  }
  /// Offset of the first element from the data pointer.
  std::uint64_t byte_offset() const noexcept { return tensor().byte_offset; }
  /// The first element (data + byte_offset), for reading.
  const void* const_data() const& noexcept DLPACKPP_LIFETIMEBOUND { return view().const_data(); }
  /// Deleted: the memory dies with the temporary.
  const void* const_data() const&& = delete;
  /// The first element for writing; Errc::read_only on a READ_ONLY tensor.
  void* data() const& DLPACKPP_LIFETIMEBOUND { return view().data(); }
  /// Deleted: the memory dies with the temporary.
  void* data() const&& = delete;
  /// The first element as T*, checked as TensorView::data<T>() checks it.
  template <class T>
  T* data() const& DLPACKPP_LIFETIMEBOUND {
    return view().template data<T>();
  }
  /// Deleted: the memory dies with the temporary.
  template <class T>
  T* data() const&& = delete;

  /// Typed, rank-N access straight from the owned tensor, skipping the view: the fast path
  /// for consumers that know T and N at compile time (the rank loop unrolls). Checks exactly
  /// what TensorView::accessor<T, N>() checks, with the same errors.
  template <class T, int N>
  Result<TensorAccessor<T, N>> try_accessor() const& DLPACKPP_LIFETIMEBOUND {
    if (DLPACKPP_UNLIKELY(!(typed_access_ok<T, N>()))) {
      return detail::accessor_error<T, N>(tensor(), flags());
    }
    return typed_accessor<T, N>();
  }
  /// Deleted: the accessor would outlive the temporary's tensor.
  template <class T, int N>
  Result<TensorAccessor<T, N>> try_accessor() const&& = delete;
  /// As try_accessor(), throwing on failure.
  template <class T, int N>
  TensorAccessor<T, N> accessor() const& DLPACKPP_LIFETIMEBOUND {
    if (DLPACKPP_UNLIKELY(!(typed_access_ok<T, N>()))) {
      throw_error(detail::accessor_error<T, N>(tensor(), flags()));
    }
    return typed_accessor<T, N>();
  }
  /// Deleted: the accessor would outlive the temporary's tensor.
  template <class T, int N>
  TensorAccessor<T, N> accessor() const&& = delete;

#if DLPACKPP_HAS_VERSIONED
  /// The producer's DLPack version ({0, 0} for a legacy tensor, which carries none).
  DLPackVersion version() const noexcept {
    if constexpr (is_versioned) {
      return checked()->version;
    } else {
      return DLPackVersion{0, 0};
    }
  }
#endif
  /// All flag bits, unknown ones included (0 for a legacy tensor).
  std::uint64_t flags() const noexcept { return adoption::flags_of(checked()); }
  /// READ_ONLY: writes through this tensor are refused.
  bool read_only() const noexcept { return (flags() & flag::read_only) != 0; }
  /// IS_COPIED: the producer made a copy the consumer may treat as its own.
  bool is_copied() const noexcept { return (flags() & flag::is_copied) != 0; }
  /// IS_SUBBYTE_TYPE_PADDED: sub-byte elements take a byte each.
  bool is_subbyte_padded() const noexcept { return (flags() & flag::is_subbyte_type_padded) != 0; }

 private:
  DLManaged* checked() const noexcept {
    DLPACKPP_ASSERT(ptr_ != nullptr, "empty BasicManagedTensor dereferenced");
    return ptr_;
  }
  const DLTensor& tensor() const noexcept { return checked()->dl_tensor; }

  // The typed rules and accessor for the owned tensor (adoption has them for one to adopt).
  template <class T, int N>
  DLPACKPP_FORCE_INLINE bool typed_access_ok() const noexcept {
    const DLTensor& t = tensor();
    return adoption::template typed_access_ok<T, N>(checked()) &&
           detail::one_address_each<T>(false, t.shape, t.strides, N);
  }
  template <class T, int N>
  DLPACKPP_FORCE_INLINE TensorAccessor<T, N> typed_accessor() const noexcept {
    return adoption::template typed_accessor<T, N>(tensor());
  }

  // The handle and its view, sharing what validation learned.
  DLPACKPP_FORCE_INLINE static AdoptedTensor<DLManaged> with_view(
      BasicManagedTensor&& owned, const detail::TensorFacts& facts) noexcept {
    const DLManaged* p = owned.ptr_;
    return AdoptedTensor<DLManaged>{
        std::move(owned), TensorView::of_managed(p->dl_tensor, adoption::flags_of(p), facts)};
  }

  DLManaged* ptr_ = nullptr;
};

/// What adopt_with_view() returns, for structured bindings: the owning handle and a view made
/// by the same validation pass. The view reads the tensor in place (not the handle), so it stays
/// valid while `tensor`, or whatever it is moved into, owns the tensor.
template <class DLManaged>
struct AdoptedTensor {
  /// Owns the tensor.
  BasicManagedTensor<DLManaged> tensor;
  /// Views it, with the element count and layout validation found.
  TensorView view;
};

/// What adopt_as<T, N>() returns, for structured bindings: the owning handle and a typed
/// accessor checked in the same pass. The accessor points into the tensor (its sizes and
/// strides are copies), so it stays valid while `tensor`, or whatever it is moved into, owns
/// the tensor.
template <class DLManaged, class T, int N>
struct AdoptedAccessor {
  /// Owns the tensor.
  BasicManagedTensor<DLManaged> tensor;
  /// Reads (or, for a non-const T, writes) its elements.
  TensorAccessor<T, N> accessor;
};

/// Owner of a legacy `DLManagedTensor` (DLPack < 1.0 exchange).
using LegacyManagedTensor = BasicManagedTensor<DLManagedTensor>;
#if DLPACKPP_HAS_VERSIONED
/// Owner of a `DLManagedTensorVersioned` (the DLPack >= 1.0 exchange struct).
using ManagedTensor = BasicManagedTensor<DLManagedTensorVersioned>;
/// The handle factories return unless told otherwise: versioned where the header has it.
using DefaultManagedTensor = ManagedTensor;
#else
/// Not available with this dlpack.h: using it is a compile error that says why.
using ManagedTensor = detail::ManagedTensorUnavailable<>;
/// The handle factories return unless told otherwise: legacy, as the header has nothing else.
using DefaultManagedTensor = LegacyManagedTensor;
#endif

DLPACKPP_END_NAMESPACE
