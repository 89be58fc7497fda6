// SPDX-License-Identifier: Apache-2.0
/// @file
/// pybind11 type casters (pybind11 2.10 and 3.x): a bound function takes `TensorView`,
/// `TensorAccessor<T, N>`, `ManagedTensor` or `LegacyManagedTensor` arguments from any object
/// that speaks DLPack, and returns a `ManagedTensor` as a `dlpackpp.Tensor`. Opt-in: include it
/// after (or instead of) `<pybind11/pybind11.h>`; see docs/bindings.md.
///
/// - A value that does not fit declines without raising, so pybind11 tries the next overload
///   and, when none fits, raises its usual TypeError; the signature names what each parameter
///   takes (`float32[*, *] writable`, `float32[*, *]`, `tensor`), and
///   dlpackpp::bindings::explain_refusal says why an object does not fit. Anything else a
///   producer raises (KeyboardInterrupt, MemoryError, its own TypeError...) propagates
///   unchanged (thrown as error_already_set, which ends overload resolution).
/// - A `TensorView` or accessor argument is valid for the call only (the lifetime rule of
///   docs/bindings.md); what it reads is owned by the call and released when the call
///   returns: by the caster for a `const T&` parameter, by pybind11's `loader_life_support`
///   for a value moved out of it (a `T` parameter, `std::optional`/`std::variant`/list
///   parameters). Outside a bound function (`py::cast`) only a view that needs no keeping (a
///   dlpackpp.Tensor, a borrow through the exchange table) can be made: others raise cast_error.
/// - A `dlpackpp::Error` thrown by a bound function reaches Python as set_python_error()
///   raises it (TypeError for dtype and rank, BufferError for read-only, ...): this header
///   registers that translation when the module is loaded.
/// - `bindings::OnStream<V, Stream>` (V one of the above) also asks the producer to order its
///   pending device work before the stream the function launches on (bindings/on_stream.hpp).
/// - Returning a `TensorView`, a `TensorAccessor` or an `OnStream` is a compile error: nothing
///   would own it.
#pragma once

// Without Python.h and pybind11 on the include path this header is empty (as python.hpp is),
// so that tools compiling every public header alone keep working.
#if defined(PYBIND11_VERSION_MAJOR) || !defined(__has_include) || \
    (__has_include(<Python.h>) && __has_include(<pybind11/pybind11.h>))

#include <pybind11/pybind11.h>

#include "dlpackpp/python.hpp"

#include "dlpackpp/bindings/arguments.hpp"
#include "dlpackpp/bindings/names.hpp"
#include "dlpackpp/bindings/on_stream.hpp"
#include "dlpackpp/bindings/refusal.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/tensor_accessor.hpp"
#include "dlpackpp/tensor_view.hpp"

#include <exception>
#include <optional>
#include <utility>

namespace pybind11 {
namespace detail {

namespace dlpackpp_caster {
/// Registers, once per module, the translation of a dlpackpp::Error thrown by a bound function
/// into the Python exception set_python_error() raises (pybind11 would say RuntimeError).
inline void translate_errors() {
  static ::dlpackpp::python::detail::OnceFlag registered;  // see run_once: no static's guard
  ::dlpackpp::python::detail::run_once(registered, [] {
    // pybind11 stores a void (*)(std::exception_ptr): the parameter must be by value.
    // NOLINTNEXTLINE(performance-unnecessary-value-param)
    register_exception_translator([](std::exception_ptr thrown) {
      try {
        if (thrown) std::rethrow_exception(thrown);
      } catch (const ::dlpackpp::Error& e) {
        ::dlpackpp::python::set_python_error(e);
      }
    });
  });
}

/// Registers the translation as the module is loaded: its static initialization runs inside
/// the import, on the importing thread, with the GIL held, so a bound function that throws a
/// dlpackpp::Error before any dlpackpp caster has run is translated too. Loaded another way
/// (linked into a program before Py_Initialize, or without the GIL), the casters register it
/// on their first use instead, as they do where registering here fails (pybind11 threw).
inline bool register_translation_at_load() noexcept {
  try {
    if (Py_IsInitialized() != 0 && PyGILState_Check() != 0) translate_errors();
  } catch (const std::exception&) {  // nothing registered: the first caster call tries again
    PyErr_Clear();
  }
  return true;
}

/// The static whose initialization calls register_translation_at_load as the module loads.
inline const bool translation_registered_at_load = register_translation_at_load();

/// A loader's answer as pybind11 takes it: false declines; a pending Python exception is
/// thrown (error_already_set), which pybind11 raises at once instead of trying more overloads.
inline bool loaded(::dlpackpp::bindings::detail::Loaded answer) {
  if (answer == ::dlpackpp::bindings::detail::Loaded::raised) throw error_already_set();
  return answer == ::dlpackpp::bindings::detail::Loaded::yes;
}

/// Keeps what a view reads (a consumed capsule holding the tensor) alive until the bound call
/// returns (pybind11's patients of the current call), taking the reference; false outside a
/// bound function, where pybind11 has no such frame (the reference is then released).
inline bool park(PyObject* capsule) noexcept {
  bool kept = true;
  try {
    loader_life_support::add_patient(capsule);
  } catch (const std::exception&) {  // cast_error: no call frame (py::cast outside a bound call)
    kept = false;
  }
  Py_DECREF(capsule);  // the frame holds its own reference; without one the tensor is released
  return kept;
}

/// `argument`'s value to be moved out of its caster, what it reads handed to the call's
/// patients (park); cast_error where there is no call to keep it (py::cast outside a bound
/// function, for a view that needs keeping).
template <class Argument>
auto& moved_out(Argument& argument) {
  auto* value = argument.moved_out(&park);
  if (value == nullptr) {
    throw cast_error(
        "dlpackpp: this tensor must be kept alive by a bound call; outside one, "
        "only a dlpackpp.Tensor or an exchange-table tensor can be viewed");
  }
  return *value;
}

/// The parameter name of a TensorView or owning argument, and a returned dlpackpp.Tensor.
#if PYBIND11_VERSION_MAJOR >= 3
constexpr auto tensor_name = io_name(::dlpackpp::bindings::detail::tensor_argument_name,
                                     ::dlpackpp::bindings::detail::tensor_result_name);
#else
constexpr auto tensor_name = const_name(::dlpackpp::bindings::detail::tensor_argument_name);
#endif

/// The caster of every dlpackpp parameter type V (TensorView, TensorAccessor<T, N>, the owning
/// handles): it loads a bindings::detail::Argument<V> and hands its value out as pybind11 asks.
/// A pointer or reference reads it in place; an rvalue (a `V` parameter, or one inside
/// `std::optional`/`std::variant`/a list, whose caster dies before the call) is independent of
/// the caster, what it reads kept by the call (see bindings::detail::hand_over). An owning
/// handle is also returned, as a new dlpackpp.Tensor; returning a view or an accessor is a
/// compile error.
template <class V>
class Caster {
 public:
  /// An empty caster. User-provided: the library value-initializes its casters, which would
  /// otherwise zero the whole argument (a view's storage, an accessor) on every call.
  Caster() noexcept {}  // NOLINT(modernize-use-equals-default)

  /// Loads `src`, declines (false, nothing pending), or throws what the producer raised.
  bool load(handle src, bool /*convert*/) {
    translate_errors();
    return loaded(argument_.load(src.ptr(), true));
  }

  /// A new dlpackpp.Tensor owning `src` (bindings::detail::returned).
  template <class U>
  static handle cast(U&& src, return_value_policy /*policy*/, handle /*parent*/) {
    translate_errors();
    return ::dlpackpp::bindings::detail::returned<V>(std::forward<U>(src));
  }

  /// The loaded value, read in place.
  operator V*() { return &argument_.get(); }
  /// The loaded value, read in place.
  operator V&() { return argument_.get(); }
  /// The loaded value, moved out (see the class comment).
  operator V&&() && { return std::move(moved_out(argument_)); }
  /// How pybind11 asks for the value (moved out, as PYBIND11_TYPE_CASTER does).
  template <class T>
  using cast_op_type = movable_cast_op_type<T>;

 private:
  ::dlpackpp::bindings::detail::Argument<V> argument_;
};
}  // namespace dlpackpp_caster

/// `TensorView` arguments, through the borrow engine (python::try_borrow_view): a view that
/// may be written only where the producer says so.
template <>
class type_caster<::dlpackpp::TensorView> : public dlpackpp_caster::Caster<::dlpackpp::TensorView> {
 public:
  /// What the signature says the parameter takes.
  static constexpr auto name = dlpackpp_caster::tensor_name;
};

/// `ManagedTensor` and `LegacyManagedTensor` arguments (owning import, as
/// python::from_dlpack) and return values (a new dlpackpp.Tensor).
template <class DLManaged>
class type_caster<::dlpackpp::BasicManagedTensor<DLManaged>>
    : public dlpackpp_caster::Caster<::dlpackpp::BasicManagedTensor<DLManaged>> {
 public:
  /// What the signature says the parameter takes.
  static constexpr auto name = dlpackpp_caster::tensor_name;
};

/// `TensorAccessor<T, N>` arguments: dtype, rank and (for a mutable T) writability and one
/// address per element checked, host-accessible memory only, through the borrow engine (a
/// mutable T asks for a writable view).
template <class T, int N>
class type_caster<::dlpackpp::TensorAccessor<T, N>>
    : public dlpackpp_caster::Caster<::dlpackpp::TensorAccessor<T, N>> {
 public:
  /// The parameter's signature text (`float32[*, *] writable`), built at compile time.
  static constexpr auto name =
      const_name(::dlpackpp::bindings::detail::AccessorName<T, N>::text.data);
};

/// `OnStream<V, Stream>` arguments: V loaded as its own caster loads it, the producer first
/// asked to order its work before the stream the function launches on (bindings/on_stream.hpp).
template <class V, class Stream>
class type_caster<::dlpackpp::bindings::OnStream<V, Stream>>
    : public dlpackpp_caster::Caster<::dlpackpp::bindings::OnStream<V, Stream>> {
 public:
  /// What the signature says the parameter takes: what V's does.
  static constexpr auto name = make_caster<V>::name;
};

}  // namespace detail
}  // namespace pybind11

#endif  // pybind11 available
