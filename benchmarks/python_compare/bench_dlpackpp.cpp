// SPDX-License-Identifier: Apache-2.0
// The dlpackpp side of the Python comparison: plain CPython module functions (METH_O) over
// dlpackpp::python, plus a mock framework whose type publishes the DLPack exchange API
// (Debian's PyTorch 1.13 predates it, and PyTorch 2.x wheels are gigabytes). Each function does
// as little as possible beyond the conversion, so the conversion dominates the call.
#include <dlpackpp/python.hpp>

#include "first_of.hpp"

#include <cstdint>
#include <utility>
#include <vector>

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

// (a) and (b): import an owning handle, report the element count, drop it (the producer's
// deleter runs before returning).
PyObject* numel(PyObject*, PyObject* obj) {
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj);
  if (!t) return fail(t.error());
  return PyLong_FromLongLong(static_cast<long long>(t->numel()));
}

// The same through try_borrow: no ownership where the producer's type allows it.
PyObject* numel_borrowed(PyObject*, PyObject* obj) {
  Result<std::int64_t> n = py::try_borrow(obj, [](const TensorView& v) { return v.numel(); });
  if (!n) return fail(n.error());
  return PyLong_FromLongLong(static_cast<long long>(*n));
}

// Typed: what nanobind's ndarray<const double, ndim<1>, c_contig> checks, then element 0.
Result<double> first_of(const TensorView& v) {
  Result<TensorView> checked = v.try_require_dtype(DataType::float64());
  if (checked) checked = checked->try_require_ndim(1);
  if (checked) checked = checked->try_require_contiguous();
  if (!checked) return checked.error();
  if (v.numel() == 0) return 0.0;
  Result<const double*> p = v.try_data<const double>();
  if (!p) return p.error();
  return (*p)[0];
}

// The typed rows only read, as nb::ndarray<const double, ...> declares: the same information
// goes to dlpackpp as ImportOptions::only_reading (the legacy capsule first, as nanobind asks).
py::ImportOptions reading() {
  py::ImportOptions options;
  options.only_reading = true;
  return options;
}

PyObject* first_f64_plain(PyObject*, PyObject* obj) {
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj, reading());
  if (!t) return fail(t.error());
  // The checks as plain comparisons (first_of.hpp), to see what the require_ chain costs.
  Result<double> x = bench::first_of(t->view());
  if (!x) return fail(x.error());
  return PyFloat_FromDouble(*x);
}

PyObject* first_f64(PyObject*, PyObject* obj) {
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj, reading());
  if (!t) return fail(t.error());
  Result<double> x = first_of(t->view());
  if (!x) return fail(x.error());
  return PyFloat_FromDouble(*x);
}

// The same without only_reading: max_version is asked, as for a tensor that may be written.
PyObject* first_f64_versioned(PyObject*, PyObject* obj) {
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj);
  if (!t) return fail(t.error());
  Result<double> x = first_of(t->view());
  if (!x) return fail(x.error());
  return PyFloat_FromDouble(*x);
}

PyObject* first_f64_borrowed(PyObject*, PyObject* obj) {
  Result<double> x = py::try_borrow(obj, first_of, reading());
  if (!x) return fail(x.error());
  return PyFloat_FromDouble(*x);
}

// (b): a C++-owned float64 tensor of n zeros, returned as a dlpackpp.Tensor.
PyObject* make(PyObject*, PyObject* arg) {
  const Py_ssize_t n = PyLong_AsSsize_t(arg);
  if (n < 0)
    return PyErr_Occurred() != nullptr
               ? nullptr
               : fail(dlpackpp::Error(dlpackpp::Errc::invalid_argument, "n < 0"));
  const std::int64_t shape[] = {static_cast<std::int64_t>(n)};
  Result<py::ImportedTensor> t =
      dlpackpp::try_from_vector(std::vector<double>(static_cast<std::size_t>(n)), shape);
  if (!t) return fail(t.error());
  return py::to_pyobject(std::move(*t));
}

// ---- (c) a mock framework with the exchange API ------------------------------------------------
// Two types over the same instance layout (8 float32 values of shape [8]): MockExchange
// publishes __dlpack_c_exchange_api__ and __dlpack__, MockDunder only __dlpack__ (what every
// framework without the exchange API offers). Owning exports keep the object alive through
// py::ObjectRef, as a framework's export keeps its tensor alive.
struct MockObject {
  PyObject_HEAD float values[8];
  std::int64_t shape[1];
};

MockObject* as_mock(void* obj) { return static_cast<MockObject*>(obj); }

py::ImportedTensor export_of(PyObject* obj) {
  MockObject* m = as_mock(obj);
  return dlpackpp::wrap(m->values, DataType::float32(), m->shape, {}, dlpackpp::Device::cpu(),
                        py::ObjectRef::borrow(obj));
}

struct MockImpl {
  static dlpackpp::ManagedTensor managed_tensor_allocator(const DLTensor& prototype) {
    return dlpackpp::allocate(prototype.dtype,
                              {prototype.shape, static_cast<std::size_t>(prototype.ndim)});
  }
  static dlpackpp::ManagedTensor managed_tensor_from_py_object_no_sync(void* obj) {
    return export_of(static_cast<PyObject*>(obj));
  }
  static void* managed_tensor_to_py_object_no_sync(dlpackpp::ManagedTensor& tensor) {
    return py::to_pyobject(std::move(tensor));
  }
  static void dltensor_from_py_object_no_sync(void* obj, DLTensor& out) {
    MockObject* m = as_mock(obj);
    out.data = m->values;
    out.device = dlpackpp::Device::cpu();
    out.ndim = 1;
    out.dtype = DataType::float32();
    out.shape = m->shape;
    out.strides = nullptr;
    out.byte_offset = 0;
  }
  static void* current_work_stream(dlpackpp::Device) { return nullptr; }
  static void set_error(std::string_view, std::string_view message) {
    PyErr_SetString(PyExc_BufferError, std::string(message).c_str());
  }
};

// __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None): a versioned capsule
// when max_version asks for >= 1, else a legacy one; the other keywords are accepted and
// ignored (CPU, no copies), as a C-implemented producer would.
PyObject* mock_dlpack(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (args != nullptr && PyTuple_Size(args) != 0) {
    PyErr_SetString(PyExc_TypeError, "__dlpack__ takes keyword arguments only");
    return nullptr;
  }
  bool versioned = false;
  if (kwargs != nullptr) {
    PyObject* max_version = PyDict_GetItemString(kwargs, "max_version");  // borrowed
    if (max_version != nullptr && max_version != Py_None) {
      PyObject* major = PySequence_GetItem(max_version, 0);
      if (major == nullptr) return nullptr;
      versioned = PyLong_AsLong(major) >= 1;
      Py_DECREF(major);
    }
  }
  py::ImportedTensor t = export_of(self);
  if (versioned) return py::to_capsule(std::move(t));
  Result<dlpackpp::LegacyManagedTensor> legacy = dlpackpp::try_to_legacy(std::move(t));
  if (!legacy) return fail(legacy.error());
  return py::to_capsule(std::move(*legacy));
}

PyObject* mock_dlpack_device(PyObject*, PyObject*) { return Py_BuildValue("(ii)", 1, 0); }

PyMethodDef mock_methods[] = {
    {"__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&mock_dlpack)),
     METH_VARARGS | METH_KEYWORDS, nullptr},
    {"__dlpack_device__", &mock_dlpack_device, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};
PyType_Slot mock_slots[] = {{Py_tp_methods, mock_methods}, {0, nullptr}};
PyType_Spec exchange_spec = {"bench_dlpackpp.MockExchange", static_cast<int>(sizeof(MockObject)), 0,
                             Py_TPFLAGS_DEFAULT, mock_slots};
PyType_Spec dunder_spec = {"bench_dlpackpp.MockDunder", static_cast<int>(sizeof(MockObject)), 0,
                           Py_TPFLAGS_DEFAULT, mock_slots};

PyObject* g_exchange_type = nullptr;
PyObject* g_dunder_type = nullptr;

PyObject* new_mock(PyObject* type) {
  PyObject* obj = PyType_GenericAlloc(reinterpret_cast<PyTypeObject*>(type), 0);
  if (obj == nullptr) return nullptr;
  MockObject* m = as_mock(obj);
  for (int i = 0; i < 8; ++i) m->values[i] = static_cast<float>(i);
  m->shape[0] = 8;
  return obj;
}

PyObject* mock_exchange(PyObject*, PyObject*) { return new_mock(g_exchange_type); }
PyObject* mock_dunder(PyObject*, PyObject*) { return new_mock(g_dunder_type); }

// The floor for (c): the table's dltensor_from_py_object_no_sync called directly, with the
// table looked up once and cached, as a hand-written consumer of one known framework would.
PyObject* numel_raw_exchange(PyObject*, PyObject* obj) {
  static const DLPackExchangeAPI* api = dlpackpp::make_exchange_api<MockImpl>();
  DLTensor t;
  if (api->dltensor_from_py_object_no_sync(obj, &t) != 0) return nullptr;
  std::int64_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= t.shape[d];
  return PyLong_FromLongLong(static_cast<long long>(n));
}

// ---- the hand-written C counterparts of the guard's Python rows (icount_guard.py) -------------
// The leanest correct consumer a C extension would write for each route, next to dlpackpp's.

// A tensor's element count, or -1 where the shape is absent or the count overflows.
long long numel_checked(const DLTensor& t) {
  if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr)) return -1;
  long long n = 1;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] < 0 || __builtin_mul_overflow(n, t.shape[d], &n)) return -1;
  }
  return n;
}

PyObject* bad_tensor() {
  PyErr_SetString(PyExc_BufferError, "unsupported DLPack tensor");
  return nullptr;
}

// obj.__dlpack__(max_version=(1, 0)) by hand: the versioned capsule, its version checked, the
// element count read, the capsule marked used and the tensor released.
PyObject* numel_hand_capsule(PyObject*, PyObject* obj) {
  static PyObject* name = PyUnicode_InternFromString("__dlpack__");
  static PyObject* kwnames = PyTuple_Pack(1, PyUnicode_InternFromString("max_version"));
  static PyObject* max_version = Py_BuildValue("(ii)", 1, 0);
  PyObject* args[2] = {obj, max_version};
  PyObject* capsule =
      PyObject_VectorcallMethod(name, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
  if (capsule == nullptr) return nullptr;
  auto* mt =
      static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, "dltensor_versioned"));
  if (mt == nullptr) {
    Py_DECREF(capsule);
    return nullptr;
  }
  const long long n = mt->version.major == 1 ? numel_checked(mt->dl_tensor) : -1;
  if (n < 0) {
    Py_DECREF(capsule);  // still unused: its destructor releases the tensor
    return bad_tensor();
  }
  PyCapsule_SetName(capsule, "used_dltensor_versioned");
  if (mt->deleter != nullptr) mt->deleter(mt);
  Py_DECREF(capsule);
  return PyLong_FromLongLong(n);
}

// The owning entry of the exchange table called directly (the table kept in a static, as for
// numel_raw_exchange), its version checked, the element count read, the tensor released.
PyObject* numel_hand_exchange(PyObject*, PyObject* obj) {
  static const DLPackExchangeAPI* api = dlpackpp::make_exchange_api<MockImpl>();
  DLManagedTensorVersioned* mt = nullptr;
  if (api->managed_tensor_from_py_object_no_sync(obj, &mt) != 0) return nullptr;
  const long long n = mt->version.major == 1 ? numel_checked(mt->dl_tensor) : -1;
  if (mt->deleter != nullptr) mt->deleter(mt);
  if (n < 0) return bad_tensor();
  return PyLong_FromLongLong(n);
}

// Where icount_guard.py has callgrind dump and zero its counters (--dump-before), so that the
// measured calls come after the warm-up ones (True: not folded with noop).
PyObject* icount_mark(PyObject*, PyObject*) { Py_RETURN_TRUE; }

PyMethodDef methods[] = {{"noop", &noop, METH_O, nullptr},
                         {"numel", &numel, METH_O, nullptr},
                         {"numel_borrowed", &numel_borrowed, METH_O, nullptr},
                         {"first_f64", &first_f64, METH_O, nullptr},
                         {"first_f64_plain", &first_f64_plain, METH_O, nullptr},
                         {"first_f64_versioned", &first_f64_versioned, METH_O, nullptr},
                         {"first_f64_borrowed", &first_f64_borrowed, METH_O, nullptr},
                         {"make", &make, METH_O, nullptr},
                         {"mock_exchange", &mock_exchange, METH_NOARGS, nullptr},
                         {"mock_dunder", &mock_dunder, METH_NOARGS, nullptr},
                         {"numel_raw_exchange", &numel_raw_exchange, METH_O, nullptr},
                         {"numel_hand_capsule", &numel_hand_capsule, METH_O, nullptr},
                         {"numel_hand_exchange", &numel_hand_exchange, METH_O, nullptr},
                         {"icount_mark", &icount_mark, METH_NOARGS, nullptr},
                         {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT,
                      "bench_dlpackpp",
                      nullptr,
                      -1,
                      methods,
                      nullptr,
                      nullptr,
                      nullptr,
                      nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_bench_dlpackpp(void) {
  PyObject* m = PyModule_Create(&module);
  if (m == nullptr) return nullptr;
  g_exchange_type = PyType_FromSpec(&exchange_spec);
  g_dunder_type = PyType_FromSpec(&dunder_spec);
  PyObject* api =
      PyCapsule_New(const_cast<DLPackExchangeAPI*>(dlpackpp::make_exchange_api<MockImpl>()),
                    "dlpack_exchange_api", nullptr);
  if (g_exchange_type == nullptr || g_dunder_type == nullptr || api == nullptr ||
      PyObject_SetAttrString(g_exchange_type, "__dlpack_c_exchange_api__", api) != 0 ||
      PyModule_AddObjectRef(m, "MockExchange", g_exchange_type) != 0 ||
      PyModule_AddObjectRef(m, "MockDunder", g_dunder_type) != 0) {
    Py_XDECREF(api);
    Py_DECREF(m);
    return nullptr;
  }
  Py_DECREF(api);
  return m;
}
