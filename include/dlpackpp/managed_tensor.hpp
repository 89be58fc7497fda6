// SPDX-License-Identifier: Apache-2.0
/// @file
/// BasicManagedTensor: unique ownership of a DLManagedTensorVersioned or legacy
/// DLManagedTensor, with checked adoption (conversions between the two: conversions.hpp).
///
/// Longer than the ~400 lines a header aims for because it is one class: its rules already
/// live in rules/ and its conversions in conversions.hpp, and what is left is the class body
/// (adoption, typed access, flags), which C++ cannot spread over several headers.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/int_array.hpp"
#include "dlpackpp/int_span.hpp"
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

namespace detail {
template <class M>
struct managed_traits;

template <>
struct managed_traits<DLManagedTensor> {
  static constexpr bool versioned = false;
  static constexpr const char* name = "DLManagedTensor";
};
#if DLPACKPP_HAS_VERSIONED
template <>
struct managed_traits<DLManagedTensorVersioned> {
  static constexpr bool versioned = true;
  static constexpr const char* name = "DLManagedTensorVersioned";
};
#endif

/// Errc::version_mismatch for a struct of another DLPack major: `field` names the
/// `version.major` that was read, `hint` is appended. One wording for tensors and tables.
DLPACKPP_COLD inline Error version_mismatch_error(const char* field, std::uint32_t major,
                                                  std::uint32_t minor, const char* hint = "") {
  return make_error(Errc::version_mismatch, field, " is ", major, " (version ", major, '.', minor,
                    "), this build reads DLPack major ", DLPACKPP_DLPACK_MAJOR, " only", hint);
}

/// Hands a tensor back to its producer: the deleter, when there is one, exactly once.
template <class M>
void release_to_producer(M* p) noexcept {
  if (p != nullptr && p->deleter != nullptr) p->deleter(p);
}
}  // namespace detail

/// Unique ownership of a DLPack managed tensor (`DLManagedTensorVersioned` or the legacy
/// `DLManagedTensor`): one pointer, move-only, the producer's deleter called exactly once
/// (never when it is NULL) on destruction or reset().
template <class DLManaged>
class BasicManagedTensor {
  using traits = detail::managed_traits<DLManaged>;

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
    if (DLPACKPP_UNLIKELY(!accepts(p, options, facts))) return adopt_slowly(p, options, facts);
    return Result<BasicManagedTensor>(adopt_unchecked(p));
  }
  /// As try_adopt, throwing the Error (after the tensor has been released).
  DLPACKPP_FORCE_INLINE static BasicManagedTensor adopt(DLManaged* p,
                                                        const ValidateOptions& options = {}) {
    detail::TensorFacts facts;
    if (DLPACKPP_UNLIKELY(!accepts(p, options, facts))) {
      return adopt_slowly(p, options, facts).value();
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
    if (DLPACKPP_UNLIKELY(!accepts(p, options, facts))) {
      BasicManagedTensor owned = adopt_slowly(p, options, facts).value();
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
    if (DLPACKPP_UNLIKELY(!(accepts_as<T, N>(p, options)))) {
      return adopt_as_slowly<T, N>(p, options).value();
    }
    return {adopt_unchecked(p), typed_accessor<T, N>(p->dl_tensor)};
  }
  /// Non-throwing adopt_as().
  template <class T, int N>
  DLPACKPP_FORCE_INLINE static Result<AdoptedAccessor<DLManaged, T, N>> try_adopt_as(
      DLManaged* p, const ValidateOptions& options = {}) {
    if (DLPACKPP_UNLIKELY(!(accepts_as<T, N>(p, options)))) {
      return adopt_as_slowly<T, N>(p, options);
    }
    return AdoptedAccessor<DLManaged, T, N>{adopt_unchecked(p), typed_accessor<T, N>(p->dl_tensor)};
  }

  /// Non-throwing adopt_with_view().
  DLPACKPP_FORCE_INLINE static Result<AdoptedTensor<DLManaged>> try_adopt_with_view(
      DLManaged* p, const ValidateOptions& options = {}) {
    detail::TensorFacts facts;
    if (DLPACKPP_UNLIKELY(!accepts(p, options, facts))) {
      Result<BasicManagedTensor> owned = adopt_slowly(p, options, facts);
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
  std::uint64_t flags() const noexcept { return flags_of(checked()); }
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

  template <class T, int N>
  DLPACKPP_FORCE_INLINE bool typed_access_ok() const noexcept {
    const DLTensor& t = tensor();
    return typed_access_ok<T, N>(checked()) &&
           detail::one_address_each<T>(false, t.shape, t.strides, N);
  }
  template <class T, int N>
  DLPACKPP_FORCE_INLINE TensorAccessor<T, N> typed_accessor() const noexcept {
    return typed_accessor<T, N>(tensor());
  }
  // The accessor of a tensor typed_access_ok() accepted; NULL strides become compact ones,
  // computed on the stack for the accessor to copy.
  template <class T, int N>
  DLPACKPP_FORCE_INLINE static TensorAccessor<T, N> typed_accessor(const DLTensor& t) noexcept {
    auto* first = static_cast<T*>(detail::first_element(t));
    if (t.strides != nullptr) return TensorAccessor<T, N>(first, t.shape, t.strides);
    std::int64_t compact[N > 0 ? static_cast<std::size_t>(N) : 1];
    detail::write_compact_strides(t.shape, N, compact);
    return TensorAccessor<T, N>(first, t.shape, compact);
  }

  // typed_access_ok() for a tensor `p` that has not been adopted yet.
  template <class T, int N>
  DLPACKPP_FORCE_INLINE static bool typed_access_ok(const DLManaged* p) noexcept {
    const DLTensor& t = p->dl_tensor;
    return detail::accessor_ok<T, N>(t.dtype, flags_of(p), static_cast<int>(t.ndim),
                                     detail::first_element(t));
  }

  // adopt_as()'s one pass: the version (nothing past `flags` is read before it), then the
  // typed rules (dtype_of<T> and rank N stand in for the generic dtype and rank tests, which
  // then fold away), then the tensor's.
  template <class T, int N>
  DLPACKPP_FORCE_INLINE static bool accepts_as(const DLManaged* p,
                                               const ValidateOptions& options) noexcept {
    if (p == nullptr) return false;
    if constexpr (is_versioned) {
      if (p->version.major != DLPACKPP_DLPACK_MAJOR) return false;
    }
    detail::TensorFacts facts;  // a contiguous tensor needs no look for a stride of 0
    const DLTensor& t = p->dl_tensor;
    return typed_access_ok<T, N>(p) && accepts(p, options, facts) &&
           detail::one_address_each<T>(facts.contiguous, t.shape, t.strides, N);
  }

  // The common case inline and message-free: a tensor of this major that the one-pass check
  // accepts, filling `facts`. Everything else, valid or not, takes adopt_slowly().
  DLPACKPP_FORCE_INLINE static bool accepts(const DLManaged* p, const ValidateOptions& options,
                                            detail::TensorFacts& facts) noexcept {
    if (p == nullptr) return false;
    if constexpr (is_versioned) {
      if (p->version.major != DLPACKPP_DLPACK_MAJOR) return false;
      ValidateOptions with_flags = options;
      with_flags.flags = p->flags;
      return detail::quick_accept(p->dl_tensor, with_flags, facts);
    } else {
      return detail::quick_accept(p->dl_tensor, options, facts);
    }
  }

  // The handle and its view, sharing what validation learned.
  DLPACKPP_FORCE_INLINE static AdoptedTensor<DLManaged> with_view(
      BasicManagedTensor&& owned, const detail::TensorFacts& facts) noexcept {
    const DLManaged* p = owned.ptr_;
    return AdoptedTensor<DLManaged>{std::move(owned),
                                    TensorView::of_managed(p->dl_tensor, flags_of(p), facts)};
  }
  static std::uint64_t flags_of(const DLManaged* p) noexcept {
    if constexpr (is_versioned) {
      return p->flags;
    } else {
      static_cast<void>(p);
      return 0;
    }
  }

  // The whole catalogue, reporting the first problem and filling `facts` for a tensor it
  // accepts; releases a refused tensor.
  DLPACKPP_COLD static Result<BasicManagedTensor> adopt_slowly(DLManaged* p,
                                                               ValidateOptions options,
                                                               detail::TensorFacts& facts) {
    if (p == nullptr)
      return detail::make_error(Errc::null_pointer, traits::name, " pointer is NULL");
    BasicManagedTensor owned = adopt_unchecked(p);  // released on every early return
    if constexpr (is_versioned) {
      // Only version, manager_ctx, deleter and flags are ABI-stable across majors.
      if (p->version.major != DLPACKPP_DLPACK_MAJOR) return version_error(std::move(owned));
      options.flags = p->flags;
    }
    Result<void> ok = detail::diagnose(p->dl_tensor, options, facts);
    if (!ok) return ok.error();
    return Result<BasicManagedTensor>(std::move(owned));
  }
  // What adopt_as() declined: the catalogue first (so a malformed tensor reports as adopt()
  // does), then the accessor's checks; the handle releases the tensor on either failure.
  template <class T, int N>
  DLPACKPP_COLD static Result<AdoptedAccessor<DLManaged, T, N>> adopt_as_slowly(
      DLManaged* p, const ValidateOptions& options) {
    detail::TensorFacts facts;
    Result<BasicManagedTensor> owned = adopt_slowly(p, options, facts);
    if (!owned) return owned.error();
    Result<TensorAccessor<T, N>> accessor = owned->template try_accessor<T, N>();
    if (!accessor) return accessor.error();
    return AdoptedAccessor<DLManaged, T, N>{*std::move(owned), *accessor};
  }

  // Releases the tensor before building the message: only the version was read.
  DLPACKPP_COLD static Error version_error(BasicManagedTensor owned) {
    const auto major = owned.ptr_->version.major;
    const auto minor = owned.ptr_->version.minor;
    owned.reset();
    return detail::version_mismatch_error("version.major", major, minor);
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
namespace detail {
/// Stands in for ManagedTensor where the dlpack.h in force predates DLManagedTensorVersioned:
/// naming it is one readable error instead of a cascade of undeclared identifiers.
template <bool Available = false>
struct ManagedTensorUnavailable {
  static_assert(Available,
                "dlpackpp: ManagedTensor needs DLManagedTensorVersioned (DLPack >= 1.0), but "
                "the dlpack.h in force is " DLPACKPP_DLPACK_VERSION_STRING
                ". Drop "
                "DLPACKPP_USE_BUNDLED_DLPACK=0 / DLPACKPP_USE_SYSTEM_DLPACK=ON / "
                "DLPACKPP_DLPACK_HEADER to use the bundled DLPack 1.3 header, include a newer "
                "dlpack.h first, or use LegacyManagedTensor");
  template <class... A>
  static ManagedTensorUnavailable adopt(A&&...);
  template <class... A>
  static ManagedTensorUnavailable try_adopt(A&&...);
  template <class... A>
  static ManagedTensorUnavailable adopt_unchecked(A&&...);
  template <class... A>
  static ManagedTensorUnavailable adopt_with_view(A&&...);
  template <class... A>
  static ManagedTensorUnavailable try_adopt_with_view(A&&...);
  template <class T, int N, class... A>
  static ManagedTensorUnavailable adopt_as(A&&...);
  template <class T, int N, class... A>
  static ManagedTensorUnavailable try_adopt_as(A&&...);
};
}  // namespace detail
/// Not available with this dlpack.h: using it is a compile error that says why.
using ManagedTensor = detail::ManagedTensorUnavailable<>;
/// The handle factories return unless told otherwise: legacy, as the header has nothing else.
using DefaultManagedTensor = LegacyManagedTensor;
#endif

DLPACKPP_END_NAMESPACE
