// SPDX-License-Identifier: Apache-2.0
// The stress test's C API module: <dlpackpp/python.hpp> and Python.h only, multi-phase init,
// declaring that it runs without the GIL (Py_mod_gil = Py_MOD_GIL_NOT_USED), so importing it
// on a free-threaded CPython leaves the GIL off. The dlpackpp.Tensor type is left to be made
// on first use, so that the threads' first exports race to make it. Every function returns (dtype
// name, sum) or a tensor; stress.py checks each against what it made.
#include <dlpackpp/python.hpp>  // first: it includes Python.h

#include "ft_values.hpp"

#include <string>
#include <utility>

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

PyMethodDef methods[] = {
    {"make", &make, METH_VARARGS, "make(n, dtype) -> dlpackpp.Tensor of 0 .. n-1"},
    {"capsule", &capsule, METH_VARARGS, "capsule(n, dtype, versioned) -> a fresh capsule"},
    {"owned", &owned, METH_O, "(dtype, sum) through try_from_dlpack"},
    {"reading", &reading, METH_O, "(dtype, sum) through try_from_dlpack, only_reading"},
    {"borrowed", &borrowed, METH_O, "(dtype, sum) through try_borrow"},
    {"consume", &consume, METH_O, "(dtype, sum) through try_from_capsule"},
    {"reexport", &reexport, METH_O, "to_pyobject(try_from_dlpack(obj))"},
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
