// SPDX-License-Identifier: Apache-2.0
/// @file
/// Python bindings without a binding library: capsules, `__dlpack__` and exchange-API import,
/// borrowing, and the `dlpackpp.Tensor` export type. Opt-in (not in the umbrella header); needs
/// only `Python.h` (3.8 to 3.13, the limited API included; see docs/python.md for what the
/// limited API costs). Every function expects the GIL to be held unless it says otherwise.
#pragma once

// Where Python.h is not on the include path this header is empty, so that tools compiling
// every public header alone keep working; using its names then fails to compile (add
// Python's include folder, e.g. link CMake's Python3::Module).
#if defined(Py_PYTHON_H) || !defined(__has_include) || __has_include(<Python.h>)

// Python.h must come before any standard header; this header includes it itself so that a
// translation unit can simply start with <dlpackpp/python.hpp>.
#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/exchange_api.hpp"  // also the Errc-to-exception table, whatever dlpack.h
#include "dlpackpp/flags.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/producers.hpp"
#include "dlpackpp/tensor_view.hpp"
#include "dlpackpp/validate.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#if PY_VERSION_HEX < 0x03080000
#error "dlpackpp/python.hpp needs Python 3.8 or newer"
#endif

DLPACKPP_BEGIN_NAMESPACE
namespace python {

/// The owning handle imports produce: versioned where the dlpack.h in force has it, legacy
/// otherwise (the legacy-only subset; see docs/python.md).
using ImportedTensor = DefaultManagedTensor;

namespace detail {

using ::dlpackpp::detail::make_error;

// ---- interpreter state -------------------------------------------------------------------

#ifdef Py_LIMITED_API
// The limited API cannot ask whether the interpreter is finalizing; an atexit hook (which
// runs before finalization starts) sets this instead.
inline bool& atexit_seen() noexcept {
  static bool seen = false;
  return seen;
}
#endif

/// True once the interpreter is finalizing (or gone): deleters must not touch Python then.
inline bool interpreter_finalizing() noexcept {
  if (!Py_IsInitialized()) return true;
#if defined(Py_LIMITED_API)
  return atexit_seen();
#elif PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

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
  bool matches(PyObject* type) const noexcept {
    return PyErr_GivenExceptionMatches(exc, type) != 0;
  }
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
  bool matches(PyObject* t) const noexcept { return PyErr_GivenExceptionMatches(type, t) != 0; }
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
  message += type_name(reinterpret_cast<PyObject*>(Py_TYPE(value)));
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

/// The Python exception type for an error code (see set_python_error): exchange_api.hpp's
/// table, which the producer kit's SetError kinds follow too.
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

/// Sets the Python exception for whatever a C++ call threw: the caller then returns NULL.
inline void set_error_from_current_exception() noexcept;

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

namespace detail {
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

/// Runs `f` with the GIL from any thread; does nothing once the interpreter is finalizing
/// (taking the GIL then would hang or end the thread). Keeps a pending exception intact.
template <class F>
void with_gil_unless_finalizing(F&& f) noexcept {
  if (interpreter_finalizing()) return;
  const PyGILState_STATE state = PyGILState_Ensure();
  {
    PreserveError keep;
    f();
  }
  PyGILState_Release(state);
}
}  // namespace detail

/// A strong reference to a Python object that may be dropped on any thread: the deleter of a
/// tensor that keeps a Python object alive (pass it as `wrap`'s owner). Releasing takes the
/// GIL, and does nothing (leaks the reference) once the interpreter is finalizing.
class ObjectRef {
 public:
  /// No object.
  ObjectRef() noexcept = default;
  /// A new reference to `obj` (GIL held); NULL gives an empty ref.
  static ObjectRef borrow(PyObject* obj) noexcept {
    Py_XINCREF(obj);
    return ObjectRef(obj);
  }
  /// Takes over the reference the caller owns to `obj`.
  static ObjectRef steal(PyObject* obj) noexcept { return ObjectRef(obj); }
  /// Takes `other`'s reference.
  ObjectRef(ObjectRef&& other) noexcept : obj_(other.obj_) { other.obj_ = nullptr; }
  /// Drops the current reference and takes `other`'s.
  ObjectRef& operator=(ObjectRef&& other) noexcept {
    if (this != &other) {
      reset();
      obj_ = other.obj_;
      other.obj_ = nullptr;
    }
    return *this;
  }
  ObjectRef(const ObjectRef&) = delete;
  ObjectRef& operator=(const ObjectRef&) = delete;
  /// Drops the reference (see reset()).
  ~ObjectRef() { reset(); }
  /// Drops the reference from any thread, taking the GIL; a no-op once finalizing.
  void reset() noexcept {
    PyObject* obj = obj_;
    obj_ = nullptr;
    if (obj != nullptr) detail::with_gil_unless_finalizing([obj] { Py_DECREF(obj); });
  }
  /// The object (borrowed), or NULL.
  PyObject* get() const noexcept { return obj_; }

 private:
  explicit ObjectRef(PyObject* obj) noexcept : obj_(obj) {}
  PyObject* obj_ = nullptr;
};

// ---- capsules ------------------------------------------------------------------------------

namespace detail {
template <class M>
struct capsule_names;
template <>
struct capsule_names<DLManagedTensor> {
  static constexpr const char* fresh = "dltensor";
  static constexpr const char* used = "used_dltensor";
};
#if DLPACKPP_HAS_VERSIONED
template <>
struct capsule_names<DLManagedTensorVersioned> {
  static constexpr const char* fresh = "dltensor_versioned";
  static constexpr const char* used = "used_dltensor_versioned";
};
#endif

// Calls the deleter of a capsule nobody consumed (its name is still the fresh one), keeping
// any exception in flight intact: the capsule may die while one propagates.
template <class M>
void capsule_destructor(PyObject* capsule) {
  // One read of the name and one compare (PyCapsule_IsValid would compare it again before
  // GetPointer). The capsule is ours and valid, so GetName cannot fail and set an exception
  // over the one that may be in flight.
  const char* name = PyCapsule_GetName(capsule);
  if (name == nullptr || std::strcmp(name, capsule_names<M>::fresh) != 0) return;  // consumed
  PreserveError keep;
  auto* managed = static_cast<M*>(PyCapsule_GetPointer(capsule, name));
  ::dlpackpp::detail::release_to_producer(managed);
}

inline bool name_is(const char* name, const char* expected) noexcept {
  return name != nullptr && std::strcmp(name, expected) == 0;
}

}  // namespace detail

/// A new reference to a `"dltensor"` capsule owning `tensor` (the handle is emptied); when no
/// consumer takes it, the capsule's death calls the deleter exactly once. On failure returns
/// NULL with a Python exception set and leaves `tensor` untouched.
inline PyObject* to_capsule(LegacyManagedTensor&& tensor) noexcept {
  using Names = detail::capsule_names<DLManagedTensor>;
  if (!tensor) {
    PyErr_SetString(PyExc_ValueError, "dlpackpp: to_capsule of an empty handle");
    return nullptr;
  }
  PyObject* capsule =
      PyCapsule_New(tensor.get(), Names::fresh, &detail::capsule_destructor<DLManagedTensor>);
  if (capsule != nullptr) static_cast<void>(tensor.release());
  return capsule;
}

#if DLPACKPP_HAS_VERSIONED
/// A new reference to a `"dltensor_versioned"` capsule owning `tensor` (the handle is
/// emptied); when no consumer takes it, the capsule's death calls the deleter exactly once. On
/// failure returns NULL with a Python exception set and leaves `tensor` untouched.
inline PyObject* to_capsule(ManagedTensor&& tensor) noexcept {
  using Names = detail::capsule_names<DLManagedTensorVersioned>;
  if (!tensor) {
    PyErr_SetString(PyExc_ValueError, "dlpackpp: to_capsule of an empty handle");
    return nullptr;
  }
  PyObject* capsule = PyCapsule_New(tensor.get(), Names::fresh,
                                    &detail::capsule_destructor<DLManagedTensorVersioned>);
  if (capsule != nullptr) static_cast<void>(tensor.release());
  return capsule;
}
#endif

namespace detail {
// Takes the tensor out of a fresh capsule of kind M: renames it first (that is taking
// ownership, so the capsule's destructor no longer frees), then adopts, which releases a
// malformed tensor itself. No path frees twice.
template <class M>
Result<BasicManagedTensor<M>> take_from_capsule(PyObject* capsule, const ValidateOptions& options) {
  using Names = capsule_names<M>;
  auto* managed = static_cast<M*>(PyCapsule_GetPointer(capsule, Names::fresh));
  if (managed == nullptr) {
    PyErr_Clear();
    return make_error(Errc::null_pointer, "capsule \"", Names::fresh, "\" holds a NULL pointer");
  }
  if (PyCapsule_SetName(capsule, Names::used) != 0) return take_python_error("PyCapsule_SetName");
  return BasicManagedTensor<M>::try_adopt(managed, options);
}

#if DLPACKPP_HAS_VERSIONED
// to_versioned() for a legacy tensor that adoption has just validated: with flags 0 its
// re-validation would repeat the same checks on every legacy import, so the same wrapper is
// made without them (the legacy deleter stays responsible, called exactly once).
inline ManagedTensor versioned_from_adopted(LegacyManagedTensor&& legacy) {
  using Wrapper = ::dlpackpp::detail::ConversionWrapper<DLManagedTensorVersioned, DLManagedTensor>;
  DLManagedTensorVersioned* out =
      Wrapper::wrap(legacy.get());  // on bad_alloc, legacy still owns it
  static_cast<void>(legacy.release());
  out->version.major = DLPACKPP_DLPACK_MAJOR;
  out->version.minor = DLPACKPP_DLPACK_MINOR;
  out->flags = 0;
  return ManagedTensor::adopt_unchecked(out);
}
#endif

DLPACKPP_COLD inline Error capsule_name_error(PyObject* capsule) {
  if (!PyCapsule_CheckExact(capsule)) {
    return make_error(Errc::invalid_argument, "expected a DLPack capsule, got a ",
                      type_name(reinterpret_cast<PyObject*>(Py_TYPE(capsule))));
  }
  const char* name = PyCapsule_GetName(capsule);
  PyErr_Clear();
  if (name_is(name, "used_dltensor") || name_is(name, "used_dltensor_versioned")) {
    return make_error(Errc::invalid_argument, "capsule \"", name,
                      "\" was already consumed; a DLPack capsule can be consumed once");
  }
  return make_error(Errc::invalid_argument, "capsule name is \"", name != nullptr ? name : "(NULL)",
                    "\", expected \"dltensor_versioned\" or \"dltensor\"");
}
}  // namespace detail

/// Takes ownership of the tensor in a `"dltensor_versioned"` or `"dltensor"` capsule (a legacy
/// one is wrapped with to_versioned) and renames the capsule `"used_..."`. A used capsule or
/// one of another name is refused and left untouched; a tensor that fails validation is
/// released exactly once (the capsule stays renamed: ownership was taken).
inline Result<ImportedTensor> try_from_capsule(PyObject* capsule,
                                               const ValidateOptions& options = {}) {
  if (capsule == nullptr) return detail::make_error(Errc::null_pointer, "capsule is NULL");
  if (PyCapsule_CheckExact(capsule)) {
    // One look at the name picks the kind (GetPointer checks it again), the versioned kind
    // first: a modern producer's capsule costs one compare.
    const char* name = PyCapsule_GetName(capsule);
#if DLPACKPP_HAS_VERSIONED
    if (detail::name_is(name, "dltensor_versioned")) {
      return detail::take_from_capsule<DLManagedTensorVersioned>(capsule, options);
    }
#endif
    if (detail::name_is(name, "dltensor")) {
      Result<LegacyManagedTensor> legacy =
          detail::take_from_capsule<DLManagedTensor>(capsule, options);
#if DLPACKPP_HAS_VERSIONED
      if (!legacy) return legacy.error();
      return detail::versioned_from_adopted(std::move(*legacy));
#else
      return legacy;
#endif
    }
  }
  return detail::capsule_name_error(capsule);
}

/// As try_from_capsule, throwing the Error.
inline ImportedTensor from_capsule(PyObject* capsule, const ValidateOptions& options = {}) {
  return try_from_capsule(capsule, options).value();
}

// ---- per-interpreter state -----------------------------------------------------------------

namespace detail {

#if DLPACKPP_HAS_EXCHANGE_API
using ExchangeApi = DLPackExchangeAPI;
#else
struct ExchangeApi;  // never defined: no exchange API with this dlpack.h
#endif

/// What import remembers about one producer type (holding a strong reference to it, so the
/// address cannot be reused by another type while the entry lives).
struct TypeEntry {
  PyObject* type = nullptr;
  const ExchangeApi* api = nullptr;  ///< usable exchange table, or NULL
  bool legacy = false;               ///< __dlpack__ rejected max_version with TypeError
  PyObject* dlpack = nullptr;        ///< the type's own __dlpack__ (strong), see cached_dlpack
  unsigned int version_tag = 0;      ///< the type's tp_version_tag when `dlpack` was read
};

// The full API (3.9+, vectorcall) lets import keep a type's `__dlpack__` function instead of
// looking the name up on every call. It is kept only where calling it with the object first
// is exactly what `obj.__dlpack__(...)` does: the type uses the generic attribute lookup, its
// instances have no __dict__ (nothing can shadow the method), and the attribute is a plain
// function or method descriptor (Py_TPFLAGS_METHOD_DESCRIPTOR). Types can be changed at run
// time, so every use compares the type's tp_version_tag, which CPython changes whenever the
// type or a base is modified: a modified type goes back to the name lookup for good.
#if !defined(Py_LIMITED_API) && PY_VERSION_HEX >= 0x03090000
#define DLPACKPP_PY_CACHE_DLPACK 1
#else
#define DLPACKPP_PY_CACHE_DLPACK 0
#endif

// Keyword slots of __dlpack__, as bits of a mask.
enum Keyword : unsigned { kw_max_version = 1, kw_stream = 2, kw_dl_device = 4, kw_copy = 8 };

/// One per interpreter, shared by every extension built with the same dlpackpp ABI (it lives
/// in the interpreter's dict under a name carrying that ABI).
struct Internals {
  static constexpr int type_slots = 16;
  PyObject* tensor_type = nullptr;
  PyObject* str_dlpack = nullptr;
  PyObject* str_exchange = nullptr;
  PyObject* str_exchange_int = nullptr;
  PyObject* keyword_names[4] = {};
  PyObject* max_version = nullptr;  ///< (1, minor of the dlpack.h in force)
  PyObject* kwnames[16] = {};       ///< tuples of keyword names per mask, made on first use
  TypeEntry types[type_slots];
  int type_count = 0;
  int next_evict = 0;
};

inline Internals*& cached_internals() noexcept {
  static Internals* cached = nullptr;
  return cached;
}
inline const void*& cached_interpreter() noexcept {
  static const void* cached = nullptr;
  return cached;
}

inline void destroy_internals(PyObject* capsule) {
  auto* in = static_cast<Internals*>(PyCapsule_GetPointer(capsule, nullptr));
  if (in == nullptr) {
    PyErr_Clear();
    return;
  }
  if (cached_internals() == in) {
    cached_internals() = nullptr;
    cached_interpreter() = nullptr;
  }
  Py_XDECREF(in->tensor_type);
  Py_XDECREF(in->str_dlpack);
  Py_XDECREF(in->str_exchange);
  Py_XDECREF(in->str_exchange_int);
  for (PyObject* s : in->keyword_names) Py_XDECREF(s);
  Py_XDECREF(in->max_version);
  for (PyObject* t : in->kwnames) Py_XDECREF(t);
  for (int i = 0; i < in->type_count; ++i) {
    Py_XDECREF(in->types[i].type);
    Py_XDECREF(in->types[i].dlpack);
  }
  delete in;
}

#define DLPACKPP_PY_STR2(x) #x
#define DLPACKPP_PY_STR(x) DLPACKPP_PY_STR2(x)
inline constexpr const char internals_key[] =
    "__dlpackpp_internals_" DLPACKPP_PY_STR(DLPACKPP_ABI_NAMESPACE) "_1__";
#undef DLPACKPP_PY_STR
#undef DLPACKPP_PY_STR2

inline const void* current_interpreter() noexcept {
#if !defined(Py_LIMITED_API) || Py_LIMITED_API + 0 >= 0x03090000
#if PY_VERSION_HEX >= 0x03090000
  return PyInterpreterState_Get();
#else
  return PyThreadState_Get()->interp;
#endif
#else
  return nullptr;    // limited API before 3.9: no interpreter identity, looked up every time
#endif
}

#ifdef Py_LIMITED_API
inline PyObject* mark_atexit(PyObject*, PyObject*) {
  atexit_seen() = true;
  Py_RETURN_NONE;
}
inline bool register_atexit() {
  static PyMethodDef def = {"_dlpackpp_atexit", &mark_atexit, METH_NOARGS, nullptr};
  atexit_seen() = false;
  PyObject* fn = PyCFunction_New(&def, nullptr);
  if (fn == nullptr) return false;
  PyObject* atexit = PyImport_ImportModule("atexit");
  PyObject* r = atexit != nullptr ? PyObject_CallMethod(atexit, "register", "O", fn) : nullptr;
  Py_XDECREF(atexit);
  Py_DECREF(fn);
  Py_XDECREF(r);
  return r != nullptr;
}
#endif

DLPACKPP_COLD inline Internals* make_internals() {
  auto* in = new (std::nothrow) Internals();
  if (in == nullptr) {
    PyErr_NoMemory();
    return nullptr;
  }
  static const char* const names[4] = {"max_version", "stream", "dl_device", "copy"};
  bool ok =
      (in->str_dlpack = PyUnicode_InternFromString("__dlpack__")) != nullptr &&
      (in->str_exchange = PyUnicode_InternFromString("__dlpack_c_exchange_api__")) != nullptr &&
      (in->str_exchange_int = PyUnicode_InternFromString("__c_dlpack_exchange_api__")) != nullptr;
  for (int i = 0; ok && i < 4; ++i)
    ok = (in->keyword_names[i] = PyUnicode_InternFromString(names[i])) != nullptr;
  if (ok) {
#if DLPACKPP_HAS_VERSIONED
    in->max_version = Py_BuildValue("(ii)", int{DLPACKPP_DLPACK_MAJOR}, int{DLPACKPP_DLPACK_MINOR});
    ok = in->max_version != nullptr;
#endif
  }
#ifdef Py_LIMITED_API
  ok = ok && register_atexit();
#endif
  if (!ok) {
    PyObject* capsule = PyCapsule_New(in, nullptr, nullptr);  // borrow the cleanup below
    if (capsule != nullptr) {
      destroy_internals(capsule);
      Py_DECREF(capsule);
    } else {
      delete in;  // partial references leak; this is out-of-memory territory
    }
    return nullptr;
  }
  return in;
}

/// The dict that holds per-interpreter state.
inline PyObject* state_dict() {
#ifdef Py_LIMITED_API
  return PyEval_GetBuiltins();  // borrowed
#elif PY_VERSION_HEX >= 0x03090000
  return PyInterpreterState_GetDict(PyInterpreterState_Get());
#else
  return PyInterpreterState_GetDict(PyThreadState_Get()->interp);
#endif
}

DLPACKPP_COLD inline Internals* internals_slow(const void* interp) {
  PyObject* dict = state_dict();
  if (dict == nullptr) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_RuntimeError, "dlpackpp: no interpreter state dict");
    return nullptr;
  }
  PyObject* found = PyDict_GetItemString(dict, internals_key);  // borrowed
  Internals* in = nullptr;
  if (found != nullptr) {
    in = static_cast<Internals*>(PyCapsule_GetPointer(found, nullptr));
    if (in == nullptr) return nullptr;
  } else {
    in = make_internals();
    if (in == nullptr) return nullptr;
    PyObject* capsule = PyCapsule_New(in, nullptr, &destroy_internals);
    if (capsule == nullptr) {
      delete in;
      return nullptr;
    }
    const int rc = PyDict_SetItemString(dict, internals_key, capsule);
    Py_DECREF(capsule);  // the dict owns it now (or it died and freed `in`)
    if (rc != 0) return nullptr;
  }
  if (interp != nullptr) {
    cached_internals() = in;
    cached_interpreter() = interp;
  }
  return in;
}

/// This interpreter's state; NULL with a Python exception set on failure.
inline Internals* internals() {
  const void* interp = current_interpreter();
  Internals* cached = cached_internals();
  if (cached != nullptr && interp != nullptr && cached_interpreter() == interp) {
    return cached;
  }
  return internals_slow(interp);
}

// ---- producer types ----------------------------------------------------------------------

// Looks the exchange table up on the type: `__dlpack_c_exchange_api__` (a
// "dlpack_exchange_api" capsule, DLPack 1.3), else the DLPack 1.2 draft's
// `__c_dlpack_exchange_api__` (an int holding the address). NULL when absent, malformed or of
// another major version: the object is then imported through __dlpack__.
DLPACKPP_COLD inline const ExchangeApi* lookup_exchange_api(Internals& in, PyObject* type) {
#if DLPACKPP_HAS_EXCHANGE_API
  const void* head = nullptr;
  PyObject* attr = PyObject_GetAttr(type, in.str_exchange);
  if (attr != nullptr) {
    if (PyCapsule_IsValid(attr, "dlpack_exchange_api") != 0) {
      head = PyCapsule_GetPointer(attr, "dlpack_exchange_api");
    }
  } else {
    PyErr_Clear();
    attr = PyObject_GetAttr(type, in.str_exchange_int);
    if (attr != nullptr && PyLong_Check(attr)) head = PyLong_AsVoidPtr(attr);
  }
  Py_XDECREF(attr);
  PyErr_Clear();
  if (head == nullptr) return nullptr;
  return ::dlpackpp::find_exchange_api(static_cast<const DLPackExchangeAPIHeader*>(head));
#else
  static_cast<void>(in);
  static_cast<void>(type);
  return nullptr;
#endif
}

// The type's `__dlpack__` where it may be kept (see DLPACKPP_PY_CACHE_DLPACK): a new
// reference and the version tag it is valid for, else NULL (no exception pending).
DLPACKPP_COLD inline PyObject* lookup_dlpack(Internals& in, PyObject* type, unsigned int& tag) {
#if DLPACKPP_PY_CACHE_DLPACK
  auto* tp = reinterpret_cast<PyTypeObject*>(type);
  bool has_dict = tp->tp_dictoffset != 0;
#ifdef Py_TPFLAGS_MANAGED_DICT
  has_dict = has_dict || PyType_HasFeature(tp, Py_TPFLAGS_MANAGED_DICT);
#endif
  if (has_dict || tp->tp_getattro != PyObject_GenericGetAttr) return nullptr;
  PyObject* attr = PyObject_GetAttr(type, in.str_dlpack);  // also gives the type a version tag
  if (attr == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  if (!PyType_HasFeature(Py_TYPE(attr), Py_TPFLAGS_METHOD_DESCRIPTOR) ||
      !PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG)) {
    Py_DECREF(attr);
    return nullptr;
  }
  tag = tp->tp_version_tag;
  return attr;
#else
  static_cast<void>(in);
  static_cast<void>(type);
  static_cast<void>(tag);
  return nullptr;
#endif
}

// The kept `__dlpack__` of `obj`'s type (borrowed) while the type is unmodified, else NULL.
inline PyObject* cached_dlpack(const TypeEntry& entry, PyObject* obj) noexcept {
#if DLPACKPP_PY_CACHE_DLPACK
  PyTypeObject* tp = Py_TYPE(obj);
  if (entry.dlpack != nullptr && PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG) &&
      tp->tp_version_tag == entry.version_tag) {
    return entry.dlpack;
  }
#else
  static_cast<void>(entry);
  static_cast<void>(obj);
#endif
  return nullptr;
}

DLPACKPP_COLD inline TypeEntry* add_type(Internals& in, PyObject* type) {
  const ExchangeApi* api = lookup_exchange_api(in, type);
  unsigned int tag = 0;
  PyObject* dlpack = lookup_dlpack(in, type, tag);
  int slot = in.type_count;
  PyObject* evicted = nullptr;
  PyObject* evicted_dlpack = nullptr;
  if (slot < Internals::type_slots) {
    ++in.type_count;
  } else {
    slot = in.next_evict;
    in.next_evict = (slot + 1) % Internals::type_slots;
    evicted = in.types[slot].type;
    evicted_dlpack = in.types[slot].dlpack;
  }
  Py_INCREF(type);
  in.types[slot] = TypeEntry{type, api, false, dlpack, tag};
  Py_XDECREF(evicted_dlpack);  // last: dropping a type may run Python code
  Py_XDECREF(evicted);
  for (int i = 0; i < in.type_count; ++i) {
    if (in.types[i].type == type) return &in.types[i];
  }
  return nullptr;  // unreachable unless the decref above re-entered and evicted it again
}

/// What import knows about `type` (cached per type, strong reference). The pointer is valid
/// until the next call into Python: read what you need at once.
inline TypeEntry* find_type(Internals& in, PyObject* type) {
  for (int i = 0; i < in.type_count; ++i) {
    if (in.types[i].type == type) return &in.types[i];
  }
  return add_type(in, type);
}

}  // namespace detail

// ---- import ------------------------------------------------------------------------------

/// How try_from_dlpack asks for a tensor: each optional is passed to `__dlpack__` as the
/// keyword of the same name only when set; `validate` checks the imported tensor.
struct ImportOptions {
  /// The consumer's stream (`stream=`), for the producer to synchronize with.
  std::optional<std::intptr_t> stream;
  /// The device the consumer wants the tensor on (`dl_device=`).
  std::optional<Device> dl_device;
  /// True: the producer must copy; false: it must not (`copy=`).
  std::optional<bool> copy;
  /// Checks applied to the imported tensor.
  ValidateOptions validate;
};

namespace detail {

// The exchange table cannot carry a stream, a target device or a copy request: those go
// through __dlpack__.
inline bool exchange_can_serve(const ImportOptions& options) noexcept {
  return !options.stream && !options.dl_device && !(options.copy && *options.copy);
}

// Turns a failure of an exchange-table call into an Error, keeping the producer's Python
// exception when it set one.
DLPACKPP_COLD inline Error exchange_error(const Error& error, PyObject* obj, const char* what) {
  if (PyErr_Occurred() == nullptr) return error;
  std::string context = type_name(reinterpret_cast<PyObject*>(Py_TYPE(obj)));
  context += "'s exchange API ";
  context += what;
  return take_python_error(context);
}

// The options' extra checks beyond what adoption always checks.
inline Result<void> extra_checks(const DLTensor& t, std::uint64_t flags,
                                 const ValidateOptions& options) {
  if (!options.require_strides && options.alignment == 0) return {};
  ValidateOptions with_flags = options;
  with_flags.flags = flags;
  return validate(t, with_flags);
}

#if DLPACKPP_HAS_EXCHANGE_API
inline Result<ImportedTensor> import_exchange(const DLPackExchangeAPI* api, PyObject* obj,
                                              const ImportOptions& options) {
  Result<ManagedTensor> r = ::dlpackpp::managed_from_object(api, obj, options.validate);
  if (DLPACKPP_UNLIKELY(!r))
    return exchange_error(r.error(), obj, "managed_tensor_from_py_object_no_sync");
  return r;
}
#endif

// obj.__dlpack__(**keywords in `mask`), through `method` (the type's kept __dlpack__, which
// the caller holds a reference to) where not NULL; a new reference or NULL with a Python
// exception set.
inline PyObject* call_dlpack(Internals& in, PyObject* obj, PyObject* method, unsigned mask,
                             const ImportOptions& options) {
  // Arguments are borrowed by the call; only the ones made here are released after it.
  PyObject* storage[6] = {nullptr, obj, nullptr, nullptr, nullptr, nullptr};
  PyObject** args = storage + 1;  // storage[0] is the slot PY_VECTORCALL_ARGUMENTS_OFFSET allows
  PyObject* made[2] = {nullptr, nullptr};
  Py_ssize_t n = 1;
  bool ok = true;
  if ((mask & kw_max_version) != 0) args[n++] = in.max_version;
  if ((mask & kw_stream) != 0) {
    made[0] = PyLong_FromLongLong(static_cast<long long>(*options.stream));
    ok = ok && (args[n++] = made[0]) != nullptr;
  }
  if ((mask & kw_dl_device) != 0) {
    const Device d = *options.dl_device;
    made[1] = Py_BuildValue("(ii)", static_cast<int>(d.type()), static_cast<int>(d.id()));
    ok = ok && (args[n++] = made[1]) != nullptr;
  }
  if ((mask & kw_copy) != 0) args[n++] = *options.copy ? Py_True : Py_False;
  PyObject* result = nullptr;
  if (ok && mask != 0 && in.kwnames[mask] == nullptr) {
    PyObject* names = PyTuple_New(n - 1);
    Py_ssize_t k = 0;
    for (unsigned bit = 0; names != nullptr && bit < 4; ++bit) {
      if ((mask & (1u << bit)) == 0) continue;
      Py_INCREF(in.keyword_names[bit]);
      PyTuple_SetItem(names, k++, in.keyword_names[bit]);
    }
    in.kwnames[mask] = names;
    ok = names != nullptr;
  }
  if (ok) {
#if DLPACKPP_PY_CACHE_DLPACK
    if (method != nullptr) {
      result = PyObject_Vectorcall(method, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                   mask != 0 ? in.kwnames[mask] : nullptr);
    } else {
      result = PyObject_VectorcallMethod(in.str_dlpack, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                         mask != 0 ? in.kwnames[mask] : nullptr);
    }
#elif defined(Py_LIMITED_API) && Py_LIMITED_API + 0 >= 0x030C0000 && PY_VERSION_HEX >= 0x030C0000
    static_cast<void>(method);
    result = PyObject_VectorcallMethod(in.str_dlpack, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                       mask != 0 ? in.kwnames[mask] : nullptr);
#else
    method = PyObject_GetAttr(obj, in.str_dlpack);  // never kept without vectorcall
    PyObject* empty = method != nullptr ? PyTuple_New(0) : nullptr;
    PyObject* kwargs = empty != nullptr && mask != 0 ? PyDict_New() : nullptr;
    bool built = empty != nullptr && (mask == 0 || kwargs != nullptr);
    for (Py_ssize_t i = 1; built && i < n; ++i) {
      built = PyDict_SetItem(kwargs, PyTuple_GetItem(in.kwnames[mask], i - 1), args[i]) == 0;
    }
    if (built) result = PyObject_Call(method, empty, kwargs);
    Py_XDECREF(kwargs);
    Py_XDECREF(empty);
    Py_XDECREF(method);
#endif
  }
  Py_XDECREF(made[0]);
  Py_XDECREF(made[1]);
  return result;
}

inline void remember_legacy(Internals& in, PyObject* type) noexcept {
  for (int i = 0; i < in.type_count; ++i) {
    if (in.types[i].type == type) in.types[i].legacy = true;
  }
}

// The legacy protocol knows neither dl_device nor copy: the request is checked afterwards.
DLPACKPP_COLD inline Result<ImportedTensor> check_legacy_result(Result<ImportedTensor>&& r,
                                                                PyObject* type,
                                                                const ImportOptions& options) {
  if (r && options.copy && *options.copy) {
    r->reset();
    return make_error(Errc::version_mismatch, type_name(type),
                      ".__dlpack__ speaks only the legacy protocol (it rejected max_version), "
                      "which cannot promise the copy=True that was asked for");
  }
  if (r && options.dl_device && r->device() != *options.dl_device) {
    const Device got = r->device();
    r->reset();
    return make_error(Errc::device_mismatch, type_name(type), ".__dlpack__ gave a tensor on ",
                      got.to_string(), ", dl_device asked for ", options.dl_device->to_string(),
                      " and the legacy protocol cannot move it");
  }
  return std::move(r);
}

// A reference owned for one scope, with the GIL held throughout (ObjectRef is for any thread).
struct ScopedRef {
  explicit ScopedRef(PyObject* obj) noexcept : obj_(obj) { Py_XINCREF(obj_); }
  ScopedRef(const ScopedRef&) = delete;
  ScopedRef& operator=(const ScopedRef&) = delete;
  ~ScopedRef() { Py_XDECREF(obj_); }
  PyObject* get() const noexcept { return obj_; }

 private:
  PyObject* obj_;
};

// `method`: the type's kept __dlpack__ (borrowed from its entry) or NULL.
inline Result<ImportedTensor> import_dlpack(Internals& in, PyObject* obj, bool legacy,
                                            PyObject* method, const ImportOptions& options) {
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(obj));
  const ScopedRef held(method);  // __dlpack__ may run Python code that evicts the entry
#if !DLPACKPP_HAS_VERSIONED
  legacy = true;  // this dlpack.h cannot read a versioned tensor, so never ask for one
#endif
  const unsigned legacy_mask = options.stream ? unsigned{kw_stream} : 0u;
  unsigned mask = legacy_mask;
  if (!legacy) {
    mask |= kw_max_version;
    if (options.dl_device) mask |= kw_dl_device;
    if (options.copy) mask |= kw_copy;
  }
  PyObject* capsule = call_dlpack(in, obj, held.get(), mask, options);
  if (DLPACKPP_UNLIKELY(capsule == nullptr)) {
    if (!legacy && PyErr_ExceptionMatches(PyExc_TypeError) != 0) {
      // An older producer: its __dlpack__ takes no max_version. Retry without the new
      // keywords. Unless the retry fails with TypeError too (then the first TypeError meant
      // something else and is the one reported), the type speaks the legacy protocol: that
      // is remembered, and a refusal of the retry (e.g. NumPy 1.x's BufferError for a
      // read-only array) is the error reported.
      RaisedError first;
      first.fetch();
      capsule = call_dlpack(in, obj, held.get(), legacy_mask, options);
      if (capsule != nullptr || PyErr_ExceptionMatches(PyExc_TypeError) == 0) {
        first.clear();
        legacy = true;
        remember_legacy(in, type);
      } else {
        PyErr_Clear();
        first.restore();
      }
    }
    if (capsule == nullptr) return take_python_error(type_name(type) + ".__dlpack__");
  }
  Result<ImportedTensor> r = try_from_capsule(capsule, options.validate);
  Py_DECREF(capsule);  // renamed when consumed, so its destructor does nothing
  if (DLPACKPP_UNLIKELY(!r)) return r;
  if (DLPACKPP_UNLIKELY(legacy && (options.copy || options.dl_device))) {
    return check_legacy_result(std::move(r), type, options);
  }
  if (options.validate.require_strides || options.validate.alignment != 0) {
    Result<void> extra = extra_checks(r->get()->dl_tensor, r->flags(), options.validate);
    if (!extra) return extra.error();
  }
  return r;
}

// try_from_dlpack once the interpreter state and the type's entry are known (try_borrow
// has looked both up already when it falls back to an owning import).
inline Result<ImportedTensor> import_object(Internals& in, const TypeEntry& entry, PyObject* obj,
                                            const ImportOptions& options) {
#if DLPACKPP_HAS_EXCHANGE_API
  if (entry.api != nullptr && exchange_can_serve(options))
    return import_exchange(entry.api, obj, options);
#endif
  return import_dlpack(in, obj, entry.legacy, cached_dlpack(entry, obj), options);
}

}  // namespace detail

/// Imports any object that speaks DLPack, taking ownership of what it exports. Where
/// `type(obj)` offers the exchange API (and no stream, dl_device or copy=True is asked for)
/// its `managed_tensor_from_py_object_no_sync` is used: no stream synchronization, so launch
/// work on current_stream(obj, device). Otherwise `obj.__dlpack__(max_version=(1, N), ...)`,
/// retried without the keywords an older producer rejects with TypeError (remembered per
/// type). A Python exception from the producer comes back as an Error that
/// set_python_error() re-raises unchanged.
inline Result<ImportedTensor> try_from_dlpack(PyObject* obj, const ImportOptions& options = {}) {
  if (DLPACKPP_UNLIKELY(obj == nullptr))
    return detail::make_error(Errc::null_pointer, "object is NULL");
  detail::Internals* in = detail::internals();
  if (DLPACKPP_UNLIKELY(in == nullptr))
    return detail::take_python_error("dlpackpp's interpreter state");
  detail::TypeEntry* entry = detail::find_type(*in, reinterpret_cast<PyObject*>(Py_TYPE(obj)));
  if (DLPACKPP_UNLIKELY(entry == nullptr))
    return detail::take_python_error("dlpackpp's type cache");
  return detail::import_object(*in, *entry, obj, options);
}

/// As try_from_dlpack, throwing the Error.
inline ImportedTensor from_dlpack(PyObject* obj, const ImportOptions& options = {}) {
  return try_from_dlpack(obj, options).value();
}

namespace detail {
template <class R>
struct borrow_result {
  using type = Result<R>;
};
template <class X>
struct borrow_result<Result<X>> {
  using type = Result<X>;
};
template <class F>
using borrow_result_t = typename borrow_result<std::invoke_result_t<F&, const TensorView&>>::type;

template <class F>
borrow_result_t<F> call_with_view(F& f, const TensorView& view) {
  if constexpr (std::is_void<std::invoke_result_t<F&, const TensorView&>>::value) {
    f(view);
    return Result<void>();
  } else {
    return f(view);
  }
}

// Forward declaration: the dlpackpp.Tensor fast path of try_borrow (defined with the type).
inline const ImportedTensor* own_tensor_of(Internals& in, PyObject* obj) noexcept;
}  // namespace detail

/// Calls `f(const TensorView&)` on `obj`'s tensor and returns its result (a `Result<X>` that
/// `f` returns is passed through, `void` gives `Result<void>`). Through the type's
/// `dltensor_from_py_object_no_sync` when it offers one (no allocation, no ownership),
/// else through try_from_dlpack. The view is valid only inside `f`.
template <class F>
detail::borrow_result_t<F> try_borrow(PyObject* obj, F&& f, const ImportOptions& options = {}) {
  if (DLPACKPP_UNLIKELY(obj == nullptr))
    return detail::make_error(Errc::null_pointer, "object is NULL");
  detail::Internals* in = detail::internals();
  if (DLPACKPP_UNLIKELY(in == nullptr))
    return detail::take_python_error("dlpackpp's interpreter state");
  if (const ImportedTensor* own = detail::own_tensor_of(*in, obj)) {
    // Our own type: read it directly, flags (READ_ONLY) included, which a DLTensor lacks.
    Result<void> extra =
        detail::extra_checks(own->get()->dl_tensor, own->flags(), options.validate);
    if (!extra) return extra.error();
    return detail::call_with_view(f, own->view());
  }
  detail::TypeEntry* entry = detail::find_type(*in, reinterpret_cast<PyObject*>(Py_TYPE(obj)));
  if (DLPACKPP_UNLIKELY(entry == nullptr))
    return detail::take_python_error("dlpackpp's type cache");
#if DLPACKPP_HAS_EXCHANGE_API
  const DLPackExchangeAPI* api = entry->api;
  if (api != nullptr && api->dltensor_from_py_object_no_sync != nullptr &&
      detail::exchange_can_serve(options)) {
    DLTensor storage;
    Result<TensorView> view = ::dlpackpp::view_from_object(api, obj, storage, options.validate);
    if (DLPACKPP_UNLIKELY(!view)) {
      return detail::exchange_error(view.error(), obj, "dltensor_from_py_object_no_sync");
    }
    return detail::call_with_view(f, *view);
  }
#endif
  Result<ImportedTensor> owned = detail::import_object(*in, *entry, obj, options);
  if (!owned) return owned.error();
  return detail::call_with_view(f, owned->view());
}

/// As try_borrow, throwing the Error.
template <class F>
auto borrow(PyObject* obj, F&& f, const ImportOptions& options = {}) {
  return try_borrow(obj, std::forward<F>(f), options).value();
}

/// The producer's current work stream for `device`, from its exchange API: launch work that
/// reads an exchange-imported tensor there. NULL for CPU or a producer without the exchange
/// API.
inline Result<void*> current_stream(PyObject* obj, Device device) {
  if (obj == nullptr) return detail::make_error(Errc::null_pointer, "object is NULL");
  if (device == Device::cpu()) return static_cast<void*>(nullptr);
#if DLPACKPP_HAS_EXCHANGE_API
  detail::Internals* in = detail::internals();
  if (in == nullptr) return detail::take_python_error("dlpackpp's interpreter state");
  detail::TypeEntry* entry = detail::find_type(*in, reinterpret_cast<PyObject*>(Py_TYPE(obj)));
  if (entry == nullptr) return detail::take_python_error("dlpackpp's type cache");
  if (entry->api != nullptr) {
    Result<void*> stream = ::dlpackpp::current_stream(entry->api, device);
    if (!stream) return detail::exchange_error(stream.error(), obj, "current_work_stream");
    return stream;
  }
#endif
  return static_cast<void*>(nullptr);
}

// ---- the dlpackpp.Tensor type --------------------------------------------------------------

inline PyObject* to_pyobject(ImportedTensor&& tensor) noexcept;

namespace detail {

/// The instance layout of dlpackpp.Tensor. The tensor is exported at most once (moved into a
/// capsule or an exchange-API import); what the properties report is kept by value so that
/// they still answer afterwards.
struct TensorObject {
  PyObject_HEAD ImportedTensor tensor;  ///< empty once exported
  PyObject* shape;                      ///< tuple, made on first use and at the latest at export
  PyObject* device_tuple;  ///< (device_type, device_id), made on first __dlpack_device__
  DLDataType dtype;
  DLDevice device;
  std::uint64_t flags;
  bool exported;
};

inline bool is_tensor_object(Internals& in, PyObject* obj) noexcept {
  return in.tensor_type != nullptr && reinterpret_cast<PyObject*>(Py_TYPE(obj)) == in.tensor_type;
}

inline const ImportedTensor* own_tensor_of(Internals& in, PyObject* obj) noexcept {
  if (!is_tensor_object(in, obj)) return nullptr;
  auto* self = reinterpret_cast<TensorObject*>(obj);
  return self->exported ? nullptr : &self->tensor;  // exported: the normal path reports it
}

inline PyObject* shape_tuple(TensorObject* self) {
  if (self->shape == nullptr) {
    const IntSpan shape = self->tensor.shape();
    PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(shape.size()));
    for (std::size_t d = 0; tuple != nullptr && d < shape.size(); ++d) {
      PyObject* extent = PyLong_FromLongLong(static_cast<long long>(shape[d]));
      if (extent == nullptr)
        Py_CLEAR(tuple);
      else
        PyTuple_SetItem(tuple, static_cast<Py_ssize_t>(d), extent);
    }
    self->shape = tuple;
  }
  return self->shape;
}

DLPACKPP_COLD inline void set_already_exported() {
  PyErr_SetString(PyExc_BufferError,
                  "dlpackpp.Tensor was already exported; a DLPack export hands over ownership, "
                  "so a tensor can be exported once");
}

/// Moves the tensor out for an owning export; NULL with BufferError when already exported.
inline bool take_for_export(TensorObject* self, ImportedTensor& out) {
  if (self->exported) {
    set_already_exported();
    return false;
  }
  if (shape_tuple(self) == nullptr) return false;  // the properties must outlive the export
  out = std::move(self->tensor);
  self->exported = true;
  return true;
}

/// A compact host copy of `view` (copy=True); sub-byte types only when already contiguous.
inline Result<ImportedTensor> copy_of(const TensorView& view) {
  if (!view.device().is_host_accessible()) {
    return make_error(Errc::unsupported_device, "copy=True of a tensor on ",
                      view.device().to_string(),
                      ": dlpackpp.Tensor copies host-accessible memory only");
  }
#if DLPACKPP_HAS_VERSIONED
  const std::uint64_t flags = flag::is_copied | (view.flags() & flag::is_subbyte_type_padded);
#else
  const std::uint64_t flags = 0;
#endif
  Result<ImportedTensor> out =
      try_allocate<ImportedTensor>(view.dtype(), view.shape(), Device::cpu(), flags);
  if (!out || view.numel() == 0) return out;
  auto* dst = static_cast<unsigned char*>(out->get()->dl_tensor.data);
  const auto* src = static_cast<const unsigned char*>(view.const_data());
  if (view.is_contiguous()) {
    std::memcpy(dst, src, static_cast<std::size_t>(view.nbytes()));
    return out;
  }
  if (view.dtype().is_subbyte()) {
    return make_error(Errc::not_contiguous, "copy=True of a strided ", view.dtype().to_string(),
                      " tensor: packed sub-byte elements are copied only when contiguous");
  }
  const auto item = static_cast<std::int64_t>(view.dtype().bits() / 8u * view.dtype().lanes());
  const int ndim = view.ndim();
  std::int64_t index[64] = {};  // ndim <= 64 is checked below; deeper tensors are refused
  if (ndim > 64)
    return make_error(Errc::invalid_ndim, "copy=True of a tensor with ", ndim,
                      " dimensions (at most 64)");
  const IntSpan shape = view.shape();
  const IntSpan strides = view.strides();
  for (std::int64_t n = 0; n < view.numel(); ++n) {
    std::int64_t offset = 0;
    for (int d = 0; d < ndim; ++d) offset += index[d] * strides[static_cast<std::size_t>(d)];
    std::memcpy(dst + n * item, src + offset * item, static_cast<std::size_t>(item));
    for (int d = ndim - 1; d >= 0; --d) {
      if (++index[d] < shape[static_cast<std::size_t>(d)]) break;
      index[d] = 0;
    }
  }
  return out;
}

inline bool parse_pair(PyObject* value, const char* what, long& first, long& second) {
  if (!PyTuple_Check(value) || PyTuple_Size(value) != 2) {
    PyErr_Format(PyExc_TypeError, "dlpackpp.Tensor.__dlpack__: %s must be a (int, int) tuple",
                 what);
    return false;
  }
  first = PyLong_AsLong(PyTuple_GetItem(value, 0));
  second = first == -1 && PyErr_Occurred() ? -1 : PyLong_AsLong(PyTuple_GetItem(value, 1));
  return PyErr_Occurred() == nullptr;
}

// Where METH_FASTCALL | METH_KEYWORDS exists (the full API; the limited API from 3.10),
// __dlpack__ reads its keywords itself: interned names compare by address, and no tuple or
// dict is made for the call. Elsewhere PyArg_ParseTupleAndKeywords does it.
#if !defined(Py_LIMITED_API) || Py_LIMITED_API + 0 >= 0x030A0000
#define DLPACKPP_PY_FASTCALL_DLPACK 1
#else
#define DLPACKPP_PY_FASTCALL_DLPACK 0
#endif

/// The arguments of __dlpack__, each Py_None when not given (borrowed).
struct DlpackArguments {
  PyObject* stream = Py_None;
  PyObject* max_version = Py_None;
  PyObject* dl_device = Py_None;
  PyObject* copy = Py_None;
};

#if DLPACKPP_PY_FASTCALL_DLPACK
// __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) from a vectorcall:
// keyword-only, an unknown keyword is a TypeError, as PyArg_ParseTupleAndKeywords would say.
inline bool parse_dlpack_arguments(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                                   DlpackArguments& out) {
  if (nargs != 0) {
    PyErr_Format(PyExc_TypeError, "__dlpack__() takes no positional arguments (%zd given)", nargs);
    return false;
  }
  if (kwnames == nullptr) return true;
  Internals* in = internals();
  if (in == nullptr) return false;
  // The order of Internals::keyword_names (the Keyword bits).
  PyObject** slots[4] = {&out.max_version, &out.stream, &out.dl_device, &out.copy};
  const Py_ssize_t count = PyTuple_Size(kwnames);
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* name = PyTuple_GetItem(kwnames, i);
    int found = -1;
    for (int k = 0; found < 0 && k < 4; ++k) {
      if (name == in->keyword_names[k]) found = k;
    }
    for (int k = 0; found < 0 && k < 4; ++k) {  // a name that is not interned: compare the text
      const int cmp = PyUnicode_Compare(name, in->keyword_names[k]);
      if (cmp == -1 && PyErr_Occurred() != nullptr) return false;
      if (cmp == 0) found = k;
    }
    if (found < 0) {
      PyErr_Format(PyExc_TypeError, "'%U' is an invalid keyword argument for __dlpack__()", name);
      return false;
    }
    *slots[found] = args[nargs + i];
  }
  return true;
}
#endif

// __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)
#if DLPACKPP_PY_FASTCALL_DLPACK
inline PyObject* tensor_dlpack(PyObject* obj, PyObject* const* args, Py_ssize_t nargs,
                               PyObject* kwnames) {
  DlpackArguments arguments;
  if (!parse_dlpack_arguments(args, nargs, kwnames, arguments)) return nullptr;
#else
inline PyObject* tensor_dlpack(PyObject* obj, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"stream", "max_version", "dl_device", "copy", nullptr};
  DlpackArguments arguments;
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", const_cast<char**>(keywords),
                                  &arguments.stream, &arguments.max_version, &arguments.dl_device,
                                  &arguments.copy) == 0) {
    return nullptr;
  }
#endif
  auto* self = reinterpret_cast<TensorObject*>(obj);
  PyObject* const stream = arguments.stream;
  PyObject* const max_version = arguments.max_version;
  PyObject* const dl_device = arguments.dl_device;
  PyObject* const copy = arguments.copy;
  // dlpackpp.Tensor has no stream of its own: the C++ code that made it has finished writing
  // before to_pyobject, so any stream the consumer names is already in order.
  static_cast<void>(stream);
  long major = 0;
  long minor = 0;
  if (max_version != Py_None && !parse_pair(max_version, "max_version", major, minor))
    return nullptr;
  if (self->exported) {
    set_already_exported();
    return nullptr;
  }
  if (dl_device != Py_None) {
    long type = 0;
    long id = 0;
    if (!parse_pair(dl_device, "dl_device", type, id)) return nullptr;
    const Device ours = self->tensor.device();
    if (type != static_cast<long>(ours.type()) || id != static_cast<long>(ours.id())) {
      PyErr_Format(PyExc_BufferError,
                   "dlpackpp.Tensor.__dlpack__: the tensor is on %s and cannot be moved to "
                   "dl_device (%ld, %ld)",
                   ours.to_string().c_str(), type, id);
      return nullptr;
    }
  }
  const int want_copy = copy == Py_None ? 0 : PyObject_IsTrue(copy);
  if (want_copy < 0) return nullptr;
#if DLPACKPP_USE_EXCEPTIONS
  try {
#endif
    ImportedTensor out;
    if (want_copy != 0) {
      Result<ImportedTensor> copied = copy_of(self->tensor.view());
      if (!copied) {
        PyErr_SetString(PyExc_BufferError, copied.error().what());
        return nullptr;
      }
      out = std::move(*copied);
    } else if (!take_for_export(self, out)) {
      return nullptr;
    }
#if DLPACKPP_HAS_VERSIONED
    if (max_version != Py_None && major >= 1) {
      PyObject* capsule = to_capsule(std::move(out));
      if (capsule == nullptr && want_copy == 0) {  // give it back: nothing was exported
        // NOLINTNEXTLINE(bugprone-use-after-move): to_capsule moves only on success
        self->tensor = std::move(out);
        self->exported = false;
      }
      return capsule;
    }
    // A consumer of the legacy protocol: READ_ONLY and padded sub-byte flags cannot be said.
    if (out.read_only()) {
      if (want_copy == 0) {
        self->tensor = std::move(out);
        self->exported = false;
      }
      PyErr_SetString(PyExc_BufferError,
                      "dlpackpp.Tensor.__dlpack__: the tensor is READ_ONLY and the legacy protocol "
                      "(no max_version >= (1, 0)) cannot say so; ask with max_version=(1, 0)");
      return nullptr;
    }
    Result<LegacyManagedTensor> legacy = try_to_legacy(std::move(out));
    if (!legacy) {
      if (want_copy == 0) {
        // NOLINTNEXTLINE(bugprone-use-after-move): try_to_legacy moves only on success
        self->tensor = std::move(out);
        self->exported = false;
      }
      PyErr_SetString(PyExc_BufferError, legacy.error().what());
      return nullptr;
    }
    return to_capsule(std::move(*legacy));
#else
  static_cast<void>(major);
  static_cast<void>(minor);
  return to_capsule(std::move(out));
#endif
#if DLPACKPP_USE_EXCEPTIONS
  } catch (...) {
    set_error_from_current_exception();
    return nullptr;
  }
#endif
}

// The tuple is made once per object (the device never changes) and shared after that.
inline PyObject* tensor_dlpack_device(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<TensorObject*>(obj);
  if (self->device_tuple == nullptr) {
    self->device_tuple = Py_BuildValue("(ii)", static_cast<int>(self->device.device_type),
                                       static_cast<int>(self->device.device_id));
    if (self->device_tuple == nullptr) return nullptr;
  }
  Py_INCREF(self->device_tuple);
  return self->device_tuple;
}

inline PyObject* tensor_get_shape(PyObject* obj, void*) {
  PyObject* shape = shape_tuple(reinterpret_cast<TensorObject*>(obj));
  Py_XINCREF(shape);
  return shape;
}

inline PyObject* string_result(const std::string& s) {
  return PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
}

inline PyObject* tensor_get_dtype(PyObject* obj, void*) {
#if DLPACKPP_USE_EXCEPTIONS
  try {
#endif
    return string_result(DataType(reinterpret_cast<TensorObject*>(obj)->dtype).to_string());
#if DLPACKPP_USE_EXCEPTIONS
  } catch (...) {
    set_error_from_current_exception();
    return nullptr;
  }
#endif
}

inline PyObject* tensor_get_device(PyObject* obj, void*) {
#if DLPACKPP_USE_EXCEPTIONS
  try {
#endif
    return string_result(Device(reinterpret_cast<TensorObject*>(obj)->device).to_string());
#if DLPACKPP_USE_EXCEPTIONS
  } catch (...) {
    set_error_from_current_exception();
    return nullptr;
  }
#endif
}

inline PyObject* tensor_get_read_only(PyObject* obj, void*) {
  return PyBool_FromLong((reinterpret_cast<TensorObject*>(obj)->flags & flag::read_only) != 0 ? 1
                                                                                              : 0);
}

inline PyObject* tensor_get_exported(PyObject* obj, void*) {
  return PyBool_FromLong(reinterpret_cast<TensorObject*>(obj)->exported ? 1 : 0);
}

inline PyObject* tensor_new(PyTypeObject*, PyObject*, PyObject*) {
  PyErr_SetString(PyExc_TypeError,
                  "dlpackpp.Tensor cannot be created from Python; C++ code makes one with "
                  "dlpackpp::python::to_pyobject");
  return nullptr;
}

inline void tensor_dealloc(PyObject* obj) {
  auto* self = reinterpret_cast<TensorObject*>(obj);
  PyTypeObject* type = Py_TYPE(obj);
  {
    PreserveError keep;  // the deleter may run Python code while an exception is in flight
    self->tensor.~ImportedTensor();
    Py_CLEAR(self->shape);
    Py_CLEAR(self->device_tuple);
  }
  PyObject_Free(obj);
  Py_DECREF(
      reinterpret_cast<PyObject*>(type));  // instances of heap types own a reference to their type
}

// Casts a method with keywords to the PyCFunction the table stores (through void(*)(void),
// the one cast GCC's -Wcast-function-type accepts).
template <class Fn>
PyCFunction as_cfunction(Fn fn) noexcept {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn));
}

#if DLPACKPP_HAS_EXCHANGE_API
/// The exchange table dlpackpp.Tensor carries: owning import moves the tensor out (the one
/// export), borrowing reads it in place, streams are NULL (the tensor has none).
struct TensorExchangeImpl {
  static Result<TensorObject*> checked(void* py_object) {
    auto* obj = static_cast<PyObject*>(py_object);
    Internals* in = internals();
    if (in == nullptr)
      return Error(Errc::invalid_argument, "dlpackpp's interpreter state is unavailable");
    if (!is_tensor_object(*in, obj)) {
      return Error(Errc::invalid_argument,
                   "dlpackpp.Tensor's exchange API called with another type");
    }
    auto* self = reinterpret_cast<TensorObject*>(obj);
    if (self->exported) {
      return Error(Errc::read_only,
                   "dlpackpp.Tensor was already exported; a DLPack export hands "
                   "over ownership, so a tensor can be exported once");
    }
    return self;
  }
  static Result<ManagedTensor> managed_tensor_allocator(const DLTensor& prototype) {
    const IntSpan shape(prototype.shape,
                        static_cast<std::size_t>(prototype.ndim > 0 ? prototype.ndim : 0));
    return try_allocate<ManagedTensor>(prototype.dtype, shape, prototype.device);
  }
  static Result<ManagedTensor> managed_tensor_from_py_object_no_sync(void* py_object) {
    Result<TensorObject*> self = checked(py_object);
    if (!self) return self.error();
    ImportedTensor out;
    // Fails only when the shape tuple cannot be made; its MemoryError stays pending.
    if (!take_for_export(*self, out)) return Error(Errc::invalid_argument, "out of memory");
    return out;
  }
  static Result<void*> managed_tensor_to_py_object_no_sync(ManagedTensor& tensor) {
    PyObject* obj = to_pyobject(std::move(tensor));
    // The Python exception to_pyobject set stays pending (set_error keeps it).
    if (obj == nullptr) return Error(Errc::invalid_argument, "to_pyobject failed");
    return static_cast<void*>(obj);
  }
  static Result<void> dltensor_from_py_object_no_sync(void* py_object, DLTensor& out) {
    Result<TensorObject*> self = checked(py_object);
    if (!self) return self.error();
    out = (*self)->tensor.get()->dl_tensor;
    return {};
  }
  static void* current_work_stream(Device) { return nullptr; }
  // A Python exception already pending (set by the Python C API inside an Impl function) is
  // more precise than the translation, so it is kept.
  static void set_error(std::string_view kind, std::string_view message) {
    if (PyErr_Occurred() != nullptr) return;
    PyObject* type = PyExc_RuntimeError;
    if (kind == "BufferError")
      type = PyExc_BufferError;
    else if (kind == "TypeError")
      type = PyExc_TypeError;
    else if (kind == "ValueError")
      type = PyExc_ValueError;
    else if (kind == "MemoryError")
      type = PyExc_MemoryError;
    PyObject* text =
        PyUnicode_FromStringAndSize(message.data(), static_cast<Py_ssize_t>(message.size()));
    if (text == nullptr) return;
    PyErr_SetObject(type, text);
    Py_DECREF(text);
  }
};
#endif

inline PyObject* make_tensor_type() {
  static PyMethodDef methods[] = {
#if DLPACKPP_PY_FASTCALL_DLPACK
    {"__dlpack__", as_cfunction(&tensor_dlpack), METH_FASTCALL | METH_KEYWORDS,
#else
    {"__dlpack__", as_cfunction(&tensor_dlpack), METH_VARARGS | METH_KEYWORDS,
#endif
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None): export once as "
     "a DLPack capsule (versioned when max_version >= (1, 0))"},
    {"__dlpack_device__", &tensor_dlpack_device, METH_NOARGS, "(device_type, device_id)"},
    {nullptr, nullptr, 0, nullptr}
  };
  static PyGetSetDef getset[] = {
      {"shape", &tensor_get_shape, nullptr, "extents, a tuple of ints", nullptr},
      {"dtype", &tensor_get_dtype, nullptr, "element type name, e.g. 'float32'", nullptr},
      {"device", &tensor_get_device, nullptr, "device name, e.g. 'cpu' or 'cuda:1'", nullptr},
      {"read_only", &tensor_get_read_only, nullptr, "True when writes are refused (READ_ONLY)",
       nullptr},
      {"exported", &tensor_get_exported, nullptr, "True once the one export has happened", nullptr},
      {nullptr, nullptr, nullptr, nullptr, nullptr}};
  static PyType_Slot slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(&tensor_dealloc)},
      {Py_tp_new, reinterpret_cast<void*>(&tensor_new)},
      {Py_tp_methods, methods},
      {Py_tp_getset, getset},
      {Py_tp_doc, const_cast<char*>("A DLPack tensor exported from C++ by dlpackpp: pass it to "
                                    "np.from_dlpack, torch.from_dlpack or any DLPack consumer.")},
      {0, nullptr}};
  static PyType_Spec spec = {"dlpackpp.Tensor", static_cast<int>(sizeof(TensorObject)), 0,
                             Py_TPFLAGS_DEFAULT, slots};
  PyObject* type = PyType_FromSpec(&spec);
  if (type == nullptr) return nullptr;
#if DLPACKPP_HAS_EXCHANGE_API
  const DLPackExchangeAPI* api = ::dlpackpp::make_exchange_api<TensorExchangeImpl>();
  PyObject* capsule =
      PyCapsule_New(const_cast<DLPackExchangeAPI*>(api), "dlpack_exchange_api", nullptr);
  if (capsule == nullptr ||
      PyObject_SetAttrString(type, "__dlpack_c_exchange_api__", capsule) != 0) {
    Py_XDECREF(capsule);
    Py_DECREF(type);
    return nullptr;
  }
  Py_DECREF(capsule);
#endif
  return type;
}

}  // namespace detail

/// The `dlpackpp.Tensor` type of this interpreter (borrowed), made on first use, e.g. to add
/// it to a module; NULL with a Python exception set on failure.
inline PyTypeObject* tensor_type() noexcept {
  detail::Internals* in = detail::internals();
  if (in == nullptr) return nullptr;
  if (in->tensor_type == nullptr) in->tensor_type = detail::make_tensor_type();
  return reinterpret_cast<PyTypeObject*>(in->tensor_type);
}

/// A new reference to a `dlpackpp.Tensor` owning `tensor` (the handle is emptied): it
/// implements `__dlpack__(*, stream, max_version, dl_device, copy)` (versioned capsule when
/// max_version >= (1, 0), legacy otherwise; READ_ONLY is never exported as legacy; one export,
/// a second is BufferError), `__dlpack_device__()`, the `shape`, `dtype` and `device`
/// properties, and its type carries `__dlpack_c_exchange_api__`. The deleter runs when the
/// object dies unexported, or when the consumer of the export releases it. On failure returns
/// NULL with a Python exception set and leaves `tensor` untouched.
inline PyObject* to_pyobject(ImportedTensor&& tensor) noexcept {
  if (!tensor) {
    PyErr_SetString(PyExc_ValueError, "dlpackpp: to_pyobject of an empty handle");
    return nullptr;
  }
  PyTypeObject* type = tensor_type();
  if (type == nullptr) return nullptr;
  PyObject* obj = PyType_GenericAlloc(type, 0);  // zero-filled; holds a reference to the type
  if (obj == nullptr) return nullptr;
  auto* self = reinterpret_cast<detail::TensorObject*>(obj);
  self->dtype = tensor.dtype();
  self->device = tensor.device();
  self->flags = tensor.flags();
  self->shape = nullptr;
  self->device_tuple = nullptr;
  self->exported = false;
  ::new (static_cast<void*>(&self->tensor)) ImportedTensor(std::move(tensor));
  return obj;
}

// ==== BEGIN bind-branch stand-in: exchange_api_of ==========================================
// A minimal exchange_api_of so the binding casters (issue 19) build on this branch. The
// python.hpp rework adds the real one with the same signature; at merge keep that one and
// drop this block.
#if DLPACKPP_HAS_EXCHANGE_API
/// The usable exchange table of `obj`'s type (cached per type), or NULL; never raises.
inline const DLPackExchangeAPI* exchange_api_of(PyObject* obj) noexcept {
  if (obj == nullptr) return nullptr;
  detail::Internals* in = detail::internals();
  detail::TypeEntry* entry =
      in != nullptr ? detail::find_type(*in, reinterpret_cast<PyObject*>(Py_TYPE(obj))) : nullptr;
  if (entry == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  return entry->api;
}
#endif
// ==== END bind-branch stand-in: exchange_api_of ============================================

}  // namespace python
DLPACKPP_END_NAMESPACE

#endif  // Python.h available
