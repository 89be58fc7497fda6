// SPDX-License-Identifier: Apache-2.0
// Part of the probe (_probe.cpp): reading capsules structurally (by name first), the deleter
// shim, taking ownership and releasing from another thread, and the pending-exception drop (L4).
#include "_probe.hpp"

#include <cstring>
#include <map>
#include <thread>

namespace dlpackpp_probe {

namespace {

// The names under which a capsule's pointer is a tensor, and whether it is versioned.
struct KnownName {
  const char* name;
  bool versioned;
};
constexpr KnownName kKnownNames[] = {{"dltensor", false},      {"dltensor_versioned", true},
                                     {"used_dltensor", false}, {"used_dltensor_versioned", true},
                                     {kOwnedLegacy, false},    {kOwnedVersioned, true}};

}  // namespace

bool held_of(PyObject* capsule, Held& out) {
  if (!PyCapsule_CheckExact(capsule)) {
    PyErr_SetString(PyExc_TypeError, "conformance probe: expected a capsule");
    return false;
  }
  const char* name = PyCapsule_GetName(capsule);
  out.name = name != nullptr ? name : "";
  for (const KnownName& known : kKnownNames) {
    if (out.name == known.name) {
      out.versioned = known.versioned;
      out.managed = PyCapsule_GetPointer(capsule, name);
      return out.managed != nullptr;
    }
  }
  PyErr_Format(PyExc_ValueError,
               "conformance probe: a capsule named '%s' is not a DLPack tensor: not read",
               out.name.c_str());
  return false;
}

namespace {

// capsule_state(capsule) -> (name or None, has a destructor): read without touching the
// pointer, whatever the name.
PyObject* capsule_state(PyObject*, PyObject* capsule) {
  if (!PyCapsule_CheckExact(capsule)) Py_RETURN_NONE;
  const char* name = PyCapsule_GetName(capsule);
  PyObject* destructor = PyCapsule_GetDestructor(capsule) != nullptr ? Py_True : Py_False;
  PyErr_Clear();  // a NULL destructor or name is an answer here, not an error
  if (name == nullptr) return Py_BuildValue("(OO)", Py_None, destructor);
  return Py_BuildValue("(sO)", name, destructor);
}

}  // namespace

// Whose layout after the version and deleter fields is not known for another major (C1).
DLTensor* tensor_of(const Held& h, std::uint64_t* flags) {
  if (h.versioned) {
    auto* m = static_cast<DLManagedTensorVersioned*>(h.managed);
    if (m->version.major != 1) return nullptr;
    *flags = m->flags;
    return &m->dl_tensor;
  }
  *flags = 0;
  return &static_cast<DLManagedTensor*>(h.managed)->dl_tensor;
}

PyObject* int_list(const std::int64_t* values, int n) {
  if (values == nullptr) Py_RETURN_NONE;
  PyObject* list = PyList_New(n);
  for (int i = 0; list != nullptr && i < n; ++i) {
    PyList_SET_ITEM(list, i, PyLong_FromLongLong(values[i]));
  }
  return list;
}

namespace {

// read(capsule) -> dict of every field the version allows reading, plus `valid`: what the
// project's own validation (TensorView) says of it ("" when it validates).
PyObject* read(PyObject*, PyObject* capsule) {
  Held h;
  if (!held_of(capsule, h)) return nullptr;
  PyObject* d = PyDict_New();
  auto put = [d](const char* key, PyObject* value) {
    if (value != nullptr) {
      PyDict_SetItemString(d, key, value);
      Py_DECREF(value);
    }
  };
  put("name", PyUnicode_FromString(h.name.c_str()));
  put("versioned", PyBool_FromLong(h.versioned ? 1 : 0));
  void* ctx;
  void* deleter;
  if (h.versioned) {
    auto* m = static_cast<DLManagedTensorVersioned*>(h.managed);
    put("version", Py_BuildValue("(II)", m->version.major, m->version.minor));
    ctx = m->manager_ctx;
    deleter = reinterpret_cast<void*>(m->deleter);
  } else {
    auto* m = static_cast<DLManagedTensor*>(h.managed);
    ctx = m->manager_ctx;
    deleter = reinterpret_cast<void*>(m->deleter);
  }
  put("manager_ctx", PyLong_FromVoidPtr(ctx));
  put("deleter", PyLong_FromVoidPtr(deleter));
  put("managed", PyLong_FromVoidPtr(h.managed));
  std::uint64_t flags = 0;
  DLTensor* t = tensor_of(h, &flags);
  if (t == nullptr) return d;
  put("flags", PyLong_FromUnsignedLongLong(flags));
  put("data", PyLong_FromVoidPtr(t->data));
  put("ndim", PyLong_FromLong(t->ndim));
  const int n = t->ndim > 0 && t->ndim <= 64 ? t->ndim : 0;
  put("shape", int_list(t->shape, n));
  put("strides", int_list(t->strides, n));
  put("byte_offset", PyLong_FromUnsignedLongLong(t->byte_offset));
  put("dtype", Py_BuildValue("(iii)", t->dtype.code, t->dtype.bits, t->dtype.lanes));
  put("device",
      Py_BuildValue("(ii)", static_cast<int>(t->device.device_type), t->device.device_id));
  dp::ValidateOptions options;
  options.flags = flags;
  dp::Result<dp::TensorView> view = dp::TensorView::try_from(*t, options);
  put("valid", PyUnicode_FromString(view ? "" : view.error().what()));
  return d;
}

}  // namespace

// The bytes of a tensor's elements in row-major order, through shape, strides (NULL read as
// row-major), data and byte_offset. Reading wild memory may crash: the kit calls this only
// in a child.
PyObject* gather_tensor(const DLTensor& t) {
  if (t.dtype.bits % 8 != 0 || t.dtype.lanes == 0) {
    PyErr_SetString(PyExc_ValueError, "conformance probe: sub-byte or zero-lane dtype");
    return nullptr;
  }
  const std::int64_t item = t.dtype.bits / 8 * t.dtype.lanes;
  if (t.ndim < 0 || t.ndim > 64 || (t.ndim > 0 && t.shape == nullptr)) {
    PyErr_SetString(PyExc_ValueError, "conformance probe: bad ndim or NULL shape");
    return nullptr;
  }
  std::vector<std::int64_t> shape(t.shape, t.shape + t.ndim), strides(t.ndim);
  std::int64_t numel = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (shape[i] < 0) {
      PyErr_SetString(PyExc_ValueError, "conformance probe: negative extent");
      return nullptr;
    }
    strides[i] = t.strides != nullptr ? t.strides[i] : numel;
    numel *= shape[i];
  }
  if (numel > (std::int64_t{1} << 28)) {
    PyErr_SetString(PyExc_ValueError, "conformance probe: tensor too large to gather");
    return nullptr;
  }
  PyObject* out = PyBytes_FromStringAndSize(nullptr, numel * item);
  if (out == nullptr || numel == 0) return out;
  if (t.data == nullptr) {
    Py_DECREF(out);
    PyErr_SetString(PyExc_ValueError, "conformance probe: NULL data for a non-empty tensor");
    return nullptr;
  }
  char* dst = PyBytes_AS_STRING(out);
  const char* base = static_cast<const char*>(t.data) + t.byte_offset;
  std::vector<std::int64_t> index(t.ndim, 0);
  for (std::int64_t k = 0; k < numel; ++k) {
    std::int64_t offset = 0;
    for (int i = 0; i < t.ndim; ++i) offset += index[i] * strides[i];
    std::memcpy(dst + k * item, base + offset * item, static_cast<std::size_t>(item));
    for (int i = t.ndim - 1; i >= 0; --i) {
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

namespace {

// gather(capsule) -> bytes of the elements, row-major.
PyObject* gather(PyObject*, PyObject* capsule) {
  Held h;
  if (!held_of(capsule, h)) return nullptr;
  std::uint64_t flags = 0;
  DLTensor* t = tensor_of(h, &flags);
  if (t == nullptr) {
    PyErr_SetString(PyExc_ValueError, "conformance probe: unknown major version");
    return nullptr;
  }
  return gather_tensor(*t);
}

// --- the deleter shim (L1, L2, L5) -----------------------------------------------------------
struct Shimmed {
  void (*versioned)(DLManagedTensorVersioned*) = nullptr;
  void (*legacy)(DLManagedTensor*) = nullptr;
  int counter = 0;
};
std::map<const void*, Shimmed> g_shims;  // guarded by g_blocks_mutex

Shimmed take_shim(const void* managed) {
  std::lock_guard<std::mutex> lock(g_blocks_mutex);
  auto it = g_shims.find(managed);
  Shimmed s;
  if (it != g_shims.end()) {
    s = it->second;
    g_shims.erase(it);
  } else {
    bump(kAgain);  // a shimmed deleter called twice
  }
  return s;
}
void shim_versioned(DLManagedTensorVersioned* self) {
  Shimmed s = take_shim(self);
  bump(s.counter);
  if (s.versioned != nullptr) s.versioned(self);
}
void shim_legacy(DLManagedTensor* self) {
  Shimmed s = take_shim(self);
  bump(s.counter);
  if (s.legacy != nullptr) s.legacy(self);
}

// shim(capsule, counter) -> bool: the producer's deleter now goes through a shim that bumps
// `counter` first; False when the tensor has no deleter.
PyObject* shim(PyObject*, PyObject* args) {
  PyObject* capsule;
  int counter;
  if (PyArg_ParseTuple(args, "Oi", &capsule, &counter) == 0) return nullptr;
  Held h;
  if (!held_of(capsule, h)) return nullptr;
  std::lock_guard<std::mutex> lock(g_blocks_mutex);
  Shimmed s;
  s.counter = counter;
  if (h.versioned) {
    auto* m = static_cast<DLManagedTensorVersioned*>(h.managed);
    if (m->deleter == nullptr) Py_RETURN_FALSE;
    s.versioned = m->deleter;
    m->deleter = &shim_versioned;
  } else {
    auto* m = static_cast<DLManagedTensor*>(h.managed);
    if (m->deleter == nullptr) Py_RETURN_FALSE;
    s.legacy = m->deleter;
    m->deleter = &shim_legacy;
  }
  g_shims[h.managed] = s;
  Py_RETURN_TRUE;
}

}  // namespace

// Destructor of a capsule the kit took ownership into: releases the tensor once.
void owned_destructor(PyObject* capsule) {
  const char* name = PyCapsule_GetName(capsule);
  if (name == nullptr || std::strncmp(name, "dlpackpp_kit.owned", 18) != 0) return;
  void* managed = PyCapsule_GetPointer(capsule, name);
  if (managed != nullptr) call_deleter(managed, std::strcmp(name, kOwnedVersioned) == 0);
}

namespace {

// consume(capsule) -> an owning capsule of the kit: the consumer's half of the protocol
// (renames the producer's capsule used_..., which must stop its destructor).
PyObject* consume(PyObject*, PyObject* capsule) {
  Held h;
  if (!held_of(capsule, h)) return nullptr;
  if (h.name != "dltensor" && h.name != "dltensor_versioned") {
    PyErr_Format(PyExc_ValueError, "conformance probe: cannot consume a capsule named %s",
                 h.name.c_str());
    return nullptr;
  }
  PyObject* owned =
      PyCapsule_New(h.managed, h.versioned ? kOwnedVersioned : kOwnedLegacy, &owned_destructor);
  if (owned == nullptr) return nullptr;
  if (PyCapsule_SetName(capsule, h.versioned ? "used_dltensor_versioned" : "used_dltensor") != 0) {
    PyCapsule_SetName(owned, "dlpackpp_kit.released");
    Py_DECREF(owned);
    return nullptr;
  }
  return owned;
}

// release_in_thread(owned) -> None: calls the deleter on a new native thread while this one
// has let go of the GIL (L5: a deleter must not assume the GIL or the producer object).
PyObject* release_in_thread(PyObject*, PyObject* owned) {
  Held h;
  if (!held_of(owned, h)) return nullptr;
  if (std::strncmp(h.name.c_str(), "dlpackpp_kit.owned", 18) != 0) {
    PyErr_SetString(PyExc_ValueError, "conformance probe: not an owning capsule of the kit");
    return nullptr;
  }
  PyCapsule_SetName(owned, "dlpackpp_kit.released");
  Py_BEGIN_ALLOW_THREADS std::thread([h] { call_deleter(h.managed, h.versioned); }).join();
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

// drop_with_pending(list) -> bool: drops list[0] (the caller's last reference to a capsule)
// while an exception is pending, then says whether that same exception is still pending.
PyObject* drop_with_pending(PyObject*, PyObject* list) {
  if (!PyList_Check(list) || PyList_GET_SIZE(list) != 1) {
    PyErr_SetString(PyExc_TypeError, "conformance probe: expected a one-item list");
    return nullptr;
  }
  PyObject* marker = PyUnicode_FromString("dlpackpp-kit-pending");
  Py_INCREF(Py_None);
  PyErr_SetObject(PyExc_LookupError, marker);
  PyList_SetItem(list, 0, Py_None);  // the capsule's destructor runs here, exception pending
  PyObject *type, *value, *trace;
  PyErr_Fetch(&type, &value, &trace);
  bool kept = type == PyExc_LookupError && value != nullptr &&
              (value == marker || PyObject_RichCompareBool(value, marker, Py_EQ) == 1);
  if (!kept && value != nullptr && PyExceptionInstance_Check(value)) {
    PyObject* args = PyObject_GetAttrString(value, "args");
    if (args != nullptr && PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 1) {
      kept = type == PyExc_LookupError &&
             PyObject_RichCompareBool(PyTuple_GET_ITEM(args, 0), marker, Py_EQ) == 1;
    }
    Py_XDECREF(args);
  }
  PyErr_Clear();
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(trace);
  Py_DECREF(marker);
  return PyBool_FromLong(kept ? 1 : 0);
}

}  // namespace

PyMethodDef g_read_methods[] = {
    {"read", &read, METH_O, "the capsule's fields"},
    {"capsule_state", &capsule_state, METH_O, "the capsule's name and whether it has a destructor"},
    {"gather", &gather, METH_O, "the elements' bytes, row-major"},
    {"shim", &shim, METH_VARARGS, "count the producer's deleter"},
    {"consume", &consume, METH_O, "take ownership as a consumer does"},
    {"release_in_thread", &release_in_thread, METH_O, "deleter on a thread, no GIL"},
    {"drop_with_pending", &drop_with_pending, METH_O, "drop with an exception pending"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace dlpackpp_probe
