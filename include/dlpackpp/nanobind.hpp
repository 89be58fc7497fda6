// SPDX-License-Identifier: Apache-2.0
/// @file
/// nanobind type casters (nanobind 2.x and 3.x): a bound function takes `TensorView`,
/// `TensorAccessor<T, N>`, `ManagedTensor` or `LegacyManagedTensor` arguments from any object
/// that speaks DLPack, and returns a `ManagedTensor` as a `dlpackpp.Tensor`. Opt-in: include it
/// after (or instead of) `<nanobind/nanobind.h>`; see docs/bindings.md.
///
/// - A value that does not fit declines without raising, so nanobind tries the next overload
///   and, when none fits, raises its usual TypeError; the signature names what each parameter
///   takes (`float32[*, *] writable`, `float32[*, *]`, `tensor`), and
///   dlpackpp::bindings::explain_refusal says why an object does not fit. Anything else a
///   producer raises (KeyboardInterrupt, MemoryError, its own TypeError...) propagates
///   unchanged: from_python is noexcept, so the caster keeps the exception, reports the
///   argument loaded, and throws it (nb::python_error) when nanobind takes the value, before
///   the function runs, or when nanobind abandons the overload because another argument does
///   not fit (see Raised); nb::cast gets it pending. Inside nanobind's own containers
///   (`std::optional`, `std::variant`, `std::vector`), which ask can_cast() and accept no
///   error from an element, such an argument declines instead.
/// - A `TensorView` or accessor argument is valid for the call only (the lifetime rule of
///   docs/bindings.md); what it reads is owned by the call and released when the call
///   returns: by the caster for a `const T&` or `T*` parameter, read in place; on nanobind's
///   cleanup list for a value moved out of it (a `T` parameter, `std::optional`/
///   `std::variant` parameters, whose casters die before the call). Through `nb::cast` only a
///   view that needs no keeping (a dlpackpp.Tensor, a borrow through the exchange table) can
///   be made (nanobind releases its cleanup list before the value is used).
/// - A `dlpackpp::Error` thrown by a bound function reaches Python as set_python_error()
///   raises it (TypeError for dtype and rank, BufferError for read-only, ...): the casters
///   register that translation the first time one of them runs in the module.
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
#include "dlpackpp/bindings/refusal.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/tensor_accessor.hpp"
#include "dlpackpp/tensor_view.hpp"

#include <cstdint>
#include <exception>
#include <optional>
#include <utility>

#if defined(__GLIBCXX__) && defined(__linux__)
#include <cxxabi.h>  // abi::__forced_unwind
#include <unistd.h>  // pause
#endif

NAMESPACE_BEGIN(NB_NAMESPACE)
NAMESPACE_BEGIN(detail)

namespace dlpackpp_caster {
/// Registers, once per module, the translation of a dlpackpp::Error thrown by a bound function
/// into the Python exception set_python_error() raises (nanobind would say RuntimeError).
inline void translate_errors() noexcept {
  static ::dlpackpp::python::detail::OnceFlag registered;  // see run_once: no static's guard
  ::dlpackpp::python::detail::run_once(registered, [] {
    ::nanobind::register_exception_translator(
        [](const std::exception_ptr& thrown, void*) {
          try {
            std::rethrow_exception(thrown);
          } catch (const ::dlpackpp::Error& e) {
            ::dlpackpp::python::set_python_error(e);
          }
        },
        nullptr);
  });
}

/// What a caster keeps of a producer's exception that must propagate (see the file comment).
/// nanobind's from_python is noexcept, so the exception is kept and thrown when nanobind takes
/// the value; where it never does (another argument of the same overload did not fit, so
/// nanobind abandons the overload and destroys the casters), the destructor throws it instead.
/// nanobind's dispatcher catches it as it catches one thrown while taking the value, so the
/// interrupt ends the call, unchanged, and no later overload asks the producer again. Never
/// thrown while another exception unwinds, nor after a container caster asked can_cast()
/// (nanobind's std::optional, std::variant and list casters are noexcept: there the argument
/// declines instead, the documented exception).
class Raised {
 public:
  /// Nothing kept.
  Raised() noexcept = default;
  Raised(const Raised&) = delete;
  Raised& operator=(const Raised&) = delete;
  Raised& operator=(Raised&&) = delete;
  /// Takes what `other` kept (a library may return its caster by value).
  Raised(Raised&& other) noexcept : error_(std::move(other.error_)), declined_(other.declined_) {
    other.error_.reset();
  }
  /// Throws the kept exception that nanobind never took (see the class comment).
  ~Raised() noexcept(false) {
    if (DLPACKPP_UNLIKELY(error_.has_value()) && !declined_ && std::uncaught_exceptions() == 0)
      rethrow();
  }
  /// A loader's answer as from_python returns it. A pending exception: for nb::cast
  /// (cast_flags::manual) left pending and false, which nb::cast raises; otherwise kept here
  /// and true, so that nanobind takes the value and rethrow() raises it.
  bool answer(::dlpackpp::bindings::detail::Loaded loaded, std::uint32_t flags) noexcept {
    using ::dlpackpp::bindings::detail::Loaded;
    if (DLPACKPP_LIKELY(loaded != Loaded::raised)) return loaded == Loaded::yes;
    if ((flags & static_cast<std::uint32_t>(cast_flags::manual)) != 0) return false;
    error_.emplace();  // takes the pending exception
    return true;
  }
  /// Whether the caster holds a value (no kept exception); a container caster asks this, and
  /// an exception kept is then dropped with the caster, not thrown.
  bool empty() const noexcept {
    declined_ = error_.has_value();
    return !declined_;
  }
  /// Throws the kept exception, if any.
  void rethrow() {
    if (DLPACKPP_UNLIKELY(error_.has_value())) {
      python_error error = std::move(*error_);
      error_.reset();
      throw error;
    }
  }

 private:
  std::optional<python_error> error_;
  mutable bool declined_ = false;
};

/// Runs a caster's `load` for from_python, which must not throw. The one exception that can
/// pass `guarded` is the forced unwind that ends a daemon thread re-attaching while CPython
/// shuts down (3.13 and older call pthread_exit there); it has no thread state, nanobind's
/// dispatcher would catch it and touch Python, and glibc aborts the process where it is not
/// rethrown. So the thread waits here for the process to end, as CPython 3.14 makes such
/// threads do (PyThread_hang_thread).
template <class Load>
bool without_unwinding(Load&& load) noexcept {
#if defined(__GLIBCXX__) && defined(__linux__)
  try {
    return load();
  } catch (abi::__forced_unwind&) {
    for (;;) pause();
  }
#else
  return load();
#endif
}

/// What the three argument casters share: how nanobind takes the loaded value (moved out, as
/// NB_TYPE_CASTER does) and the kept producer exception, thrown when it does. `Caster::held()`
/// is the loaded value, `Caster::held_to_move()` the same to be moved out; `raised_` is what
/// its from_python answers through.
template <class Caster, class V>
class Holding {
 public:
  /// How nanobind asks for the value.
  template <typename U>
  using Cast = movable_cast_t<U>;
  /// Whether the caster holds a value (not an exception to propagate).
  template <typename U>
  bool can_cast() const noexcept {
    return raised_.empty();
  }
  /// The loaded value, as the library asks for a pointer (or the kept exception, thrown).
  explicit operator V*() { return &take(); }
  /// The loaded value, as the library asks for a reference (or the kept exception, thrown).
  explicit operator V&() { return take(); }
  /// The loaded value, as the library asks for an rvalue (or the kept exception, thrown).
  explicit operator V&&() {
    raised_.rethrow();
    return std::move(static_cast<Caster&>(*this).held_to_move());
  }

  /// The loaded value to be moved out: the value itself, where the caster holds nothing it
  /// reads (the TensorView caster says otherwise).
  V& held_to_move() { return static_cast<Caster&>(*this).held(); }

 protected:
  /// The exception to propagate, if loading kept one.
  Raised raised_;

 private:
  V& take() {
    raised_.rethrow();
    return static_cast<Caster&>(*this).held();
  }
};

/// Keeps what a view reads (a consumed capsule holding the tensor) alive on the call's cleanup
/// list, which steals the reference. Refused without a list, and for nb::cast
/// (cast_flags::manual), whose list dies before the value is used: the reference is then
/// released.
struct Park {
  /// The caster's flags (nanobind 2.x passes uint8_t, 3.x uint32_t: both fit).
  std::uint32_t flags;
  /// The call's cleanup list, or NULL where the caller has none.
  cleanup_list* cleanup;
  /// Whether a value moved out can be kept (operator() will not refuse).
  bool can_keep() const noexcept {
    return cleanup != nullptr && (flags & static_cast<std::uint32_t>(cast_flags::manual)) == 0;
  }
  /// Puts `capsule` (its reference taken) on the list; false where it cannot.
  bool operator()(PyObject* capsule) const noexcept {
    if (!can_keep()) {
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

/// `TensorView` arguments, through the borrow engine (python::try_borrow_view): a view that
/// may be written only where the producer says so.
/// Hand-written because a TensorView has no empty state for NB_TYPE_CASTER's default-constructed
/// value.
template <>
struct type_caster<::dlpackpp::TensorView>
    : dlpackpp_caster::Holding<type_caster<::dlpackpp::TensorView>, ::dlpackpp::TensorView> {
  /// An empty caster. User-provided: the library value-initializes its casters, which would
  /// otherwise zero the whole view argument (its storage, the optional view) on every call.
  type_caster() noexcept {}  // NOLINT(modernize-use-equals-default)
  /// The C++ type this caster produces.
  using Value = ::dlpackpp::TensorView;
  /// What the signature says the parameter takes.
  static constexpr auto Name = dlpackpp_caster::tensor_name;

  /// Loads `src`, or declines (false, nothing pending); an exception to propagate is kept.
  bool from_python(handle src, std::uint32_t flags, cleanup_list* cleanup) noexcept {
    dlpackpp_caster::translate_errors();
    park_ = dlpackpp_caster::Park{flags, cleanup};
    return dlpackpp_caster::without_unwinding(
        [&] { return this->raised_.answer(view_.load(src.ptr(), park_.can_keep()), flags); });
  }

  /// Refused at compile time: a borrowed value cannot be returned.
  template <class U>
  static handle from_cpp(U&&, rv_policy, cleanup_list*) noexcept {
    static_assert(::dlpackpp::bindings::detail::never<U>,
                  "dlpackpp: a bound function cannot return a TensorView (it owns nothing); "
                  "return a ManagedTensor");
    return {};
  }

  /// The loaded view (Holding hands it out), read in place.
  Value& held() { return view_.get(); }
  /// The loaded view as Holding moves it out: what it reads goes on the call's cleanup list,
  /// since it may outlive this caster (load declined a view it could not keep).
  Value& held_to_move() { return *view_.moved_out(park_); }

 private:
  ::dlpackpp::bindings::detail::ViewArgument view_;
  dlpackpp_caster::Park park_;
};

/// `ManagedTensor` and `LegacyManagedTensor` arguments (owning import, as
/// python::from_dlpack) and return values (a new dlpackpp.Tensor).
template <class DLManaged>
struct type_caster<::dlpackpp::BasicManagedTensor<DLManaged>>
    : dlpackpp_caster::Holding<type_caster<::dlpackpp::BasicManagedTensor<DLManaged>>,
                               ::dlpackpp::BasicManagedTensor<DLManaged>> {
  /// The handle type this caster produces.
  using Value = ::dlpackpp::BasicManagedTensor<DLManaged>;
  /// What the signature says the parameter takes.
  static constexpr auto Name = dlpackpp_caster::tensor_name;

  /// Loads `src`, or declines (false, nothing pending); an exception to propagate is kept.
  bool from_python(handle src, std::uint32_t flags, cleanup_list* /*cleanup*/) noexcept {
    dlpackpp_caster::translate_errors();
    return dlpackpp_caster::without_unwinding([&] {
      return this->raised_.answer(::dlpackpp::bindings::detail::import_owned(src.ptr(), value),
                                  flags);
    });
  }

  /// A new dlpackpp.Tensor owning `src`; NULL with a Python exception set on failure.
  static handle from_cpp(Value&& src, rv_policy /*policy*/, cleanup_list* /*cleanup*/) noexcept {
    dlpackpp_caster::translate_errors();
    return ::dlpackpp::bindings::detail::to_result(std::move(src));
  }

  /// The loaded handle (Holding hands it out).
  Value& held() { return value; }

  /// The loaded handle.
  Value value;
};

/// `TensorAccessor<T, N>` arguments: dtype, rank and (for a mutable T) writability and one
/// address per element checked, host-accessible memory only, through the borrow engine (a
/// mutable T asks for a writable view).
template <class T, int N>
struct type_caster<::dlpackpp::TensorAccessor<T, N>>
    : dlpackpp_caster::Holding<type_caster<::dlpackpp::TensorAccessor<T, N>>,
                               ::dlpackpp::TensorAccessor<T, N>> {
  /// The accessor type this caster produces.
  using Value = ::dlpackpp::TensorAccessor<T, N>;
  /// The parameter's signature text (`float32[*, *] writable`), built at compile time.
  using AccessorName = ::dlpackpp::bindings::detail::AccessorName<T, N>;
  /// What the signature says the parameter takes.
  static constexpr auto Name = const_name(AccessorName::text.data);

  /// An empty caster. User-provided: the library value-initializes its casters, which would
  /// otherwise zero the whole accessor argument on every call.
  type_caster() noexcept {}  // NOLINT(modernize-use-equals-default)

  /// Loads `src`, or declines (false, nothing pending); an exception to propagate is kept.
  bool from_python(handle src, std::uint32_t flags, cleanup_list* cleanup) noexcept {
    dlpackpp_caster::translate_errors();
    park_ = dlpackpp_caster::Park{flags, cleanup};
    return dlpackpp_caster::without_unwinding(
        [&] { return this->raised_.answer(accessor_.load(src.ptr(), park_.can_keep()), flags); });
  }

  /// Refused at compile time: a borrowed value cannot be returned.
  template <class U>
  static handle from_cpp(U&&, rv_policy, cleanup_list*) noexcept {
    static_assert(::dlpackpp::bindings::detail::never<U>,
                  "dlpackpp: a bound function cannot return a TensorAccessor (it owns "
                  "nothing); return a ManagedTensor");
    return {};
  }

  /// The loaded accessor (Holding hands it out), read in place.
  Value& held() { return accessor_.get(); }
  /// The loaded accessor as Holding moves it out: what it reads goes on the call's cleanup
  /// list, since it may outlive this caster (load declined an accessor it could not keep).
  Value& held_to_move() { return *accessor_.moved_out(park_); }

 private:
  ::dlpackpp::bindings::detail::AccessorArgument<T, N> accessor_;
  dlpackpp_caster::Park park_;
};

NAMESPACE_END(detail)
NAMESPACE_END(NB_NAMESPACE)

#endif  // nanobind available
