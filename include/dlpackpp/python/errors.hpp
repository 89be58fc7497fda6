// SPDX-License-Identifier: Apache-2.0
/// @file
/// Errors at the Python boundary: the one Errc-to-exception mapping (exchange_api.hpp's
/// table), Python exceptions turned into Errors and back unchanged, and pending exceptions
/// kept intact across code that may run Python.
#pragma once

#include "dlpackpp/python/python_h.hpp"

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/exchange_api.hpp"  // python_error_class: the table, whatever dlpack.h

#include <cstddef>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE
namespace python {
namespace detail {

using ::dlpackpp::detail::make_error;

/// The pending Python exception, moved out of the interpreter and back. Trivially
/// destructible: whoever fetches it restores or clears it, with a thread state.
struct RaisedError {
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* exc = nullptr;
  void fetch() noexcept { exc = PyErr_GetRaisedException(); }
  void restore() noexcept {
    PyErr_SetRaisedException(exc);
    exc = nullptr;
  }
  void clear() noexcept { Py_CLEAR(exc); }
  bool empty() const noexcept { return exc == nullptr; }
  PyObject* value() const noexcept { return exc; }
  PyObject* traceback() const noexcept { return PyException_GetTraceback(exc); }  // new ref
  /// The exception (a new reference; its __traceback__ complete), this holder left empty.
  PyObject* take() noexcept { return std::exchange(exc, nullptr); }
  /// Makes `taken` (a reference from take(), stolen) the pending exception.
  static void raise(PyObject* taken) noexcept { PyErr_SetRaisedException(taken); }
#else
  PyObject* type = nullptr;
  PyObject* val = nullptr;
  PyObject* tb = nullptr;
  void fetch() noexcept {
    PyErr_Fetch(&type, &val, &tb);
    if (type != nullptr) PyErr_NormalizeException(&type, &val, &tb);
  }
  void restore() noexcept {
    PyErr_Restore(type, val, tb);
    type = val = tb = nullptr;
  }
  void clear() noexcept {
    Py_CLEAR(type);
    Py_CLEAR(val);
    Py_CLEAR(tb);
  }
  bool empty() const noexcept { return type == nullptr; }
  PyObject* value() const noexcept { return val; }
  // The fetched traceback: before 3.12 the value's __traceback__ lags behind the frames the
  // exception has passed since it was raised.
  PyObject* traceback() const noexcept {  // new ref
    Py_XINCREF(tb);
    return tb;
  }
  PyObject* take() noexcept {
    if (tb != nullptr) PyException_SetTraceback(val, tb);
    Py_CLEAR(type);
    Py_CLEAR(tb);
    return std::exchange(val, nullptr);
  }
  static void raise(PyObject* taken) noexcept {
    PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(taken));
    Py_INCREF(type);
    PyErr_Restore(type, taken, PyException_GetTraceback(taken));
  }
#endif
};

/// Keeps a pending exception intact across code that may call into Python (deleters run
/// from capsule destructors and tp_dealloc, where an exception can be in flight).
class PreserveError {
 public:
  PreserveError() noexcept { saved_.fetch(); }
  PreserveError(const PreserveError&) = delete;
  PreserveError& operator=(const PreserveError&) = delete;
  ~PreserveError() {
    if (!saved_.empty()) saved_.restore();
  }

 private:
  RaisedError saved_;
};

// The last Python exception a try_ function turned into an Error, per thread, so that
// set_python_error() re-raises the producer's own exception (type, message, traceback)
// instead of a translation. The Error copy (C++ only) is thread_local and keeps its message
// alive, so identity of what() cannot be confused with a later Error's. The exception itself
// lives in the thread state's dict, which CPython clears when the thread ends: what it holds
// (its traceback's frames and their locals) goes with the thread, not with the process.
inline std::optional<Error>& stashed_error() noexcept {
  static thread_local std::optional<Error> error;
  return error;
}

// The key of the stashed exception in the thread state's dict.
inline constexpr const char* stash_key = "dlpackpp.raised";

// Whether `error` is the stashed Error (the same message storage).
inline bool is_stashed(const Error& error) noexcept {
  const std::optional<Error>& stashed = stashed_error();
  return stashed && stashed->what() == error.what();
}

// The stashed exception's value, borrowed from the thread state's dict, or NULL.
inline PyObject* stashed_value() noexcept {
  PyObject* dict = PyThreadState_GetDict();
  return dict != nullptr ? PyDict_GetItemString(dict, stash_key) : nullptr;
}

// Keeps `raised` (its references taken) as the stashed exception for `error`; where the thread
// has no dict to keep it in, it is dropped and set_python_error() translates the Error.
inline void stash(const Error& error, RaisedError& raised) noexcept {
  stashed_error() = error;
  PyObject* dict = PyThreadState_GetDict();
  PyObject* kept = raised.take();
  if (dict == nullptr || kept == nullptr || PyDict_SetItemString(dict, stash_key, kept) != 0) {
    stashed_error().reset();
    PyErr_Clear();
  }
  Py_XDECREF(kept);
}

// Drops the stashed exception, if any; a pending exception stays pending.
inline void drop_stash() noexcept {
  stashed_error().reset();
  PyObject* dict = PyThreadState_GetDict();
  if (dict == nullptr || PyDict_GetItemString(dict, stash_key) == nullptr) return;
  RaisedError pending;
  pending.fetch();
  if (PyDict_DelItemString(dict, stash_key) != 0) PyErr_Clear();
  if (!pending.empty()) pending.restore();
}

// Restores the stashed exception as the pending one and drops the stash; false where nothing
// is stashed.
inline bool restore_stash() noexcept {
  PyObject* dict = PyThreadState_GetDict();
  PyObject* kept = dict != nullptr ? PyDict_GetItemString(dict, stash_key) : nullptr;
  if (kept == nullptr) return false;
  Py_INCREF(kept);
  RaisedError::raise(kept);
  RaisedError pending;
  pending.fetch();
  if (PyDict_DelItemString(dict, stash_key) != 0) PyErr_Clear();
  pending.restore();
  stashed_error().reset();
  return true;
}

// "__name__" of a type, for messages only (cold); a pending exception stays pending.
inline std::string type_name(PyObject* type) {
  PreserveError keep;
  std::string out = "<unknown type>";
  PyObject* name = PyObject_GetAttrString(type, "__name__");
  if (name != nullptr) {
    PyObject* bytes = PyUnicode_Check(name) ? PyUnicode_AsUTF8String(name) : nullptr;
    if (bytes != nullptr) {
      out.assign(PyBytes_AsString(bytes), static_cast<std::size_t>(PyBytes_Size(bytes)));
      Py_DECREF(bytes);
    }
    Py_DECREF(name);
  }
  PyErr_Clear();
  return out;
}

// The name of obj's type, for messages only.
inline std::string type_name_of(PyObject* obj) {
  return type_name(reinterpret_cast<PyObject*>(Py_TYPE(obj)));
}

// str(obj) for messages only (cold); a pending exception stays pending.
inline std::string object_str(PyObject* obj) {
  PreserveError keep;
  std::string out;
  PyObject* s = obj != nullptr ? PyObject_Str(obj) : nullptr;
  PyObject* bytes = s != nullptr ? PyUnicode_AsUTF8String(s) : nullptr;
  if (bytes != nullptr)
    out.assign(PyBytes_AsString(bytes), static_cast<std::size_t>(PyBytes_Size(bytes)));
  Py_XDECREF(bytes);
  Py_XDECREF(s);
  PyErr_Clear();
  return out;
}

/// Turns the pending Python exception into an Error (Errc::invalid_argument, message
/// "<context> raised <Type>: <str>") and keeps the exception for set_python_error().
DLPACKPP_COLD inline Error take_python_error(std::string_view context) {
  RaisedError raised;
  raised.fetch();
  std::string message(context);
  if (raised.empty()) {
    message += " failed without setting a Python exception";
    return Error(Errc::invalid_argument, message);
  }
  PyObject* value = raised.value();
  message += " raised ";
  message += type_name_of(value);
  const std::string text = object_str(value);
  if (!text.empty()) {
    message += ": ";
    message += text;
  }
  Error error(Errc::invalid_argument, message);
  stash(error, raised);
  return error;
}

/// The Python exception type for an error code: exchange_api.hpp's table, which the
/// producer kit's SetError kinds follow too. The one mapping every Python-facing error uses.
inline PyObject* exception_type_for(Errc code) noexcept {
  switch (::dlpackpp::detail::python_error_class(code)) {
    case ::dlpackpp::detail::PythonErrorClass::buffer_error:
      return PyExc_BufferError;
    case ::dlpackpp::detail::PythonErrorClass::type_error:
      return PyExc_TypeError;
    case ::dlpackpp::detail::PythonErrorClass::value_error:
      break;
  }
  return PyExc_ValueError;
}

/// The Python exception type for a SetError kind the producer kit reports (the names
/// python_error_name() gives, plus MemoryError and RuntimeError for what C++ threw).
inline PyObject* exception_type_named(std::string_view kind) noexcept {
  using ::dlpackpp::detail::python_error_name;
  using ::dlpackpp::detail::PythonErrorClass;
  if (kind == python_error_name(PythonErrorClass::buffer_error)) return PyExc_BufferError;
  if (kind == python_error_name(PythonErrorClass::type_error)) return PyExc_TypeError;
  if (kind == python_error_name(PythonErrorClass::value_error)) return PyExc_ValueError;
  if (kind == "MemoryError") return PyExc_MemoryError;
  return PyExc_RuntimeError;
}

/// Raises `message` as the exception named `kind`, unless a (more precise) Python exception
/// is already pending.
inline void raise_kind(std::string_view kind, std::string_view message) noexcept {
  if (PyErr_Occurred() != nullptr) return;
  PyObject* text =
      PyUnicode_FromStringAndSize(message.data(), static_cast<Py_ssize_t>(message.size()));
  if (text == nullptr) return;  // its MemoryError is pending
  PyErr_SetObject(exception_type_named(kind), text);
  Py_DECREF(text);
}

}  // namespace detail

/// Raises `error` as a Python exception, for a module function that then returns NULL:
/// BufferError for what cannot be exchanged (version, device, flags, read-only), TypeError for
/// a wrong dtype or rank, ValueError for the rest. An Error that a try_ function made from a
/// producer's Python exception re-raises that exception itself, unchanged.
inline void set_python_error(const Error& error) noexcept {
  if (detail::is_stashed(error) && detail::restore_stash()) return;
  PyErr_SetString(detail::exception_type_for(error.code()), error.what());
}

/// Drops the producer's Python exception that `error` keeps for set_python_error() (see
/// try_from_dlpack), for a caller that handles `error` without raising it: until then, or
/// until the thread's next such Error or the thread's end, the exception and what its
/// traceback references stay alive. Nothing for any other Error.
inline void discard_python_error(const Error& error) noexcept {
  if (detail::is_stashed(error)) detail::drop_stash();
}

/// Whether `error` means "this object does not fit what was asked": dlpackpp's own checks
/// (dtype, rank, device, flags, version, a used capsule, ...), or a producer's exception that
/// says so, `BufferError` (the array API's "cannot be exported") or `AttributeError` (no
/// `__dlpack__`). False for anything else a producer raised (`KeyboardInterrupt`,
/// `SystemExit`, `MemoryError`, its own `TypeError`...): a caller that would try something
/// else instead should re-raise that (set_python_error does, unchanged). The binding casters
/// decline only what fits this.
inline bool does_not_fit(const Error& error) noexcept {
  PyObject* raised = detail::is_stashed(error) ? detail::stashed_value() : nullptr;
  if (raised == nullptr) return true;
  return PyErr_GivenExceptionMatches(raised, PyExc_BufferError) != 0 ||
         PyErr_GivenExceptionMatches(raised, PyExc_AttributeError) != 0;
}

namespace detail {

/// Sets the Python exception for whatever a C++ call threw: the caller then returns NULL.
inline void set_error_from_current_exception() noexcept {
#if DLPACKPP_USE_EXCEPTIONS
  try {
    throw;
  } catch (const Error& e) {
    set_python_error(e);
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "dlpackpp: unknown C++ exception");
  }
#endif
}

/// Raises `error` and returns NULL: the tail of a Python-facing function that failed.
DLPACKPP_COLD inline PyObject* raise_python(const Error& error) noexcept {
  set_python_error(error);
  return nullptr;
}

}  // namespace detail
}  // namespace python
DLPACKPP_END_NAMESPACE
