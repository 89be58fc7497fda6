// SPDX-License-Identifier: Apache-2.0
/// @file
/// Per-interpreter state: one Internals block per interpreter, shared by every extension
/// built with the same dlpackpp ABI (it lives in the interpreter's dict under a key carrying
/// that ABI), found through a one-entry cache of the last interpreter.
#pragma once

#include "dlpackpp/python/python_h.hpp"
#if DLPACKPP_PYTHON_AVAILABLE

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/exchange_api.hpp"

#include <new>

DLPACKPP_BEGIN_NAMESPACE
namespace python {
namespace detail {

#if DLPACKPP_HAS_EXCHANGE_API
using ExchangeApi = DLPackExchangeAPI;
#else
struct ExchangeApi;  // never defined: no exchange API with this dlpack.h
#endif

/// What import remembers about one producer type (holding a strong reference to it, so the
/// address cannot be reused by another type while the entry lives). Filled by type_cache.hpp.
struct TypeEntry {
  PyObject* type = nullptr;
  const ExchangeApi* api = nullptr;  ///< usable exchange table, or NULL
  bool legacy = false;               ///< __dlpack__ rejected max_version with TypeError
  PyObject* dlpack = nullptr;        ///< the type's own __dlpack__ (strong), see cached_dlpack
  unsigned int version_tag = 0;      ///< the type's tp_version_tag when `dlpack` was read
  bool grad = false;                 ///< a table's type with `requires_grad` (see import.hpp)
};

/// Keyword slots of __dlpack__, as bits of a mask (the order of Internals::keyword_names).
enum Keyword : unsigned { kw_max_version = 1, kw_stream = 2, kw_dl_device = 4, kw_copy = 8 };

/// One per interpreter (see the file comment).
struct Internals {
  static constexpr int type_slots = 16;
  PyObject* capsule = nullptr;  ///< the dict entry that owns this block (borrowed)
  PyObject* tensor_type = nullptr;
  PyObject* str_dlpack = nullptr;
  PyObject* str_exchange = nullptr;
  PyObject* str_requires_grad = nullptr;
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
  Py_XDECREF(in->str_requires_grad);
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
    "__dlpackpp_internals_" DLPACKPP_PY_STR(DLPACKPP_ABI_NAMESPACE) "_3__";
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
      (in->str_requires_grad = PyUnicode_InternFromString("requires_grad")) != nullptr;
  for (int i = 0; ok && i < 4; ++i)
    ok = (in->keyword_names[i] = PyUnicode_InternFromString(names[i])) != nullptr;
#if DLPACKPP_HAS_VERSIONED
  if (ok) {
    in->max_version = Py_BuildValue("(ii)", int{DLPACKPP_DLPACK_MAJOR}, int{DLPACKPP_DLPACK_MINOR});
    ok = in->max_version != nullptr;
  }
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
    in->capsule = found;
  } else {
    in = make_internals();
    if (in == nullptr) return nullptr;
    PyObject* capsule = PyCapsule_New(in, nullptr, &destroy_internals);
    if (capsule == nullptr) {
      delete in;
      return nullptr;
    }
    in->capsule = capsule;
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

/// This interpreter's state where the one-entry cache has it, else NULL (nothing raised).
inline Internals* internals_if_cached() noexcept {
  const void* interp = current_interpreter();
  Internals* cached = cached_internals();
  return cached != nullptr && interp != nullptr && cached_interpreter() == interp ? cached
                                                                                  : nullptr;
}

/// This interpreter's state; NULL with a Python exception set on failure.
inline Internals* internals() {
  Internals* cached = internals_if_cached();
  return cached != nullptr ? cached : internals_slow(current_interpreter());
}

/// Keeps `in` alive while an entry point uses it across calls into Python. Under the limited
/// API the state lives in builtins.__dict__, where Python code (a producer's __dlpack__) can
/// delete it, so a strong reference to its capsule is held; the interpreter's own dict is
/// out of Python's reach, so elsewhere this is nothing.
class StateHold {
 public:
#ifdef Py_LIMITED_API
  explicit StateHold(const Internals& in) noexcept : capsule_(in.capsule) { Py_XINCREF(capsule_); }
  ~StateHold() { Py_XDECREF(capsule_); }
#else
  explicit StateHold(const Internals&) noexcept {}
#endif
  StateHold(const StateHold&) = delete;
  StateHold& operator=(const StateHold&) = delete;

#ifdef Py_LIMITED_API
 private:
  PyObject* capsule_;
#endif
};

}  // namespace detail
}  // namespace python
DLPACKPP_END_NAMESPACE

#endif  // DLPACKPP_PYTHON_AVAILABLE
