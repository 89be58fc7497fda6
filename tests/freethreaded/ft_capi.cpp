// SPDX-License-Identifier: Apache-2.0
// The stress test's C API module: <dlpackpp/python.hpp> and Python.h only, multi-phase init,
// declaring that it runs without the GIL (Py_mod_gil = Py_MOD_GIL_NOT_USED), so importing it
// on a free-threaded CPython leaves the GIL off. The dlpackpp.Tensor type is left to be made
// on first use, so that the threads' first exports race to make it. Every function returns (dtype
// name, sum) or a tensor; stress.py checks each against what it made.
#include <dlpackpp/python.hpp>  // first: it includes Python.h

#include "ft_values.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace py = dlpackpp::python;

PyObject* fail(const dlpackpp::Error& error) {
  py::set_python_error(error);
  return nullptr;
}

PyObject* described(const dlpackpp::TensorView& view) {
  auto d = ft::describe(view);
  if (!d) return fail(d.error());
  return Py_BuildValue("(sd)", d->first.c_str(), d->second);
}

// make(n, dtype) -> dlpackpp.Tensor of 0 .. n-1.
PyObject* make(PyObject*, PyObject* args) {
  Py_ssize_t n = 0;
  const char* dtype = nullptr;
  if (PyArg_ParseTuple(args, "ns:make", &n, &dtype) == 0) return nullptr;
  auto tensor = ft::make(n, dtype);
  if (!tensor) return fail(tensor.error());
  return py::to_pyobject(std::move(*tensor));
}

// capsule(n, dtype, versioned) -> a fresh "dltensor_versioned" or "dltensor" capsule.
PyObject* capsule(PyObject*, PyObject* args) {
  Py_ssize_t n = 0;
  const char* dtype = nullptr;
  int versioned = 1;
  if (PyArg_ParseTuple(args, "nsp:capsule", &n, &dtype, &versioned) == 0) return nullptr;
  auto tensor = ft::make(n, dtype);
  if (!tensor) return fail(tensor.error());
  if (versioned != 0) return py::to_capsule(std::move(*tensor));
  auto legacy = dlpackpp::try_to_legacy(std::move(*tensor));
  if (!legacy) return fail(legacy.error());
  return py::to_capsule(std::move(*legacy));
}

// owned(obj) -> (dtype, sum) through try_from_dlpack.
PyObject* owned(PyObject*, PyObject* obj) {
  auto tensor = py::try_from_dlpack(obj);
  if (!tensor) return fail(tensor.error());
  return described(tensor->view());
}

// reading(obj) -> (dtype, sum) through try_from_dlpack with only_reading.
PyObject* reading(PyObject*, PyObject* obj) {
  py::ImportOptions options;
  options.only_reading = true;
  auto tensor = py::try_from_dlpack(obj, options);
  if (!tensor) return fail(tensor.error());
  return described(tensor->view());
}

// borrowed(obj) -> (dtype, sum) through try_borrow.
PyObject* borrowed(PyObject*, PyObject* obj) {
  auto d = py::try_borrow(obj, [](const dlpackpp::TensorView& v) { return ft::describe(v); });
  if (!d) return fail(d.error());
  return Py_BuildValue("(sd)", d->first.c_str(), d->second);
}

// consume(capsule) -> (dtype, sum) through try_from_capsule (the capsule is used up).
PyObject* consume(PyObject*, PyObject* obj) {
  auto tensor = py::try_from_capsule(obj);
  if (!tensor) return fail(tensor.error());
  return described(tensor->view());
}

// reexport(obj) -> a new dlpackpp.Tensor owning an import of obj.
PyObject* reexport(PyObject*, PyObject* obj) {
  auto tensor = py::try_from_dlpack(obj);
  if (!tensor) return fail(tensor.error());
  return py::to_pyobject(std::move(*tensor));
}

// spin(route, objects, calls) -> seconds: one C++ thread per object, each attached to the
// interpreter, calling `route` ("borrow": try_borrow, "import": try_from_dlpack) on its object
// `calls` times, all started together; the wall time from the start to the last one's end.
// The throughput benchmark's measure (benchmarks/python_compare/ft_throughput.py): no Python
// loop around the calls, whose references to one shared function object would not scale.
PyObject* spin(PyObject*, PyObject* args) {
  const char* route = nullptr;
  PyObject* objects = nullptr;
  Py_ssize_t calls = 0;
  if (PyArg_ParseTuple(args, "sO!n:spin", &route, &PyList_Type, &objects, &calls) == 0)
    return nullptr;
  const bool borrow = std::string(route) == "borrow";
  std::vector<PyObject*> items;
  for (Py_ssize_t i = 0; i < PyList_Size(objects); ++i) items.push_back(PyList_GetItem(objects, i));
  std::atomic<int> ready{0};
  std::atomic<long> failed{0};
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point end;
  Py_BEGIN_ALLOW_THREADS {
    std::vector<std::thread> threads;
    for (PyObject* obj : items) {
      threads.emplace_back([&, obj] {
        const PyGILState_STATE state = PyGILState_Ensure();  // attach this thread
        ready.fetch_add(1);
        // Waits detached: an attached thread that spins stops the interpreter's
        // stop-the-world pauses (a garbage collection another thread starts), and with as
        // many threads as cores the ones still attaching never get to run.
        Py_BEGIN_ALLOW_THREADS;
        while (ready.load() < static_cast<int>(items.size())) std::this_thread::yield();
        Py_END_ALLOW_THREADS;
        for (Py_ssize_t i = 0; i < calls; ++i) {
          bool ok = false;
          if (borrow) {
            ok = static_cast<bool>(py::try_borrow(obj, [](const dlpackpp::TensorView& v) {
              return dlpackpp::Result<std::int64_t>(v.numel());
            }));
          } else {
            ok = static_cast<bool>(py::try_from_dlpack(obj));
          }
          if (!ok) failed.fetch_add(1);
        }
        PyGILState_Release(state);
      });
    }
    start = std::chrono::steady_clock::now();
    for (std::thread& t : threads) t.join();
    end = std::chrono::steady_clock::now();
  }
  Py_END_ALLOW_THREADS;
  if (failed.load() != 0) {
    PyErr_Format(PyExc_RuntimeError, "spin: %ld calls failed", failed.load());
    return nullptr;
  }
  return PyFloat_FromDouble(std::chrono::duration<double>(end - start).count());
}

PyMethodDef methods[] = {
    {"make", &make, METH_VARARGS, "make(n, dtype) -> dlpackpp.Tensor of 0 .. n-1"},
    {"capsule", &capsule, METH_VARARGS, "capsule(n, dtype, versioned) -> a fresh capsule"},
    {"owned", &owned, METH_O, "(dtype, sum) through try_from_dlpack"},
    {"reading", &reading, METH_O, "(dtype, sum) through try_from_dlpack, only_reading"},
    {"borrowed", &borrowed, METH_O, "(dtype, sum) through try_borrow"},
    {"consume", &consume, METH_O, "(dtype, sum) through try_from_capsule"},
    {"reexport", &reexport, METH_O, "to_pyobject(try_from_dlpack(obj))"},
    {"spin", &spin, METH_VARARGS, "spin(route, objects, calls) -> seconds, one C++ thread each"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef_Slot slots[] = {
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT,
                      "ft_capi",
                      "dlpackpp free-threading stress module",
                      0,
                      methods,
                      slots,
                      nullptr,
                      nullptr,
                      nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_ft_capi(void) { return PyModuleDef_Init(&module); }
