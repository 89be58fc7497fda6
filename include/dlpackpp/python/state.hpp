// SPDX-License-Identifier: Apache-2.0
/// @file
/// Per-interpreter state: one Internals block per interpreter, shared by every extension
/// built with the same dlpackpp ABI (it lives in the interpreter's dict under a key carrying
/// that ABI), found through a one-entry cache of the last interpreter. Without the GIL the
/// block is immutable once published (everything in it is made before it is, but the
/// dlpackpp.Tensor type, published once), and the type cache is per thread (type_cache.hpp).
#pragma once

#include "dlpackpp/python/python_h.hpp"

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/exchange_api.hpp"
#include "dlpackpp/python/free_threading.hpp"

#include <atomic>
#include <cstdint>
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
  bool grad = false;                 ///< a table's type with `requires_grad` (see import.hpp)
};

/// Keyword slots of __dlpack__, as bits of a mask (the order of Internals::keyword_names).
enum Keyword : unsigned { kw_max_version = 1, kw_stream = 2, kw_dl_device = 4, kw_copy = 8 };

/// What import remembers about up to 16 producer types, evicted oldest first (type_cache.hpp).
/// One per interpreter with the GIL; one per thread and interpreter without it.
struct TypeTable {
  static constexpr int slots = 16;
  TypeEntry types[slots];
  int type_count = 0;
  int next_evict = 0;
  int hint = 0;  ///< the slot the last lookup found (only a hint: checked against the type)
};

/// One per interpreter (see the file comment).
struct Internals {
  PyObject* capsule = nullptr;                  ///< the dict entry that owns this block (borrowed)
  const void* interp = nullptr;                 ///< the interpreter it belongs to
  std::int64_t interp_id = -1;                  ///< its PyInterpreterState_GetID, or -1
  std::atomic<PyObject*> tensor_type{nullptr};  ///< published once (tensor_type.hpp)
  PyObject* str_dlpack = nullptr;
  PyObject* str_exchange = nullptr;
  PyObject* str_requires_grad = nullptr;
  PyObject* keyword_names[4] = {};
  PyObject* max_version = nullptr;  ///< (1, minor of the dlpack.h in force)
  PyObject* kwnames[16] = {};       ///< tuples of keyword names per mask (all made up front)
  TypeTable table;  ///< with the GIL; without it each thread has its own (type_cache.hpp)
};

// The last interpreter's block, for a pointer compare instead of a dict lookup.
// What it buys: without it every call looks the block up in the interpreter's dict by a C
// string, 790 instructions more per import (an exchange-table borrow 289 -> 1,082, a NumPy 2
// owning import 1,232 -> 2,023; bench_python_icount_guard).
// What it relies on: one pointer, read and written atomically (relaxed where the GIL orders
// everything), so a thread never sees a block paired with another interpreter, because the
// interpreter is read from the block; a block lives as long as its interpreter's dict, and
// destroy_internals clears the pointer before freeing it; without an interpreter identity
// (the limited API before 3.9) nothing is cached.
inline std::atomic<Internals*>& cached_internals() noexcept {
  static std::atomic<Internals*> cached{nullptr};
  return cached;
}

inline void destroy_internals(PyObject* capsule) {
  auto* in = static_cast<Internals*>(PyCapsule_GetPointer(capsule, nullptr));
  if (in == nullptr) {
    PyErr_Clear();
    return;
  }
  Internals* expected = in;
  cached_internals().compare_exchange_strong(expected, nullptr);
  Py_XDECREF(in->tensor_type.load());
  Py_XDECREF(in->str_dlpack);
  Py_XDECREF(in->str_exchange);
  Py_XDECREF(in->str_requires_grad);
  for (PyObject* s : in->keyword_names) Py_XDECREF(s);
  Py_XDECREF(in->max_version);
  for (PyObject* t : in->kwnames) Py_XDECREF(t);
  for (int i = 0; i < in->table.type_count; ++i) Py_XDECREF(in->table.types[i].type);
  delete in;
}

// The dict key: the ABI namespace, then the layout of Internals (TypeEntry included), raised
// whenever either changes so that modules built with another layout never share a block.
#define DLPACKPP_DETAIL_PY_STR2(x) #x
#define DLPACKPP_DETAIL_PY_STR(x) DLPACKPP_DETAIL_PY_STR2(x)
inline constexpr const char internals_key[] =
    "__dlpackpp_internals_" DLPACKPP_DETAIL_PY_STR(DLPACKPP_ABI_NAMESPACE) "_7__";
#undef DLPACKPP_DETAIL_PY_STR
#undef DLPACKPP_DETAIL_PY_STR2

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
  if (ok) {  // asked for only where the dlpack.h in force reads versioned tensors
    in->max_version = Py_BuildValue("(ii)", int{DLPACKPP_DLPACK_MAJOR}, int{DLPACKPP_DLPACK_MINOR});
    ok = in->max_version != nullptr;
  }
  // Every keyword-name tuple __dlpack__ may be called with, made now so that the block never
  // changes after it is published (15 small tuples, once per interpreter).
  for (unsigned mask = 1; ok && mask < 16; ++mask) {
    const Py_ssize_t count = (mask & 1u) + (mask >> 1 & 1u) + (mask >> 2 & 1u) + (mask >> 3 & 1u);
    PyObject* tuple = PyTuple_New(count);
    Py_ssize_t k = 0;
    for (unsigned bit = 0; tuple != nullptr && bit < 4; ++bit) {
      if ((mask & (1u << bit)) == 0) continue;
      Py_INCREF(in->keyword_names[bit]);
      PyTuple_SetItem(tuple, k++, in->keyword_names[bit]);
    }
    ok = (in->kwnames[mask] = tuple) != nullptr;
  }
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

// Puts `capsule` (a new reference, taken) in the dict under internals_key unless another
// thread put one there first; the capsule the dict holds (borrowed), or NULL with an exception.
// Without the GIL two threads may both find no block and make one: the dict keeps the first,
// and the other's block dies unseen with its capsule.
DLPACKPP_COLD inline PyObject* publish_internals(PyObject* dict, PyObject* capsule) {
#if DLPACKPP_DETAIL_PY_FREE_THREADED
  PyObject* key = PyUnicode_FromString(internals_key);
  PyObject* held = nullptr;
  const int rc = key != nullptr ? PyDict_SetDefaultRef(dict, key, capsule, &held) : -1;
  Py_XDECREF(key);
  Py_DECREF(capsule);
  if (rc < 0) return nullptr;
  Py_DECREF(held);  // the dict keeps it for the interpreter's life
  return held;
#else
  const int rc = PyDict_SetItemString(dict, internals_key, capsule);
  Py_DECREF(capsule);  // the dict owns it now (or it died and freed its block)
  return rc == 0 ? capsule : nullptr;
#endif
}

DLPACKPP_COLD inline Internals* internals_slow(const void* interp) {
  PyObject* dict = state_dict();
  if (dict == nullptr) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_RuntimeError, "dlpackpp: no interpreter state dict");
    return nullptr;
  }
  PyObject* found = PyDict_GetItemString(dict, internals_key);  // borrowed; never replaced
  if (found == nullptr) {
    Internals* made = make_internals();
    if (made == nullptr) return nullptr;
    made->interp = interp;
#if PY_VERSION_HEX >= 0x03090000 && (!defined(Py_LIMITED_API) || Py_LIMITED_API + 0 >= 0x03090000)
    made->interp_id = PyInterpreterState_GetID(PyInterpreterState_Get());
#endif
    PyObject* capsule = PyCapsule_New(made, nullptr, &destroy_internals);
    if (capsule == nullptr) {
      delete made;
      return nullptr;
    }
    made->capsule = capsule;  // set before it is published, never written after
    found = publish_internals(dict, capsule);
    if (found == nullptr) return nullptr;
  }
  auto* in = static_cast<Internals*>(PyCapsule_GetPointer(found, nullptr));
  if (in != nullptr && interp != nullptr) cached_internals().store(in, shared_release);
  return in;
}

/// This interpreter's state where the one-entry cache has it, else NULL (nothing raised).
inline Internals* internals_if_cached() noexcept {
  const void* interp = current_interpreter();
  Internals* cached = cached_internals().load(shared_acquire);
  return cached != nullptr && interp != nullptr && cached->interp == interp ? cached : nullptr;
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
#ifdef Py_LIMITED_API
class StateHold {
 public:
  /// Holds `in`'s capsule.
  explicit StateHold(const Internals& in) noexcept : capsule_(in.capsule) { Py_XINCREF(capsule_); }
  StateHold(const StateHold&) = delete;
  StateHold& operator=(const StateHold&) = delete;
  /// Lets it go.
  ~StateHold() { Py_XDECREF(capsule_); }

 private:
  PyObject* capsule_;
};
#else
/// The full API's StateHold: nothing to hold.
class StateHold {
 public:
  /// Nothing to hold.
  explicit StateHold(const Internals&) noexcept {}
  StateHold(const StateHold&) = delete;
  StateHold& operator=(const StateHold&) = delete;
};
#endif

}  // namespace detail
}  // namespace python
DLPACKPP_END_NAMESPACE
