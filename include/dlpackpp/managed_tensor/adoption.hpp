// SPDX-License-Identifier: Apache-2.0
/// @file
/// How BasicManagedTensor checks a tensor it adopts: the version before anything past `flags`,
/// then the one-pass quick check (and for adopt_as, the typed rules in the same pass), inline
/// and message-free; a tensor it declines takes the cold path, which names the problem and
/// hands the tensor back. Apart from the handle so that its class body reads as its contract.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/layout.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/managed_tensor/traits.hpp"
#include "dlpackpp/rules/access.hpp"
#include "dlpackpp/rules/diagnose.hpp"
#include "dlpackpp/rules/quick_checks.hpp"
#include "dlpackpp/tensor_accessor.hpp"
#include "dlpackpp/validate_options.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

template <class DLManaged>
class BasicManagedTensor;
template <class DLManaged, class T, int N>
struct AdoptedAccessor;

namespace detail {

/// The checks BasicManagedTensor<DLManaged> applies on adoption, fast and slow. Only its
/// public members are used, so the handle is complete by the time any of these is instantiated.
template <class DLManaged>
struct Adoption {
  /// The owning handle these checks fill.
  using Handle = BasicManagedTensor<DLManaged>;
  /// True for DLManagedTensorVersioned, the struct with `version` and `flags`.
  static constexpr bool versioned = managed_traits<DLManaged>::versioned;

  /// The struct's flags (0 for a legacy tensor, which carries none).
  static std::uint64_t flags_of(const DLManaged* p) noexcept {
    if constexpr (versioned) {
      return p->flags;
    } else {
      static_cast<void>(p);
      return 0;
    }
  }

  /// The typed rules (dtype_of<T>, rank N, writability for a non-const T, alignment,
  /// addressable elements) for a tensor `p` that has not been adopted yet.
  template <class T, int N>
  DLPACKPP_FORCE_INLINE static bool typed_access_ok(const DLManaged* p) noexcept {
    const DLTensor& t = p->dl_tensor;
    return accessor_ok<T, N>(t.dtype, flags_of(p), static_cast<int>(t.ndim), first_element(t));
  }
  /// The accessor of a tensor typed_access_ok() accepted; NULL strides become compact ones,
  /// computed on the stack for the accessor to copy.
  template <class T, int N>
  DLPACKPP_FORCE_INLINE static TensorAccessor<T, N> typed_accessor(const DLTensor& t) noexcept {
    auto* first = static_cast<T*>(first_element(t));
    if (t.strides != nullptr) return TensorAccessor<T, N>(first, t.shape, t.strides);
    std::int64_t compact[N > 0 ? static_cast<std::size_t>(N) : 1];
    write_compact_strides(t.shape, N, compact);
    return TensorAccessor<T, N>(first, t.shape, compact);
  }

  /// adopt_as()'s one pass: the version (nothing past `flags` is read before it), then the
  /// typed rules (dtype_of<T> and rank N stand in for the generic dtype and rank tests, which
  /// then fold away), then the tensor's.
  template <class T, int N>
  DLPACKPP_FORCE_INLINE static bool accepts_as(const DLManaged* p,
                                               const ValidateOptions& options) noexcept {
    if (p == nullptr) return false;
    if constexpr (versioned) {
      if (p->version.major != DLPACKPP_DLPACK_MAJOR) return false;
    }
    TensorFacts facts;  // a contiguous tensor needs no look for a stride of 0
    const DLTensor& t = p->dl_tensor;
    return typed_access_ok<T, N>(p) && accepts(p, options, facts) &&
           one_address_each<T>(facts.contiguous, t.shape, t.strides, N);
  }

  /// The common case inline and message-free: a tensor of this major that the one-pass check
  /// accepts, filling `facts`. Everything else, valid or not, takes adopt_slowly().
  DLPACKPP_FORCE_INLINE static bool accepts(const DLManaged* p, const ValidateOptions& options,
                                            TensorFacts& facts) noexcept {
    if (p == nullptr) return false;
    if constexpr (versioned) {
      if (p->version.major != DLPACKPP_DLPACK_MAJOR) return false;
      ValidateOptions with_flags = options;
      with_flags.flags = p->flags;
      return quick_accept(p->dl_tensor, with_flags, facts);
    } else {
      return quick_accept(p->dl_tensor, options, facts);
    }
  }

  /// The whole catalogue, reporting the first problem and filling `facts` for a tensor it
  /// accepts; releases a refused tensor.
  DLPACKPP_COLD static Result<Handle> adopt_slowly(DLManaged* p, ValidateOptions options,
                                                   TensorFacts& facts) {
    if (p == nullptr) {
      return make_error(Errc::null_pointer, managed_traits<DLManaged>::name, " pointer is NULL");
    }
    Handle owned = Handle::adopt_unchecked(p);  // released on every early return
    if constexpr (versioned) {
      // Only version, manager_ctx, deleter and flags are ABI-stable across majors.
      if (p->version.major != DLPACKPP_DLPACK_MAJOR) return version_error(std::move(owned));
      options.flags = p->flags;
    }
    Result<void> ok = diagnose(p->dl_tensor, options, facts);
    if (!ok) return ok.error();
    return Result<Handle>(std::move(owned));
  }
  /// What adopt_as() declined: the catalogue first (so a malformed tensor reports as adopt()
  /// does), then the accessor's checks; the handle releases the tensor on either failure.
  template <class T, int N>
  DLPACKPP_COLD static Result<AdoptedAccessor<DLManaged, T, N>> adopt_as_slowly(
      DLManaged* p, const ValidateOptions& options) {
    TensorFacts facts;
    Result<Handle> owned = adopt_slowly(p, options, facts);
    if (!owned) return owned.error();
    Result<TensorAccessor<T, N>> accessor = owned->template try_accessor<T, N>();
    if (!accessor) return accessor.error();
    return AdoptedAccessor<DLManaged, T, N>{*std::move(owned), *accessor};
  }

  /// Releases the tensor before building the message: only the version was read.
  DLPACKPP_COLD static Error version_error(Handle owned) {
    const auto major = owned.get()->version.major;
    const auto minor = owned.get()->version.minor;
    owned.reset();
    return version_mismatch_error("version.major", major, minor);
  }
};

}  // namespace detail
DLPACKPP_END_NAMESPACE
