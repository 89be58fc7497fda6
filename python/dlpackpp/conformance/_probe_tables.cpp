// SPDX-License-Identifier: Apache-2.0
// Part of the probe (_probe.cpp): the kit's own exchange tables, one right and one per fault,
// for the reference adapters in the project's tests. The right one serves CPU tensors through
// the object's own __dlpack__(max_version=(1, 3)).
#include "_probe.hpp"

#include <utility>

namespace dlpackpp_probe {

PyObject* g_table_factory = nullptr;

namespace {

enum TableFault {
  kTableRight,
  kTableMajor2,          // X2: header major 2 and no older table
  kTableNullEntry,       // X2: a required entry is NULL
  kTableWrongShape,      // X3: the owning import differs from __dlpack__
  kTableCpuStreamFails,  // X4: current_work_stream fails for CPU
  kTableSetErrorTwice,   // X5: the allocator reports one failure twice
  kTableToPyDoubleFree,  // X5: to_py_object releases the tensor it was given and keeps it
  kTableFaults
};

PyObject* set_table_factory(PyObject*, PyObject* factory) {
  Py_XDECREF(g_table_factory);
  Py_INCREF(factory);
  g_table_factory = factory;
  Py_RETURN_NONE;
}

bool byte_dtype(const DLDataType& d) {
  return d.bits % 8 == 0 && d.bits > 0 && d.lanes == 1 &&
         (d.code <= 2 || d.code == 4 || d.code == 5 || d.code == 6);
}

template <int F>
int kit_allocator(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                  void (*set_error)(void*, const char*, const char*)) {
  *out = nullptr;
  if (proto->device.device_type != kDLCPU || !byte_dtype(proto->dtype) || proto->ndim < 0 ||
      (proto->ndim > 0 && proto->shape == nullptr)) {
    set_error(ctx, "BufferError", "the kit's table allocates byte-sized CPU tensors only");
    if (F == kTableSetErrorTwice) set_error(ctx, "BufferError", "and says so twice");
    return -1;
  }
  std::int64_t numel = 1;
  for (int i = 0; i < proto->ndim; ++i) numel *= proto->shape[i];
  PyObject* buffer = PyByteArray_FromStringAndSize(nullptr, numel * (proto->dtype.bits / 8) + 1);
  if (buffer == nullptr) {
    PyErr_Clear();
    set_error(ctx, "MemoryError", "out of memory");
    return -1;
  }
  auto* t = new KitTensor();
  t->owner = py::ObjectRef::steal(buffer);
  t->shape.assign(proto->shape, proto->shape + proto->ndim);
  std::int64_t stride = 1;
  t->strides.resize(t->shape.size());
  for (int i = proto->ndim - 1; i >= 0; --i) {
    t->strides[i] = stride;
    stride *= t->shape[i];
  }
  DLTensor& d = t->versioned.dl_tensor;
  d = *proto;
  d.data = PyByteArray_AsString(buffer);
  d.shape = t->shape.empty() ? nullptr : t->shape.data();
  d.strides = t->strides.empty() ? nullptr : t->strides.data();
  d.byte_offset = 0;
  t->versioned.version = {1, 3};
  t->versioned.manager_ctx = t;
  t->versioned.deleter = &kit_delete_versioned;
  register_block(&t->versioned, t);
  *out = &t->versioned;
  return 0;
}

template <int F>
int kit_from_py(void* py_object, DLManagedTensorVersioned** out) {
  *out = nullptr;
  PyObject* obj = static_cast<PyObject*>(py_object);
  PyObject* kwargs = Py_BuildValue("{s:(ii)}", "max_version", 1, 3);
  PyObject* method = kwargs != nullptr ? PyObject_GetAttrString(obj, "__dlpack__") : nullptr;
  PyObject* empty = PyTuple_New(0);
  PyObject* capsule = method != nullptr ? PyObject_Call(method, empty, kwargs) : nullptr;
  Py_XDECREF(method);
  Py_XDECREF(empty);
  Py_XDECREF(kwargs);
  if (capsule == nullptr) return -1;
  void* managed = PyCapsule_GetPointer(capsule, "dltensor_versioned");
  if (managed == nullptr || PyCapsule_SetName(capsule, "used_dltensor_versioned") != 0) {
    Py_DECREF(capsule);
    return -1;
  }
  Py_DECREF(capsule);
  *out = static_cast<DLManagedTensorVersioned*>(managed);
  if (F == kTableWrongShape && (*out)->dl_tensor.ndim > 0) (*out)->dl_tensor.shape[0] -= 1;
  return 0;
}

template <int F>
int kit_to_py(DLManagedTensorVersioned* tensor, void** out) {
  PyObject* owned = PyCapsule_New(tensor, kOwnedVersioned, &owned_destructor);
  if (owned == nullptr) return -1;
  if (F == kTableToPyDoubleFree) call_deleter(tensor, true);
  if (g_table_factory == nullptr) {
    *out = owned;
    return 0;
  }
  PyObject* result = PyObject_CallFunctionObjArgs(g_table_factory, owned, nullptr);
  Py_DECREF(owned);
  if (result == nullptr) return -1;
  *out = result;
  return 0;
}

template <int F>
int kit_stream(DLDeviceType type, std::int32_t, void** out) {
  if (type == kDLCPU && F != kTableCpuStreamFails) {
    *out = nullptr;
    return 0;
  }
  PyErr_SetString(PyExc_BufferError, "the kit's table has no streams");
  return -1;
}

template <int F>
const DLPackExchangeAPI* kit_table_of() {
  static const DLPackExchangeAPI table = [] {
    DLPackExchangeAPI t{};
    t.header.version.major = F == kTableMajor2 ? 2 : DLPACK_MAJOR_VERSION;
    t.header.version.minor = DLPACK_MINOR_VERSION;
    t.header.prev_api = nullptr;
    t.managed_tensor_allocator = &kit_allocator<F>;
    t.managed_tensor_from_py_object_no_sync = &kit_from_py<F>;
    t.managed_tensor_to_py_object_no_sync = &kit_to_py<F>;
    t.dltensor_from_py_object_no_sync = nullptr;
    t.current_work_stream = F == kTableNullEntry ? nullptr : &kit_stream<F>;
    return t;
  }();
  return &table;
}

template <int... F>
const DLPackExchangeAPI* kit_table_at(int fault, std::integer_sequence<int, F...>) {
  const DLPackExchangeAPI* tables[] = {kit_table_of<F>()...};
  return tables[fault];
}

// kit_table(fault=0, fresh=False, name="dlpack_exchange_api") -> capsule. `fresh` points the
// capsule at a new copy of the table (X1: a different pointer each time).
PyObject* kit_table(PyObject*, PyObject* args) {
  int fault = 0, fresh = 0;
  const char* name = "dlpack_exchange_api";
  if (PyArg_ParseTuple(args, "|ips", &fault, &fresh, &name) == 0) return nullptr;
  if (fault < 0 || fault >= kTableFaults) {
    PyErr_SetString(PyExc_ValueError, "conformance probe: no such table fault");
    return nullptr;
  }
  const DLPackExchangeAPI* table =
      kit_table_at(fault, std::make_integer_sequence<int, kTableFaults>{});
  if (fresh != 0) table = new DLPackExchangeAPI(*table);  // kept: tables live for the process
  const char* kept_name = (new std::string(name))->c_str();
  return PyCapsule_New(const_cast<DLPackExchangeAPI*>(table), kept_name, nullptr);
}

}  // namespace

PyMethodDef g_table_methods[] = {
    {"kit_table", &kit_table, METH_VARARGS, "a kit-made exchange table capsule"},
    {"set_table_factory", &set_table_factory, METH_O, "what to_py_object wraps a tensor in"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace dlpackpp_probe
