// SPDX-License-Identifier: Apache-2.0
// Per-call import costs through <dlpackpp/python.hpp> against hand-written capsule code
// doing the same checks, in one module, plus the exchange API's borrow path against a direct
// call into the table (mock framework of tests/python). Driven by bench.py.
#include <dlpackpp/python.hpp>

#include "mock_framework.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {
// Heap allocations made by this module's own code (dlpackpp is header-only, so its
// allocations land here): operator new is replaced, and -Bsymbolic with Python's
// RTLD_LOCAL loading keeps the replacement to this module.
std::size_t g_allocations = 0;
}  // namespace

void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace py = dlpackpp::python;
using dlpackpp::DataType;
using dlpackpp::Result;
using dlpackpp::TensorView;

namespace {

// Keeps a value alive as far as the optimizer knows.
template <class T>
inline void keep(T const& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

PyObject* g_dlpack_name = nullptr;
PyObject* g_kwnames = nullptr;
PyObject* g_max_version = nullptr;

// The checks every path applies after the import: float32 of the given rank (1 for the
// NumPy vector, 2 for the mock).
bool expected(const DLTensor& t, int ndim = 1) {
  return DataType(t.dtype) == DataType::float32() && t.ndim == ndim;
}

// via_dlpackpp(obj): from_dlpack, then the same checks.
PyObject* via_dlpackpp(PyObject*, PyObject* obj) {
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj);
  if (!t) {
    py::set_python_error(t.error());
    return nullptr;
  }
  if (!expected(t->get()->dl_tensor)) {
    PyErr_SetString(PyExc_TypeError, "expected a float32 vector");
    return nullptr;
  }
  Py_RETURN_NONE;
}

// Hand-written: obj.__dlpack__(**kw) through vectorcall, as dlpackpp calls it.
PyObject* call_dlpack(PyObject* obj, bool versioned) {
  PyObject* args[3] = {nullptr, obj, g_max_version};
  return PyObject_VectorcallMethod(g_dlpack_name, args + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                   versioned ? g_kwnames : nullptr);
}

// Hand-written capsule code for one capsule kind: name check, rename, validate, the same
// checks, deleter, with every error path a careful author needs.
template <class M>
PyObject* consume(PyObject* capsule, const char* name, const char* used) {
  auto* managed = static_cast<M*>(PyCapsule_GetPointer(capsule, name));
  if (managed == nullptr || PyCapsule_SetName(capsule, used) != 0) {
    Py_DECREF(capsule);
    return nullptr;
  }
  Py_DECREF(capsule);
  dlpackpp::ValidateOptions options;
  if constexpr (std::is_same<M, DLManagedTensorVersioned>::value) {
    if (managed->version.major != 1) {
      if (managed->deleter != nullptr) managed->deleter(managed);
      PyErr_SetString(PyExc_BufferError, "unsupported DLPack major version");
      return nullptr;
    }
    options.flags = managed->flags;
  }
  const bool ok =
      dlpackpp::validate(managed->dl_tensor, options).has_value() && expected(managed->dl_tensor);
  if (managed->deleter != nullptr) managed->deleter(managed);
  if (!ok) {
    PyErr_SetString(PyExc_TypeError, "expected a valid float32 vector");
    return nullptr;
  }
  Py_RETURN_NONE;
}

// via_capsule(obj): legacy protocol, by hand (what NumPy 1.x speaks).
PyObject* via_capsule(PyObject*, PyObject* obj) {
  PyObject* capsule = call_dlpack(obj, false);
  if (capsule == nullptr) return nullptr;
  return consume<DLManagedTensor>(capsule, "dltensor", "used_dltensor");
}

// via_capsule_versioned(obj): __dlpack__(max_version=(1, N)) by hand (NumPy 2.x).
PyObject* via_capsule_versioned(PyObject*, PyObject* obj) {
  PyObject* capsule = call_dlpack(obj, true);
  if (capsule == nullptr) return nullptr;
  if (PyCapsule_IsValid(capsule, "dltensor_versioned") != 0) {
    return consume<DLManagedTensorVersioned>(capsule, "dltensor_versioned",
                                             "used_dltensor_versioned");
  }
  return consume<DLManagedTensor>(capsule, "dltensor", "used_dltensor");
}

PyObject* noop(PyObject*, PyObject*) { Py_RETURN_NONE; }

// tensor() -> a fresh dlpackpp.Tensor (16 float32), for timing its __dlpack__ and
// __dlpack_device__.
PyObject* tensor(PyObject*, PyObject*) {
  const std::int64_t shape[1] = {16};
  Result<py::ImportedTensor> t = dlpackpp::try_allocate<py::ImportedTensor>(
      DataType::float32(), dlpackpp::IntSpan(shape, 1), dlpackpp::Device::cpu());
  if (!t) {
    py::set_python_error(t.error());
    return nullptr;
  }
  return py::to_pyobject(std::move(*t));
}

PyObject* mock(PyObject*, PyObject*) {
  PyObject* type = dlpackpp_mock::mock_type("dlpackpp_bench.MockTensor");
  return type == nullptr ? nullptr : dlpackpp_mock::make_mock(type, 0);
}

double now_ns() {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
}

// exchange(obj, n) -> dict of ns per call and heap allocations per call, best of 5 rounds:
// the table's dltensor_from_py_object_no_sync called directly vs try_borrow, and the
// table's managed_tensor_from_py_object_no_sync + deleter vs try_from_dlpack.
PyObject* exchange(PyObject*, PyObject* args) {
  PyObject* obj = nullptr;
  long n = 0;
  if (PyArg_ParseTuple(args, "Ol", &obj, &n) == 0) return nullptr;
  PyObject* capsule = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(obj)),
                                             "__dlpack_c_exchange_api__");
  if (capsule == nullptr) return nullptr;
  const auto* head = static_cast<const DLPackExchangeAPIHeader*>(
      PyCapsule_GetPointer(capsule, "dlpack_exchange_api"));
  Py_DECREF(capsule);
  const DLPackExchangeAPI* api = dlpackpp::find_exchange_api(head);
  if (api == nullptr) {
    PyErr_SetString(PyExc_TypeError, "no usable exchange API");
    return nullptr;
  }
  // Any failure below is a broken benchmark: say so instead of returning a bare NULL.
  const auto broken = [] {
    if (PyErr_Occurred() == nullptr)
      PyErr_SetString(PyExc_RuntimeError, "exchange benchmark: a call failed");
    return nullptr;
  };

  // Many short rounds, best per path: on a shared machine the best round is the one nobody
  // else interrupted.
  constexpr int paths = 5;
  double best[paths] = {1e300, 1e300, 1e300, 1e300, 1e300};
  std::size_t allocations[paths] = {};
  for (int round = 0; round < 40; ++round) {
    for (int which = 0; which < paths; ++which) {
      const std::size_t before = g_allocations;
      const double start = now_ns();
      for (long i = 0; i < n; ++i) {
        if (which == 0) {
          DLTensor t;
          if (api->dltensor_from_py_object_no_sync(obj, &t) != 0 || !expected(t, 2))
            return broken();
          keep(t.data);
        } else if (which == 1) {
          Result<bool> r = py::try_borrow(obj, [](const TensorView& v) {
            return v.dtype() == DataType::float32() && v.ndim() == 2;
          });
          if (!r || !*r) return broken();
        } else if (which == 4) {
          DLTensor t;
          if (api->dltensor_from_py_object_no_sync(obj, &t) != 0) return broken();
          Result<TensorView> v = TensorView::try_from(t);
          if (!v || !(v->dtype() == DataType::float32() && v->ndim() == 2)) return broken();
        } else if (which == 2) {
          DLManagedTensorVersioned* t = nullptr;
          if (api->managed_tensor_from_py_object_no_sync(obj, &t) != 0 ||
              !expected(t->dl_tensor, 2))
            return broken();
          t->deleter(t);
        } else {
          Result<py::ImportedTensor> t = py::try_from_dlpack(obj);
          if (!t || !expected(t->get()->dl_tensor, 2)) return broken();
        }
      }
      const double per_call = (now_ns() - start) / static_cast<double>(n);
      if (per_call < best[which]) best[which] = per_call;
      allocations[which] = (g_allocations - before) / static_cast<std::size_t>(n);
    }
  }
  return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:n,s:n,s:n,s:n}", "direct_borrow_ns", best[0],
                       "direct_validated_ns", best[4], "try_borrow_ns", best[1],
                       "direct_managed_ns", best[2], "try_from_dlpack_ns", best[3],
                       "direct_borrow_allocs", static_cast<Py_ssize_t>(allocations[0]),
                       "try_borrow_allocs", static_cast<Py_ssize_t>(allocations[1]),
                       "direct_managed_allocs", static_cast<Py_ssize_t>(allocations[2]),
                       "try_from_dlpack_allocs", static_cast<Py_ssize_t>(allocations[3]));
}

PyMethodDef g_methods[] = {
    {"via_dlpackpp", &via_dlpackpp, METH_O, "dlpackpp::python::try_from_dlpack"},
    {"via_capsule", &via_capsule, METH_O, "hand-written legacy capsule code"},
    {"via_capsule_versioned", &via_capsule_versioned, METH_O,
     "hand-written versioned capsule code"},
    {"noop", &noop, METH_O, "the cost of the call itself"},
    {"tensor", &tensor, METH_NOARGS, "a fresh dlpackpp.Tensor of 16 float32"},
    {"mock", &mock, METH_NOARGS, "a MockTensor (exchange API)"},
    {"exchange", &exchange, METH_VARARGS, "exchange-API loops measured in C++"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT,
                        "dlpackpp_bench",
                        nullptr,
                        -1,
                        g_methods,
                        nullptr,
                        nullptr,
                        nullptr,
                        nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_dlpackpp_bench() {
  g_dlpack_name = PyUnicode_InternFromString("__dlpack__");
  PyObject* keyword =
      PyUnicode_InternFromString("max_version");  // interned, as a careful author would
  g_kwnames = keyword != nullptr ? PyTuple_Pack(1, keyword) : nullptr;
  Py_XDECREF(keyword);
  g_max_version = Py_BuildValue("(ii)", DLPACKPP_DLPACK_MAJOR, DLPACKPP_DLPACK_MINOR);
  if (g_dlpack_name == nullptr || g_kwnames == nullptr || g_max_version == nullptr) return nullptr;
  return PyModule_Create(&g_module);
}
