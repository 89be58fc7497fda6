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
///   not fit (see Caster); nb::cast gets it pending. Inside nanobind's own containers
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
/// - `bindings::OnStream<V, Stream>` (V one of the above) also asks the producer to order its
///   pending device work before the stream the function launches on (bindings/on_stream.hpp).
/// - Returning a `TensorView`, a `TensorAccessor` or an `OnStream` is a compile error: nothing
///   would own it.
#pragma once

// Without Python.h and nanobind on the include path this header is empty (as python.hpp is),
// so that tools compiling every public header alone keep working.
#if defined(NB_VERSION_MAJOR) || !defined(__has_include) || \
    (__has_include(<Python.h>) && __has_include(<nanobind/nanobind.h>))

#include <nanobind/nanobind.h>

#include "dlpackpp/python.hpp"

#include "dlpackpp/bindings/arguments.hpp"
#include "dlpackpp/bindings/names.hpp"
#include "dlpackpp/bindings/on_stream.hpp"
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

/// The parameter name of a TensorView or owning argument, and a returned dlpackpp.Tensor
/// (nanobind 3 names arguments and results apart; older versions get the argument's name).
#if NB_VERSION_MAJOR >= 3
constexpr auto tensor_name = io_name(::dlpackpp::bindings::detail::tensor_argument_name,
                                     ::dlpackpp::bindings::detail::tensor_result_name);
#else
constexpr auto tensor_name = const_name(::dlpackpp::bindings::detail::tensor_argument_name);
#endif

/// The caster of every dlpackpp parameter type V (TensorView, TensorAccessor<T, N>, the owning
/// handles): it loads a bindings::detail::Argument<V> and hands its value out as nanobind asks
/// (moved out, as NB_TYPE_CASTER does). A value moved out may outlive the caster, so what it
/// reads goes on the call's cleanup list (see bindings::detail::hand_over); that list is
/// refused for nb::cast (cast_flags::manual), whose list dies before the value is used, and
/// a view that would need it then declines. An owning handle is also returned, as a new
/// dlpackpp.Tensor; returning a view or an accessor is a compile error.
///
/// A producer's exception that must propagate: from_python is noexcept, so it is kept and
/// thrown when nanobind takes the value; where nanobind never does (another argument of the
/// same overload did not fit, so it abandons the overload and destroys the casters), the
/// destructor throws it instead. nanobind's dispatcher catches it as it catches one thrown
/// while taking the value, so the interrupt ends the call, unchanged, and no later overload
/// asks the producer again. Never thrown while another exception unwinds, nor after a
/// container caster asked can_cast() (nanobind's std::optional, std::variant and list casters
/// are noexcept: there the argument declines instead, the documented exception).
template <class V>
class Caster {
 public:
  /// The C++ type this caster produces.
  using Value = V;
  /// How nanobind asks for the value.
  template <typename U>
  using Cast = movable_cast_t<U>;

  /// An empty caster. User-provided: the library value-initializes its casters, which would
  /// otherwise zero the whole argument (a view's storage, an accessor) on every call.
  Caster() noexcept {}  // NOLINT(modernize-use-equals-default)
  Caster(const Caster&) = delete;
  Caster& operator=(const Caster&) = delete;
  Caster& operator=(Caster&&) = delete;
  /// Takes what `other` holds (a library may return its caster by value).
  Caster(Caster&& other) noexcept
      : argument_(std::move(other.argument_)),
        error_(std::move(other.error_)),
        flags_(other.flags_),
        cleanup_(other.cleanup_),
        declined_(other.declined_) {
    other.error_.reset();
  }
  /// Throws the kept exception that nanobind never took (see the class comment).
  ~Caster() noexcept(false) {
    if (DLPACKPP_UNLIKELY(error_.has_value()) && !declined_ && std::uncaught_exceptions() == 0)
      rethrow();
  }

  /// Loads `src`, or declines (false, nothing pending); an exception to propagate is kept.
  bool from_python(handle src, std::uint32_t flags, cleanup_list* cleanup) noexcept {
    translate_errors();
    flags_ = flags;
    cleanup_ = cleanup;
    return without_unwinding([&] { return answer(argument_.load(src.ptr(), can_keep())); });
  }

  /// A new dlpackpp.Tensor owning `src` (bindings::detail::returned).
  template <class U>
  static handle from_cpp(U&& src, rv_policy /*policy*/, cleanup_list* /*cleanup*/) noexcept {
    translate_errors();
    return ::dlpackpp::bindings::detail::returned<V>(std::forward<U>(src));
  }

  /// Whether the caster holds a value (no kept exception); a container caster asks this, and
  /// an exception kept is then dropped with the caster, not thrown.
  template <typename U>
  bool can_cast() const noexcept {
    declined_ = error_.has_value();
    return !declined_;
  }
  /// The loaded value, read in place (or the kept exception, thrown).
  explicit operator V*() { return &take(); }
  /// The loaded value, read in place (or the kept exception, thrown).
  explicit operator V&() { return take(); }
  /// The loaded value, moved out (or the kept exception, thrown). Never NULL here: load
  /// declined a value that needed keeping where nothing could keep it.
  explicit operator V&&() {
    rethrow();
    return std::move(*argument_.moved_out([this](PyObject* kept) { return park(kept); }));
  }

 private:
  // The loader's answer as from_python returns it. A pending exception: for nb::cast
  // (cast_flags::manual) left pending and false, which nb::cast raises; otherwise kept here
  // and true, so that nanobind takes the value and rethrow() raises it.
  bool answer(::dlpackpp::bindings::detail::Loaded loaded) noexcept {
    using ::dlpackpp::bindings::detail::Loaded;
    if (DLPACKPP_LIKELY(loaded != Loaded::raised)) return loaded == Loaded::yes;
    if (manual()) return false;
    error_.emplace();  // takes the pending exception
    return true;
  }
  void rethrow() {
    if (DLPACKPP_UNLIKELY(error_.has_value())) {
      python_error error = std::move(*error_);
      error_.reset();
      throw error;
    }
  }
  V& take() {
    rethrow();
    return argument_.get();
  }
  bool manual() const noexcept {
    return (flags_ & static_cast<std::uint32_t>(cast_flags::manual)) != 0;
  }
  // Whether a value moved out can be kept on the call's cleanup list (park will not refuse).
  bool can_keep() const noexcept { return cleanup_ != nullptr && !manual(); }
  // Puts `capsule` (its reference taken) on the cleanup list; false where it cannot.
  bool park(PyObject* capsule) const noexcept {
    if (!can_keep()) {
      Py_DECREF(capsule);
      return false;
    }
    cleanup_->append(capsule);
    return true;
  }

  ::dlpackpp::bindings::detail::Argument<V> argument_;
  std::optional<python_error> error_;  // the producer's exception to propagate, if any
  std::uint32_t flags_ = 0;            // nanobind 2.x passes uint8_t, 3.x uint32_t: both fit
  cleanup_list* cleanup_ = nullptr;
  mutable bool declined_ = false;  // a container asked can_cast() with an exception kept
};
}  // namespace dlpackpp_caster

/// `TensorView` arguments, through the borrow engine (python::try_borrow_view): a view that
/// may be written only where the producer says so.
template <>
struct type_caster<::dlpackpp::TensorView> : dlpackpp_caster::Caster<::dlpackpp::TensorView> {
  /// What the signature says the parameter takes.
  static constexpr auto Name = dlpackpp_caster::tensor_name;
};

/// `ManagedTensor` and `LegacyManagedTensor` arguments (owning import, as
/// python::from_dlpack) and return values (a new dlpackpp.Tensor).
template <class DLManaged>
struct type_caster<::dlpackpp::BasicManagedTensor<DLManaged>>
    : dlpackpp_caster::Caster<::dlpackpp::BasicManagedTensor<DLManaged>> {
  /// What the signature says the parameter takes.
  static constexpr auto Name = dlpackpp_caster::tensor_name;
};

/// `TensorAccessor<T, N>` arguments: dtype, rank and (for a mutable T) writability and one
/// address per element checked, host-accessible memory only, through the borrow engine (a
/// mutable T asks for a writable view).
template <class T, int N>
struct type_caster<::dlpackpp::TensorAccessor<T, N>>
    : dlpackpp_caster::Caster<::dlpackpp::TensorAccessor<T, N>> {
  /// The parameter's signature text (`float32[*, *] writable`), built at compile time.
  static constexpr auto Name =
      const_name(::dlpackpp::bindings::detail::AccessorName<T, N>::text.data);
};

/// `OnStream<V, Stream>` arguments: V loaded as its own caster loads it, the producer first
/// asked to order its work before the stream the function launches on (bindings/on_stream.hpp).
template <class V, class Stream>
struct type_caster<::dlpackpp::bindings::OnStream<V, Stream>>
    : dlpackpp_caster::Caster<::dlpackpp::bindings::OnStream<V, Stream>> {
  /// What the signature says the parameter takes: what V's does.
  static constexpr auto Name = make_caster<V>::Name;
};

NAMESPACE_END(detail)
NAMESPACE_END(NB_NAMESPACE)

#endif  // nanobind available
