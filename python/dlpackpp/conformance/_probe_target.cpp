// SPDX-License-Identifier: Apache-2.0
// Part of the probe (_probe.cpp): the `dlpackpp` target, the project's own Python layer as a
// framework: dlpackpp.Tensor (to_pyobject) is the producer, try_from_dlpack the consumer.
#include "_probe.hpp"

namespace dlpackpp_probe {

namespace {

// dlpackpp_tensor(owner, data, shape, strides, dtype, read_only=False) -> dlpackpp.Tensor
// over memory `owner` keeps alive (strides in elements), through try_wrap and to_pyobject.
PyObject* dlpackpp_tensor(PyObject*, PyObject* args) {
  PyObject *owner, *shape_obj, *strides_obj;
  unsigned long long data;
  int code, bits, lanes, read_only = 0;
  if (PyArg_ParseTuple(args, "OKOO(iii)|p", &owner, &data, &shape_obj, &strides_obj, &code, &bits,
                       &lanes, &read_only) == 0) {
    return nullptr;
  }
  std::vector<std::int64_t> shape, strides;
  if (!read_int64s(shape_obj, shape) || !read_int64s(strides_obj, strides)) return nullptr;
  dp::Result<py::ImportedTensor> t = dp::try_wrap<py::ImportedTensor>(
      reinterpret_cast<void*>(static_cast<std::uintptr_t>(data)),
      dp::DataType(static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits),
                   static_cast<std::uint16_t>(lanes)),
      shape, strides, dp::Device::cpu(), py::ObjectRef::borrow(owner),
      read_only != 0 ? dp::flag::read_only : 0);
  if (!t) {
    py::set_python_error(t.error());
    return nullptr;
  }
  return py::to_pyobject(std::move(*t));
}

// dlpackpp_import(obj, copy=None, device=None, stream=None) -> dlpackpp.Tensor owning what
// try_from_dlpack imported (the project's consumer), or the exception it maps to.
PyObject* dlpackpp_import(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"obj", "copy", "device", "stream", nullptr};
  PyObject *obj, *copy = Py_None, *device = Py_None, *stream = Py_None;
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOO", const_cast<char**>(names), &obj, &copy,
                                  &device, &stream) == 0) {
    return nullptr;
  }
  py::ImportOptions options;
  if (copy != Py_None) options.copy = PyObject_IsTrue(copy) == 1;
  if (device != Py_None) {
    int type, id;
    if (PyArg_ParseTuple(device, "ii", &type, &id) == 0) return nullptr;
    options.dl_device = dp::Device(static_cast<DLDeviceType>(type), id);
  }
  if (stream != Py_None) {
    options.stream = static_cast<std::intptr_t>(PyLong_AsSsize_t(stream));
    if (PyErr_Occurred()) return nullptr;
  }
  dp::Result<py::ImportedTensor> t = py::try_from_dlpack(obj, options);
  if (!t) {
    py::set_python_error(t.error());
    return nullptr;
  }
  return py::to_pyobject(std::move(*t));
}

}  // namespace

PyMethodDef g_target_methods[] = {
    {"dlpackpp_tensor", &dlpackpp_tensor, METH_VARARGS, "a dlpackpp.Tensor over memory"},
    {"dlpackpp_import",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&dlpackpp_import)),
     METH_VARARGS | METH_KEYWORDS, "try_from_dlpack, as a dlpackpp.Tensor"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace dlpackpp_probe
