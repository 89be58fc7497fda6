// SPDX-License-Identifier: Apache-2.0
/// @file
/// What import knows about a producer type, cached per interpreter (16 entries, each holding
/// a strong reference to its type): its exchange table, whether it speaks only the legacy
/// protocol, whether it has `requires_grad`. And how an import finds the type's `__dlpack__`:
/// in CPython's own type cache (dlpack_method), where calling it directly is exactly
/// `obj.__dlpack__`.
///
/// What the table buys: the two attribute lookups on the type (its exchange table, and
/// `requires_grad` for a type with one) happen once per type instead of once per import.
/// Asked on every call, with PyObject_GetAttr as add_type asks, they cost 3,176 instructions
/// more per NumPy 2 borrow and 3,388 per exchange-table borrow (289 with the table: 12.7x),
/// since a missing attribute is an AttributeError made and cleared (bench_python_icount_guard,
/// benchmarks/README.md). And the contract's "a legacy producer costs one failed call per
/// type, not per import" needs a place per type to remember it.
///
/// What it relies on: an entry holds a strong reference to its type, so no other type can
/// take its address while it is cached; a type's exchange table and `requires_grad` do not
/// change after the first import (a table is a static of the producer); the hint is only a
/// hint, checked against the type. Without the GIL the table is per thread as well (table_of),
/// so that no lock is taken on the per-tensor path and no thread evicts an entry another is
/// reading.
#pragma once

#include "dlpackpp/python/python_h.hpp"

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/exchange_api.hpp"
#include "dlpackpp/python/errors.hpp"
#include "dlpackpp/python/free_threading.hpp"
#include "dlpackpp/python/gil.hpp"
#include "dlpackpp/python/state.hpp"

#include <cstdint>
#include <new>

DLPACKPP_BEGIN_NAMESPACE
namespace python {
namespace detail {

// The type's exchange table: only a "dlpack_exchange_api" capsule in
// `__dlpack_c_exchange_api__` (DLPack 1.3) is read. Anything else there (an integer, another
// capsule, a property) and the 1.2 draft's `__c_dlpack_exchange_api__` are ignored: an
// address in an integer cannot be checked, and dereferencing a stray one would crash. NULL
// when absent, malformed or of another major version: the object then goes through
// __dlpack__. No exception is left pending.
DLPACKPP_COLD inline const ExchangeApi* lookup_exchange_api(Internals& in, PyObject* type) {
#if DLPACKPP_HAS_EXCHANGE_API
  const void* head = nullptr;
  PyObject* attr = PyObject_GetAttr(type, in.str_exchange);
  if (attr != nullptr && PyCapsule_IsValid(attr, "dlpack_exchange_api") != 0) {
    head = PyCapsule_GetPointer(attr, "dlpack_exchange_api");
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

// The full API (3.9+, vectorcall) calls a type's `__dlpack__` directly with the object first
// where that is exactly what `obj.__dlpack__(...)` does: the type uses the generic attribute
// lookup, its instances have no __dict__ (nothing can shadow the method), and the attribute
// is a plain function or method descriptor (Py_TPFLAGS_METHOD_DESCRIPTOR). It is found in
// CPython's own type cache, as nanobind finds it (_PyType_LookupRef from 3.13,
// _PyType_Lookup before): keyed by the type's version tag, so a modified type is looked up
// afresh, and safe without the GIL. What the direct call buys over asking by name
// (PyObject_VectorcallMethod): 38 instructions per NumPy 2 import, 3% (1,268 -> 1,230,
// bench_python_icount_guard). It replaced a private per-type copy of the method, which saved
// 42 more, 3.5% (benchmarks/python_compare/README.md, "Finding `__dlpack__`"): under the 10%
// that would justify the copy's version-tag rules.
// The type's `__dlpack__` to be called with `obj` first (see above): a new reference, or NULL
// (nothing raised) where the call must go through the name.
inline PyObject* dlpack_method(Internals& in, PyObject* obj) noexcept {
#if !defined(Py_LIMITED_API) && PY_VERSION_HEX >= 0x03090000
  PyTypeObject* tp = Py_TYPE(obj);
  bool has_dict = tp->tp_dictoffset != 0;
#ifdef Py_TPFLAGS_MANAGED_DICT
  has_dict = has_dict || PyType_HasFeature(tp, Py_TPFLAGS_MANAGED_DICT);
#endif
  if (has_dict || tp->tp_getattro != PyObject_GenericGetAttr) return nullptr;
  PyObject* method = type_lookup(tp, in.str_dlpack);
  if (method != nullptr && !PyType_HasFeature(Py_TYPE(method), Py_TPFLAGS_METHOD_DESCRIPTOR)) {
    Py_DECREF(method);
    return nullptr;
  }
  return method;
#else
  static_cast<void>(in);
  static_cast<void>(obj);
  return nullptr;
#endif
}

// Without the GIL: this thread's table for one interpreter (by its id, which CPython never
// reuses). Nothing in it is shared, so it needs no lock and no atomics; what one thread learns
// (a table, a legacy producer) another learns again, once per type. At thread exit its
// references are dropped with release_reference (the GIL taken only while shutdown cannot
// start; leaked otherwise): for the main interpreter only, the one PyGILState serves. A
// sub-interpreter's table is leaked instead, as is one left when the thread moves to another
// interpreter: that interpreter may be gone. Unused with the GIL.
struct ThreadTypeTable {
  std::int64_t interp_id = -1;
  TypeTable table;
  ThreadTypeTable() = default;
  ThreadTypeTable(const ThreadTypeTable&) = delete;
  ThreadTypeTable& operator=(const ThreadTypeTable&) = delete;
  ~ThreadTypeTable() {
    if (interp_id != 0) return;  // not the main interpreter (or never used)
    for (int i = 0; i < table.type_count; ++i) release_reference(table.types[i].type);
  }
};

/// The table `in`'s interpreter keeps for this thread: the interpreter's own with the GIL.
inline TypeTable& table_of(Internals& in) noexcept {
  if constexpr (free_threaded) {
    static thread_local ThreadTypeTable mine;
    if (DLPACKPP_UNLIKELY(mine.interp_id != in.interp_id)) {
      ::new (&mine.table) TypeTable();  // another interpreter's entries: leaked (see above)
      mine.interp_id = in.interp_id;
    }
    return mine.table;
  } else {
    return in.table;
  }
}

/// `type`'s entry if it is cached, else NULL; never calls into Python.
inline TypeEntry* cached_type(Internals& in, PyObject* type) noexcept {
  TypeTable& table = table_of(in);
  if (DLPACKPP_LIKELY(table.types[table.hint].type == type)) return &table.types[table.hint];
  for (int i = 0; i < table.type_count; ++i) {
    if (table.types[i].type == type) {
      table.hint = i;
      return &table.types[i];
    }
  }
  return nullptr;
}

// Whether a type with an exchange table has a `requires_grad` attribute (PyTorch's tensors):
// its instances are then asked before an owning import through the table (see import.hpp).
DLPACKPP_COLD inline bool lookup_grad(Internals& in, PyObject* type, const ExchangeApi* api) {
  if (api == nullptr) return false;
  PyObject* attr = PyObject_GetAttr(type, in.str_requires_grad);
  Py_XDECREF(attr);
  PyErr_Clear();
  return attr != nullptr;
}

DLPACKPP_COLD inline TypeEntry* add_type(Internals& in, PyObject* type) {
  const ExchangeApi* api = lookup_exchange_api(in, type);
  const bool grad = lookup_grad(in, type, api);
  if constexpr (free_threaded) arm_shutdown_guard();  // the thread's table drops its references
  TypeTable& table = table_of(in);
  int slot = table.type_count;
  PyObject* evicted = nullptr;
  if (slot < TypeTable::slots) {
    ++table.type_count;
  } else {
    slot = table.next_evict;
    table.next_evict = (slot + 1) % TypeTable::slots;
    evicted = table.types[slot].type;
  }
  Py_INCREF(type);
  table.types[slot] = TypeEntry{type, api, false, grad};
  Py_XDECREF(evicted);           // last: dropping a type may run Python code
  return cached_type(in, type);  // NULL only if the decrefs above re-entered and evicted it
}

/// What import knows about `type` (cached per type, strong reference). The pointer is valid
/// until the next call into Python: read what you need at once.
inline TypeEntry* find_type(Internals& in, PyObject* type) {
  TypeEntry* entry = cached_type(in, type);
  return DLPACKPP_LIKELY(entry != nullptr) ? entry : add_type(in, type);
}

/// The entry of obj's type; NULL with a Python exception set on failure.
inline TypeEntry* type_entry_of(Internals& in, PyObject* obj) {
  return find_type(in, reinterpret_cast<PyObject*>(Py_TYPE(obj)));
}

/// Notes that `type`'s __dlpack__ rejected max_version: later imports skip the first try.
inline void remember_legacy(Internals& in, PyObject* type) noexcept {
  TypeTable& table = table_of(in);
  for (int i = 0; i < table.type_count; ++i) {
    if (table.types[i].type == type) table.types[i].legacy = true;
  }
}

}  // namespace detail

#if DLPACKPP_HAS_EXCHANGE_API
/// The usable DLPack exchange table of obj's type (cached per type), or NULL; never raises.
inline const DLPackExchangeAPI* exchange_api_of(PyObject* obj) noexcept {
  if (obj == nullptr) return nullptr;
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(obj));
  if (detail::Internals* in = detail::internals_if_cached()) {
    if (const detail::TypeEntry* entry = detail::cached_type(*in, type)) return entry->api;
  }
  // Not cached yet: the lookup may call into Python, around whatever is pending.
  detail::PreserveError keep;
  detail::Internals* in = detail::internals();
  if (in == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  const detail::StateHold hold(*in);
  detail::TypeEntry* entry = detail::find_type(*in, type);
  const DLPackExchangeAPI* api = entry != nullptr ? entry->api : nullptr;
  PyErr_Clear();
  return api;
}
#endif

}  // namespace python
DLPACKPP_END_NAMESPACE
