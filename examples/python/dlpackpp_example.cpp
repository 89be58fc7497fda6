// SPDX-License-Identifier: Apache-2.0
// A CPython extension that takes tensors from any DLPack producer (NumPy, PyTorch, JAX, ...)
// and hands one back, with nothing but Python.h and <dlpackpp/python.hpp>:
//
//   import numpy as np, dlpackpp_example as ex
//   ex.sum(np.ones((3, 4))[:, ::2])     # 6.0, any layout, float32 or float64
//   ex.scale_(a, 2.0)                   # in place; a read-only tensor raises BufferError
//   np.from_dlpack(ex.arange(5))        # a C++-owned buffer, freed when NumPy lets go
//   ex.sum_borrowed(t)                  # borrows where the producer allows it
//
// Every module function returns through the Result-based try_ forms, so no C++ exception
// can reach the interpreter, and set_python_error() turns a refusal into the matching
// Python exception (TypeError for a wrong dtype, BufferError for a read-only tensor ...).
//
// The module runs without the GIL: on a free-threaded CPython (3.13t) it declares so with the
// Py_mod_gil slot, so importing it leaves the GIL off, and its functions may be called from any
// number of threads at once (dlpackpp::python is safe there; the functions keep no state of
// their own). A GIL build ignores the slot.
#include <dlpackpp/python.hpp>  // includes Python.h first, as Python requires

#include <cstdint>
#include <utility>
#include <vector>

namespace {

namespace py = dlpackpp::python;
using dlpackpp::DataType;
using dlpackpp::Errc;
using dlpackpp::Error;
using dlpackpp::Result;
using dlpackpp::TensorView;

// Sums dimension `d` onward of the elements starting at `p`. Recursion over the dimensions
// walks any rank and any strides (negative, zero, transposed) in a few lines; `strides()`
// counts elements, as DLPack's do.
template <class T>
double sum_from(const T* p, const TensorView& view, int d) {
  if (d == view.ndim()) return static_cast<double>(*p);
  double total = 0.0;
  const std::int64_t extent = view.shape()[static_cast<std::size_t>(d)];
  const std::int64_t stride = view.strides()[static_cast<std::size_t>(d)];
  for (std::int64_t i = 0; i < extent; ++i) total += sum_from(p + i * stride, view, d + 1);
  return total;
}

// Multiplies every element in place (the same walk, writing).
template <class T>
void scale_from(T* p, const TensorView& view, int d, double k) {
  if (d == view.ndim()) {
    *p = static_cast<T>(static_cast<double>(*p) * k);
    return;
  }
  const std::int64_t extent = view.shape()[static_cast<std::size_t>(d)];
  const std::int64_t stride = view.strides()[static_cast<std::size_t>(d)];
  for (std::int64_t i = 0; i < extent; ++i) scale_from(p + i * stride, view, d + 1, k);
}

Error unsupported_dtype(const TensorView& view) {
  return Error(Errc::dtype_mismatch,
               "dlpackpp_example: expected float32 or float64, got " + view.dtype().to_string());
}

// The sum of any float32/float64 tensor on the CPU. try_data<const T>() checks the dtype and
// the alignment; const T asks for no write access, so read-only tensors are fine.
Result<double> sum_view(const TensorView& view) {
  if (view.device() != dlpackpp::Device::cpu()) {
    return Error(Errc::device_mismatch,
                 "dlpackpp_example: expected a CPU tensor, got " + view.device().to_string());
  }
  if (view.numel() == 0) return 0.0;  // data may be NULL then
  if (view.dtype() == DataType::float32()) {
    Result<const float*> p = view.try_data<const float>();
    if (!p) return p.error();
    return sum_from(*p, view, 0);
  }
  if (view.dtype() == DataType::float64()) {
    Result<const double*> p = view.try_data<const double>();
    if (!p) return p.error();
    return sum_from(*p, view, 0);
  }
  return unsupported_dtype(view);
}

// Every failure leaves the module the same way: the Python exception set, NULL returned.
PyObject* fail(const Error& error) {
  py::set_python_error(error);
  return nullptr;
}

// sum(obj) -> float: imports an owning handle (the producer's deleter runs when it dies).
PyObject* sum(PyObject*, PyObject* obj) {
  Result<py::ImportedTensor> tensor = py::try_from_dlpack(obj);
  if (!tensor) return fail(tensor.error());
  Result<double> total = sum_view(tensor->view());
  if (!total) return fail(total.error());
  return PyFloat_FromDouble(*total);
}

// sum_borrowed(obj) -> float: the same through try_borrow, which skips ownership (and any
// allocation) where the producer's type offers the exchange API's borrowing entry.
PyObject* sum_borrowed(PyObject*, PyObject* obj) {
  Result<double> total = py::try_borrow(obj, sum_view);
  if (!total) return fail(total.error());
  return PyFloat_FromDouble(*total);
}

// scale_(obj, k) -> None: multiplies obj's elements by k in place. try_data<T>() for a
// mutable T refuses a READ_ONLY tensor (Errc::read_only, raised as BufferError).
PyObject* scale_(PyObject*, PyObject* args) {
  PyObject* obj = nullptr;
  double k = 1.0;
  if (PyArg_ParseTuple(args, "Od:scale_", &obj, &k) == 0) return nullptr;
  Result<py::ImportedTensor> tensor = py::try_from_dlpack(obj);
  if (!tensor) return fail(tensor.error());
  const TensorView view = tensor->view();
  if (view.device() != dlpackpp::Device::cpu()) {
    return fail(Error(Errc::device_mismatch, "dlpackpp_example: expected a CPU tensor"));
  }
  if (view.dtype() == DataType::float32()) {
    Result<float*> p = view.try_data<float>();
    if (!p) return fail(p.error());
    if (view.numel() > 0) scale_from(*p, view, 0, k);
  } else if (view.dtype() == DataType::float64()) {
    Result<double*> p = view.try_data<double>();
    if (!p) return fail(p.error());
    if (view.numel() > 0) scale_from(*p, view, 0, k);
  } else {
    return fail(unsupported_dtype(view));
  }
  Py_RETURN_NONE;
}

// arange(n, read_only=False) -> dlpackpp.Tensor holding 0.0 .. n-1 as float64. The vector is
// the export's owner: it lives until the last consumer calls the deleter. read_only=True
// flags the export READ_ONLY (what scale_ must refuse).
PyObject* arange(PyObject*, PyObject* args, PyObject* kwargs) {
  Py_ssize_t n = 0;
  int read_only = 0;
  static const char* keywords[] = {"n", "read_only", nullptr};
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "n|$p:arange", const_cast<char**>(keywords), &n,
                                  &read_only) == 0) {
    return nullptr;
  }
  if (n < 0) return fail(Error(Errc::invalid_argument, "dlpackpp_example: arange(n) needs n >= 0"));
  std::vector<double> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  double* data = values.data();  // stays valid: moving a vector keeps its buffer
  const std::int64_t shape[] = {static_cast<std::int64_t>(n)};
  Result<py::ImportedTensor> tensor = dlpackpp::try_wrap<py::ImportedTensor>(
      data, DataType::float64(), shape, {}, dlpackpp::Device::cpu(), std::move(values),
      read_only != 0 ? dlpackpp::flag::read_only : 0);
  if (!tensor) return fail(tensor.error());
  return py::to_pyobject(std::move(*tensor));  // NULL with the Python exception set on failure
}

// The casts through void(*)(void) say "this is a PyCFunction" without a cast-function-type
// warning, as CPython's own modules do for METH_VARARGS | METH_KEYWORDS.
PyMethodDef methods[] = {
    {"sum", &sum, METH_O,
     "sum(tensor) -> float: the sum of a float32/float64 tensor of any layout"},
    {"sum_borrowed", &sum_borrowed, METH_O,
     "sum_borrowed(tensor) -> float: as sum, through try_borrow"},
    {"scale_", &scale_, METH_VARARGS,
     "scale_(tensor, k): multiply in place; read-only tensors raise"},
    {"arange", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&arange)),
     METH_VARARGS | METH_KEYWORDS,
     "arange(n, *, read_only=False) -> dlpackpp.Tensor of 0.0 .. n-1 (float64), owned by C++"},
    {nullptr, nullptr, 0, nullptr}};

// Multi-phase initialization, whose slots say what the module supports: here that it does not
// need the GIL (Python 3.13+; older versions have no such slot and always have the GIL).
PyModuleDef_Slot slots[] = {
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT,
                      "dlpackpp_example",
                      "dlpackpp's Python extension example",
                      0,
                      methods,
                      slots,
                      nullptr,
                      nullptr,
                      nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_dlpackpp_example(void) { return PyModuleDef_Init(&module); }
