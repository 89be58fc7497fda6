// SPDX-License-Identifier: Apache-2.0
/// @file
/// nanobind type casters (nanobind 2.x and 3.x): a bound function takes `TensorView`,
/// `TensorAccessor<T, N>`, `ManagedTensor` or `LegacyManagedTensor` arguments from any object
/// that speaks DLPack, and returns a `ManagedTensor` as a `dlpackpp.Tensor`. Opt-in: include it
/// after (or instead of) `<nanobind/nanobind.h>`; see docs/bindings.md.
///
/// - A value that does not fit declines without raising, so nanobind tries the next overload
///   and, when none fits, raises its usual TypeError; the signature names what each parameter
///   takes (`float32[*, *] writable`, `float32[*, *]`, `tensor`).
/// - A `TensorView` or accessor argument is valid for the call only (the lifetime rule of
///   docs/bindings.md); what it had to import is kept alive on nanobind's cleanup list, also
///   inside `std::optional`/`std::variant` parameters, and released when the call returns.
///   Through `nb::cast` only a borrow through the exchange table can be made (nanobind
///   releases its cleanup list before the value is used); an import that needs an owner
///   declines there.
/// - Returning a `TensorView` or a `TensorAccessor` is a compile error: nothing would own it.
#pragma once

// Without Python.h and nanobind on the include path this header is empty (as python.hpp is),
// so that tools compiling every public header alone keep working.
#if defined(NB_VERSION_MAJOR) || !defined(__has_include) || \
    (__has_include(<Python.h>) && __has_include(<nanobind/nanobind.h>))

#include <nanobind/nanobind.h>

#include "dlpackpp/python.hpp"

#include "dlpackpp/bindings/arguments.hpp"
#include "dlpackpp/bindings/names.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/tensor_accessor.hpp"
#include "dlpackpp/tensor_view.hpp"

#include <cstdint>
#include <optional>
#include <utility>

NAMESPACE_BEGIN(NB_NAMESPACE)
NAMESPACE_BEGIN(detail)

namespace dlpackpp_caster {
/// Keeps the producer's capsule (and so the tensor it owns) alive on the call's cleanup list,
/// which steals the reference. Refused without a list, and for nb::cast (cast_flags::manual),
/// whose list dies before the value is used: the capsule is then released.
struct Park {
  /// The caster's flags (nanobind 2.x passes uint8_t, 3.x uint32_t: both fit).
  std::uint32_t flags;
  /// The call's cleanup list, or NULL where the caller has none.
  cleanup_list* cleanup;
  /// Puts `capsule` (its reference taken) on the list; false where it cannot.
  bool operator()(PyObject* capsule) const noexcept {
    if (cleanup == nullptr || (flags & static_cast<std::uint32_t>(cast_flags::manual)) != 0) {
      Py_DECREF(capsule);
      return false;
    }
    cleanup->append(capsule);
    return true;
  }
};

/// The parameter name of a TensorView or owning argument, and a returned dlpackpp.Tensor
/// (nanobind 3 names arguments and results apart; older versions get the argument's name).
#if NB_VERSION_MAJOR >= 3
constexpr auto tensor_name = io_name(::dlpackpp::bindings::detail::tensor_argument_name,
                                     ::dlpackpp::bindings::detail::tensor_result_name);
#else
constexpr auto tensor_name = const_name(::dlpackpp::bindings::detail::tensor_argument_name);
#endif
}  // namespace dlpackpp_caster

/// `TensorView` arguments: borrowed through the exchange table where the type offers it,
/// else viewed inside the producer's `__dlpack__` capsule, kept until the call returns.
/// Hand-written because a TensorView has no empty state for NB_TYPE_CASTER's default-constructed
/// value.
template <>
struct type_caster<::dlpackpp::TensorView> {
  /// An empty caster. User-provided: the library value-initializes its casters, which would
  /// otherwise zero the whole (large) optional view before constructing it, on every call.
  type_caster() noexcept {}  // NOLINT(modernize-use-equals-default)
  /// The C++ type this caster produces.
  using Value = ::dlpackpp::TensorView;
  /// What the signature says the parameter takes.
  static constexpr auto Name = dlpackpp_caster::tensor_name;
  /// How nanobind asks for the value (moved out, as NB_TYPE_CASTER does).
  template <typename T>
  using Cast = movable_cast_t<T>;
  /// Every loaded caster holds a view.
  template <typename T>
  static constexpr bool can_cast() {
    return true;
  }

  /// Loads `src`, or declines (false, nothing raised, nothing pending).
  bool from_python(handle src, std::uint32_t flags, cleanup_list* cleanup) noexcept {
    return ::dlpackpp::bindings::detail::load_view(src.ptr(), view_,
                                                   dlpackpp_caster::Park{flags, cleanup});
  }

  /// Refused at compile time: a borrowed value cannot be returned.
  template <class U>
  static handle from_cpp(U&&, rv_policy, cleanup_list*) noexcept {
    static_assert(::dlpackpp::bindings::detail::never<U>,
                  "dlpackpp: a bound function cannot return a TensorView (it owns nothing); "
                  "return a ManagedTensor");
    return {};
  }

  /// The loaded view, as the library asks for a pointer.
  explicit operator Value*() { return &*view_; }
  /// The loaded view, as the library asks for a reference.
  explicit operator Value&() { return *view_; }
  /// The loaded view, as the library asks for an rvalue.
  explicit operator Value&&() { return std::move(*view_); }

 private:
  std::optional<Value> view_;
};

/// `ManagedTensor` and `LegacyManagedTensor` arguments (owning import, as
/// python::from_dlpack) and return values (a new dlpackpp.Tensor).
template <class DLManaged>
struct type_caster<::dlpackpp::BasicManagedTensor<DLManaged>> {
  NB_TYPE_CASTER(::dlpackpp::BasicManagedTensor<DLManaged>, dlpackpp_caster::tensor_name)

  /// Loads `src`, or declines (false, nothing raised, nothing pending).
  bool from_python(handle src, std::uint32_t /*flags*/, cleanup_list* /*cleanup*/) noexcept {
    return ::dlpackpp::bindings::detail::import_owned(src.ptr(), value);
  }

  /// A new dlpackpp.Tensor owning `src`; NULL with a Python exception set on failure.
  static handle from_cpp(Value&& src, rv_policy /*policy*/, cleanup_list* /*cleanup*/) noexcept {
    return ::dlpackpp::bindings::detail::to_result(std::move(src));
  }
};

/// `TensorAccessor<T, N>` arguments: dtype, rank and (for a mutable T) writability checked,
/// host-accessible memory only. A mutable T imports with ownership (READ_ONLY is known then);
/// a const T borrows through the exchange table where it can.
template <class T, int N>
struct type_caster<::dlpackpp::TensorAccessor<T, N>> {
  /// The accessor type, named once: NB_TYPE_CASTER takes no commas.
  using Accessor = ::dlpackpp::TensorAccessor<T, N>;
  /// The parameter's signature text (`float32[*, *] writable`), built at compile time.
  using AccessorName = ::dlpackpp::bindings::detail::AccessorName<T, N>;
  NB_TYPE_CASTER(Accessor, const_name(AccessorName::text.data))

  /// Loads `src`, or declines (false, nothing raised, nothing pending).
  bool from_python(handle src, std::uint32_t flags, cleanup_list* cleanup) noexcept {
    return ::dlpackpp::bindings::detail::load_accessor(src.ptr(), value,
                                                       dlpackpp_caster::Park{flags, cleanup});
  }

  /// Refused at compile time: a borrowed value cannot be returned.
  template <class U>
  static handle from_cpp(U&&, rv_policy, cleanup_list*) noexcept {
    static_assert(::dlpackpp::bindings::detail::never<U>,
                  "dlpackpp: a bound function cannot return a TensorAccessor (it owns "
                  "nothing); return a ManagedTensor");
    return {};
  }
};

NAMESPACE_END(detail)
NAMESPACE_END(NB_NAMESPACE)

#endif  // nanobind available
