// SPDX-License-Identifier: Apache-2.0
// Part of the probe (_probe.cpp): calling a framework's exchange table (X1-X5).
#include "_probe.hpp"

namespace dlpackpp_probe {

namespace {

const DLPackExchangeAPI* table_of(PyObject* capsule) {
  if (!PyCapsule_CheckExact(capsule)) {
    PyErr_SetString(PyExc_TypeError, "conformance probe: the exchange table is not a capsule");
    return nullptr;
  }
  return static_cast<const DLPackExchangeAPI*>(
      PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule)));
}

// table_header(capsule) -> dict: the address, the chain of (major, minor) through prev_api
// (at most 16 links, `cyclic` when it did not end), and which entries are non-NULL.
PyObject* table_header(PyObject*, PyObject* capsule) {
  const DLPackExchangeAPI* api = table_of(capsule);
  if (api == nullptr) return nullptr;
  PyObject* chain = PyList_New(0);
  const DLPackExchangeAPIHeader* head = &api->header;
  int links = 0;
  for (; head != nullptr && links < 16; head = head->prev_api, ++links) {
    PyObject* v = Py_BuildValue("(II)", head->version.major, head->version.minor);
    PyList_Append(chain, v);
    Py_DECREF(v);
  }
  PyObject* d = Py_BuildValue(
      "{s:N,s:N,s:O,s:{s:O,s:O,s:O,s:O,s:O}}", "address",
      PyLong_FromVoidPtr(const_cast<DLPackExchangeAPI*>(api)), "chain", chain, "cyclic",
      head != nullptr ? Py_True : Py_False, "entries", "managed_tensor_allocator",
      api->managed_tensor_allocator ? Py_True : Py_False, "managed_tensor_from_py_object_no_sync",
      api->managed_tensor_from_py_object_no_sync ? Py_True : Py_False,
      "managed_tensor_to_py_object_no_sync",
      api->managed_tensor_to_py_object_no_sync ? Py_True : Py_False,
      "dltensor_from_py_object_no_sync", api->dltensor_from_py_object_no_sync ? Py_True : Py_False,
      "current_work_stream", api->current_work_stream ? Py_True : Py_False);
  return d;
}

// table_from_py(capsule, obj) -> an owning kit capsule of what managed_tensor_from_py_object
// gave (read it with read()/gather()); raises what the producer raised.
PyObject* table_from_py(PyObject*, PyObject* args) {
  PyObject *capsule, *obj;
  if (PyArg_ParseTuple(args, "OO", &capsule, &obj) == 0) return nullptr;
  const DLPackExchangeAPI* api = table_of(capsule);
  if (api == nullptr) return nullptr;
  DLManagedTensorVersioned* out = nullptr;
  int rc = api->managed_tensor_from_py_object_no_sync(obj, &out);
  if (rc != 0 || out == nullptr) {
    if (!PyErr_Occurred()) {
      PyErr_Format(PyExc_RuntimeError,
                   "managed_tensor_from_py_object_no_sync returned %d "
                   "with no Python exception set",
                   rc);
    }
    return nullptr;
  }
  return PyCapsule_New(out, kOwnedVersioned, &owned_destructor);
}

// table_borrow(capsule, obj) -> (fields dict, element bytes) read while `obj` lives, or None
// when the table has no dltensor_from_py_object_no_sync.
PyObject* table_borrow(PyObject*, PyObject* args) {
  PyObject *capsule, *obj;
  if (PyArg_ParseTuple(args, "OO", &capsule, &obj) == 0) return nullptr;
  const DLPackExchangeAPI* api = table_of(capsule);
  if (api == nullptr) return nullptr;
  if (api->dltensor_from_py_object_no_sync == nullptr) Py_RETURN_NONE;
  DLTensor t{};
  if (api->dltensor_from_py_object_no_sync(obj, &t) != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "dltensor_from_py_object failed");
    return nullptr;
  }
  const int n = t.ndim > 0 && t.ndim <= 64 ? t.ndim : 0;
  PyObject* bytes = gather_tensor(t);
  if (bytes == nullptr) return nullptr;
  return Py_BuildValue(
      "({s:N,s:i,s:N,s:N,s:K,s:(iii),s:(ii)}N)", "data", PyLong_FromVoidPtr(t.data), "ndim", t.ndim,
      "shape", int_list(t.shape, n), "strides", int_list(t.strides, n), "byte_offset",
      static_cast<unsigned long long>(t.byte_offset), "dtype", t.dtype.code, t.dtype.bits,
      t.dtype.lanes, "device", static_cast<int>(t.device.device_type), t.device.device_id, bytes);
}

// table_stream(capsule, device_type, device_id) -> (rc, stream address, exception text).
PyObject* table_stream(PyObject*, PyObject* args) {
  PyObject* capsule;
  int type, id;
  if (PyArg_ParseTuple(args, "Oii", &capsule, &type, &id) == 0) return nullptr;
  const DLPackExchangeAPI* api = table_of(capsule);
  if (api == nullptr) return nullptr;
  void* stream = reinterpret_cast<void*>(std::uintptr_t{0xdead});
  int rc = api->current_work_stream(static_cast<DLDeviceType>(type), id, &stream);
  std::string why;
  if (PyErr_Occurred()) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyObject* s = v != nullptr ? PyObject_Str(v) : nullptr;
    why = s != nullptr ? PyUnicode_AsUTF8(s) : "?";
    Py_XDECREF(s);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
    PyErr_Clear();
  }
  return Py_BuildValue("(iNs)", rc, PyLong_FromVoidPtr(stream), why.c_str());
}

struct ErrorSink {
  int calls = 0;
  std::string kind, message;
};
void record_error(void* ctx, const char* kind, const char* message) {
  auto* sink = static_cast<ErrorSink*>(ctx);
  if (sink->calls++ == 0) {
    sink->kind = kind != nullptr ? kind : "";
    sink->message = message != nullptr ? message : "";
  }
}

// table_alloc(capsule, shape, dtype, device) -> (rc, owned capsule or None, SetError calls,
// kind, message).
PyObject* table_alloc(PyObject*, PyObject* args) {
  PyObject *capsule, *shape_obj;
  int code, bits, lanes, dev_type, dev_id;
  if (PyArg_ParseTuple(args, "OO(iii)(ii)", &capsule, &shape_obj, &code, &bits, &lanes, &dev_type,
                       &dev_id) == 0) {
    return nullptr;
  }
  const DLPackExchangeAPI* api = table_of(capsule);
  std::vector<std::int64_t> shape;
  if (api == nullptr || !read_int64s(shape_obj, shape)) return nullptr;
  DLTensor proto{};
  proto.device.device_type = static_cast<DLDeviceType>(dev_type);
  proto.device.device_id = dev_id;
  proto.ndim = static_cast<int>(shape.size());
  proto.dtype.code = static_cast<std::uint8_t>(code);
  proto.dtype.bits = static_cast<std::uint8_t>(bits);
  proto.dtype.lanes = static_cast<std::uint16_t>(lanes);
  proto.shape = shape.empty() ? nullptr : shape.data();
  ErrorSink sink;
  DLManagedTensorVersioned* out = nullptr;
  int rc = api->managed_tensor_allocator(&proto, &out, &sink, &record_error);
  PyErr_Clear();
  PyObject* owned = Py_None;
  if (out != nullptr) {
    owned = PyCapsule_New(out, kOwnedVersioned, &owned_destructor);
    if (owned == nullptr) return nullptr;
  } else {
    Py_INCREF(Py_None);
  }
  return Py_BuildValue("(iNiss)", rc, owned, sink.calls, sink.kind.c_str(), sink.message.c_str());
}

// table_to_py(capsule, owned) -> (rc, object or None): hands the kit's owned tensor to
// managed_tensor_to_py_object_no_sync (the owned capsule gives it up whatever the result:
// on failure the caller keeps ownership, so the kit releases it here).
PyObject* table_to_py(PyObject*, PyObject* args) {
  PyObject *capsule, *owned;
  if (PyArg_ParseTuple(args, "OO", &capsule, &owned) == 0) return nullptr;
  const DLPackExchangeAPI* api = table_of(capsule);
  Held h;
  if (api == nullptr || !held_of(owned, h)) return nullptr;
  if (h.name != kOwnedVersioned) {
    PyErr_SetString(PyExc_ValueError, "conformance probe: expected an owned versioned tensor");
    return nullptr;
  }
  PyCapsule_SetName(owned, "dlpackpp_kit.released");
  void* result = nullptr;
  auto* m = static_cast<DLManagedTensorVersioned*>(h.managed);
  int rc = api->managed_tensor_to_py_object_no_sync(m, &result);
  if (rc != 0 || result == nullptr) {
    PyErr_Clear();
    call_deleter(m, true);
    return Py_BuildValue("(iO)", rc, Py_None);
  }
  return Py_BuildValue("(iN)", rc, static_cast<PyObject*>(result));
}

}  // namespace

PyMethodDef g_exchange_methods[] = {
    {"table_header", &table_header, METH_O, "the table's header chain and entries"},
    {"table_from_py", &table_from_py, METH_VARARGS, "managed_tensor_from_py_object_no_sync"},
    {"table_borrow", &table_borrow, METH_VARARGS, "dltensor_from_py_object_no_sync"},
    {"table_stream", &table_stream, METH_VARARGS, "current_work_stream"},
    {"table_alloc", &table_alloc, METH_VARARGS, "managed_tensor_allocator"},
    {"table_to_py", &table_to_py, METH_VARARGS, "managed_tensor_to_py_object_no_sync"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace dlpackpp_probe
