// SPDX-License-Identifier: Apache-2.0
/// @file
/// Errors at the Python boundary: the one Errc-to-exception mapping (exchange_api.hpp's
/// table), Python exceptions turned into Errors and back unchanged, and pending exceptions
/// kept intact across code that may run Python.
#pragma once

#include "dlpackpp/python/python_h.hpp"
#if DLPACKPP_PYTHON_AVAILABLE

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/exchange_api.hpp"  // python_error_class: the table, whatever dlpack.h

#include <cstddef>
#include <new>
#include <optional>
#include <string>
#include <string_view>

DLPACKPP_BEGIN_NAMESPACE
namespace python {
namespace detail {

using ::dlpackpp::detail::make_error;

/// The pending Python exception, moved out of the interpreter and back. Trivially
/// destructible on purpose (see PyErrorStash).
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
// instead of a translation. The Error copy keeps its message alive, so identity of what()
// cannot be confused with a later Error's. The exception references are deliberately not
// released at thread exit (no GIL there).
struct PyErrorStash {
  std::optional<Error> error;
  RaisedError raised;
};
inline PyErrorStash& error_stash() noexcept {
  static thread_local PyErrorStash stash;
  return stash;
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
  PyErrorStash& stash = error_stash();
  stash.raised.clear();
  stash.raised = raised;
  stash.error = error;
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
  detail::PyErrorStash& stash = detail::error_stash();
  if (stash.error && !stash.raised.empty() && stash.error->what() == error.what()) {
    stash.error.reset();
    stash.raised.restore();
    return;
  }
  PyErr_SetString(detail::exception_type_for(error.code()), error.what());
}

/// Whether `error` means "this object does not fit what was asked": dlpackpp's own checks
/// (dtype, rank, device, flags, version, a used capsule, ...), or a producer's exception that
/// says so, `BufferError` (the array API's "cannot be exported") or `AttributeError` (no
/// `__dlpack__`). False for anything else a producer raised (`KeyboardInterrupt`,
/// `SystemExit`, `MemoryError`, its own `TypeError`...): a caller that would try something
/// else instead should re-raise that (set_python_error does, unchanged). The binding casters
/// decline only what fits this.
inline bool does_not_fit(const Error& error) noexcept {
  const detail::PyErrorStash& stash = detail::error_stash();
  if (!stash.error || stash.raised.empty() || stash.error->what() != error.what()) return true;
  PyObject* raised = stash.raised.value();
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

#endif  // DLPACKPP_PYTHON_AVAILABLE
