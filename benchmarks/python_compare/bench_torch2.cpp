// SPDX-License-Identifier: Apache-2.0
// PyTorch 2.x rows (bench.py --suite torch2): each dlpackpp call next to the same exchange-table
// call written by hand against the raw C table, in one module built one way. Needs no torch
// headers: the table comes from the capsule torch.Tensor publishes in
// `__dlpack_c_exchange_api__`, which the hand-written side looks up once and keeps in a static.
// Each function does as little as it can beyond the exchange, so the exchange dominates.
#include <dlpackpp/python.hpp>

#include <cstdint>
#include <cstdlib>

namespace {

namespace py = dlpackpp::python;
using dlpackpp::DataType;
using dlpackpp::Result;
using dlpackpp::TensorView;

PyObject* fail(const dlpackpp::Error& error) {
  py::set_python_error(error);
  return nullptr;
}

// The floor: a module call that converts nothing.
PyObject* noop(PyObject*, PyObject*) { Py_RETURN_NONE; }

// ---- by hand: the raw table ---------------------------------------------------------------

// What a consumer of one known framework writes: the capsule of type(obj), a version check,
// no fallback. NULL with an exception set when the type has no table of major version 1.
const DLPackExchangeAPI* lookup_table(PyObject* obj) {
  PyObject* capsule = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(obj)),
                                             "__dlpack_c_exchange_api__");
  if (capsule == nullptr) return nullptr;
  const auto* api =
      static_cast<const DLPackExchangeAPI*>(PyCapsule_GetPointer(capsule, "dlpack_exchange_api"));
  Py_DECREF(capsule);
  if (api == nullptr) return nullptr;
  if (api->header.version.major != DLPACK_MAJOR_VERSION) {
    PyErr_SetString(PyExc_BufferError, "exchange table of another DLPack major version");
    return nullptr;
  }
  return api;
}

// The table, looked up on the first call and kept (one framework, one type).
const DLPackExchangeAPI* table_of(PyObject* obj) {
  static const DLPackExchangeAPI* api = lookup_table(obj);
  return api;
}

std::int64_t count(const DLTensor& t) {
  std::int64_t n = 1;
  for (std::int32_t d = 0; d < t.ndim; ++d) n *= t.shape[d];
  return n;
}

// (a) owning import: the producer's export, its element count, its deleter.
PyObject* import_hand(PyObject*, PyObject* obj) {
  const DLPackExchangeAPI* api = table_of(obj);
  if (api == nullptr) return nullptr;
  DLManagedTensorVersioned* m = nullptr;
  if (api->managed_tensor_from_py_object_no_sync(obj, &m) != 0) return nullptr;
  const std::int64_t n = count(m->dl_tensor);
  if (m->deleter != nullptr) m->deleter(m);
  return PyLong_FromLongLong(static_cast<long long>(n));
}

// (b) borrow: a DLTensor filled in place, no ownership.
PyObject* borrow_hand(PyObject*, PyObject* obj) {
  const DLPackExchangeAPI* api = table_of(obj);
  if (api == nullptr) return nullptr;
  DLTensor t;
  if (api->dltensor_from_py_object_no_sync(obj, &t) != 0) return nullptr;
  return PyLong_FromLongLong(static_cast<long long>(count(t)));
}

// (c) export into torch. The tensor handed over is 8 float64 from a static buffer (torch's
// tensor aliases it and is dropped at once by the caller); its owner does nothing, so what is
// measured is the export block and the hand-over.
double g_values[8] = {0, 1, 2, 3, 4, 5, 6, 7};
const std::int64_t g_shape[1] = {8};
struct NoOwner {};

dlpackpp::ManagedTensor make_export() {
  return dlpackpp::wrap(g_values, DataType::float64(), g_shape, {}, dlpackpp::Device::cpu(),
                        NoOwner{});
}

// The same export block made with dlpackpp::wrap as the dlpackpp row, then the raw call.
PyObject* export_hand(PyObject*, PyObject* like) {
  const DLPackExchangeAPI* api = table_of(like);
  if (api == nullptr) return nullptr;
  DLManagedTensorVersioned* m = make_export().release();
  void* out = nullptr;
  if (api->managed_tensor_to_py_object_no_sync(m, &out) != 0) return nullptr;
  return static_cast<PyObject*>(out);
}

// For scale: the export block itself written by hand (one malloc, strides included).
struct HandExport {
  DLManagedTensorVersioned m;
  std::int64_t shape[1];
  std::int64_t strides[1];
};

void free_hand_export(DLManagedTensorVersioned* self) { std::free(self); }

PyObject* export_hand_c(PyObject*, PyObject* like) {
  const DLPackExchangeAPI* api = table_of(like);
  if (api == nullptr) return nullptr;
  auto* h = static_cast<HandExport*>(std::malloc(sizeof(HandExport)));
  if (h == nullptr) return PyErr_NoMemory();
  h->shape[0] = 8;
  h->strides[0] = 1;
  h->m.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  h->m.manager_ctx = nullptr;
  h->m.deleter = &free_hand_export;
  h->m.flags = 0;
  h->m.dl_tensor = DLTensor{g_values, {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, h->shape, h->strides, 0};
  void* out = nullptr;
  if (api->managed_tensor_to_py_object_no_sync(&h->m, &out) != 0) return nullptr;
  return static_cast<PyObject*>(out);
}

// ---- dlpackpp -----------------------------------------------------------------------------

PyObject* import_dlpackpp(PyObject*, PyObject* obj) {
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj);
  if (!t) return fail(t.error());
  return PyLong_FromLongLong(static_cast<long long>(t->numel()));
}

PyObject* borrow_dlpackpp(PyObject*, PyObject* obj) {
  Result<std::int64_t> n = py::try_borrow(obj, [](const TensorView& v) { return v.numel(); });
  if (!n) return fail(n.error());
  return PyLong_FromLongLong(static_cast<long long>(*n));
}

// To split try_borrow's cost: the table from dlpackpp's per-type cache and the validated view
// from the library's one-table wrapper, without try_borrow's dispatch around them.
PyObject* borrow_view_from_object(PyObject*, PyObject* obj) {
  DLTensor storage;
  Result<TensorView> v = dlpackpp::view_from_object(py::exchange_api_of(obj), obj, storage);
  if (!v) return fail(v.error());
  return PyLong_FromLongLong(static_cast<long long>(v->numel()));
}

// The table found through dlpackpp's per-type cache on every call, as generic code would.
PyObject* export_dlpackpp(PyObject*, PyObject* like) {
  Result<void*> out = dlpackpp::to_object(py::exchange_api_of(like), make_export());
  if (!out) return fail(out.error());
  return static_cast<PyObject*>(*out);
}

// The same with the table kept in a static, as the hand-written side keeps it.
PyObject* export_dlpackpp_static(PyObject*, PyObject* like) {
  static const DLPackExchangeAPI* api = py::exchange_api_of(like);
  Result<void*> out = dlpackpp::to_object(api, make_export());
  if (!out) return fail(out.error());
  return static_cast<PyObject*>(*out);
}

// The table's version and entries, for the header line and for the rows that need them.
PyObject* table_info(PyObject*, PyObject* obj) {
  const DLPackExchangeAPI* api = lookup_table(obj);
  if (api == nullptr) return nullptr;
  return Py_BuildValue(
      "{s:(ii),s:O,s:O,s:O}", "version", static_cast<int>(api->header.version.major),
      static_cast<int>(api->header.version.minor), "borrow",
      api->dltensor_from_py_object_no_sync != nullptr ? Py_True : Py_False, "import",
      api->managed_tensor_from_py_object_no_sync != nullptr ? Py_True : Py_False, "export",
      api->managed_tensor_to_py_object_no_sync != nullptr ? Py_True : Py_False);
}

PyMethodDef methods[] = {{"noop", &noop, METH_O, nullptr},
                         {"import_hand", &import_hand, METH_O, nullptr},
                         {"borrow_hand", &borrow_hand, METH_O, nullptr},
                         {"export_hand", &export_hand, METH_O, nullptr},
                         {"export_hand_c", &export_hand_c, METH_O, nullptr},
                         {"import_dlpackpp", &import_dlpackpp, METH_O, nullptr},
                         {"borrow_dlpackpp", &borrow_dlpackpp, METH_O, nullptr},
                         {"borrow_view_from_object", &borrow_view_from_object, METH_O, nullptr},
                         {"export_dlpackpp", &export_dlpackpp, METH_O, nullptr},
                         {"export_dlpackpp_static", &export_dlpackpp_static, METH_O, nullptr},
                         {"table_info", &table_info, METH_O, nullptr},
                         {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT,
                      "bench_torch2",
                      nullptr,
                      -1,
                      methods,
                      nullptr,
                      nullptr,
                      nullptr,
                      nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_bench_torch2(void) { return PyModule_Create(&module); }
