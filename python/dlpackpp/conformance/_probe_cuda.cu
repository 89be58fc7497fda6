// SPDX-License-Identifier: Apache-2.0
// The `dlpackpp` target's GPU hooks (P9's ordering, X4): dlpackpp.Tensor as a CUDA producer
// whose work is still queued on a stream when Python gets it, through the project's own
// <dlpackpp/python.hpp> (python/cuda.hpp). A module of its own, compiled with nvcc on first
// use (see _build.py, cuda_probe()), so that the kit's main probe never needs CUDA.
//   cuda_tensor(a, dtype)   a dlpackpp.Tensor on cuda:0 holding numpy array a's bytes, copied
//                           on the kit's producer stream and handed over with that stream
//   slow_update(x, ordered) x + 1 (float32) queued behind a long kernel on a stream of its
//                           own, handed over with that stream (ordered) or as if the producer
//                           had finished (not ordered: a producer that ignores `stream`)
//   current_stream(t, id), new_stream(), set_current_stream(t, id, handle)
//                           dlpackpp's current work stream (what its exchange table reports)
#include <cuda_runtime_api.h>  // before dlpackpp: turns on python/cuda.hpp

#include <dlpackpp/cuda.hpp>
#include <dlpackpp/python.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace dp = dlpackpp;
namespace py = dlpackpp::python;

// A failed CUDA call as a Python exception (the project's mapping); NULL to return.
PyObject* cuda_failed(const char* call, cudaError_t status) {
  try {
    py::set_python_error(dp::detail::cuda_error(call, dp::Device::cuda(0), status));
  } catch (...) {  // out of memory is std::bad_alloc there
    PyErr_NoMemory();
  }
  return nullptr;
}

// Streams of the kit's own, never destroyed: consumers may wait on them (and stream-ordered
// memory is freed on them) long after a call returned. NULL with an exception set.
cudaStream_t kit_stream(cudaStream_t& slot) {
  if (slot == nullptr) {
    const cudaError_t status = cudaStreamCreateWithFlags(&slot, cudaStreamNonBlocking);
    if (status != cudaSuccess) {
      cuda_failed("cudaStreamCreateWithFlags", status);
      slot = nullptr;
    }
  }
  return slot;
}
cudaStream_t g_producer = nullptr;  // cuda_tensor's copies
cudaStream_t g_slow = nullptr;      // slow_update's kernels

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

__global__ void add_one(dlpackpp::TensorAccessor<float, 1> x) {
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < x.size(0);
       i += std::int64_t{gridDim.x} * blockDim.x) {
    x(i) += 1.0f;
  }
}

// cuda_tensor(a, (code, bits, lanes)) -> dlpackpp.Tensor on cuda:0 (a compact numpy array).
PyObject* cuda_tensor(PyObject*, PyObject* args) {
  PyObject* array = nullptr;
  int code = 0, bits = 0, lanes = 0;
  if (PyArg_ParseTuple(args, "O(iii)", &array, &code, &bits, &lanes) == 0) return nullptr;
  Py_buffer buffer;
  if (PyObject_GetBuffer(array, &buffer, PyBUF_C_CONTIGUOUS | PyBUF_ND) != 0) return nullptr;
  std::vector<std::int64_t> shape(buffer.shape, buffer.shape + buffer.ndim);
  const cudaStream_t stream = kit_stream(g_producer);
  dp::Result<py::ImportedTensor> t =
      stream == nullptr
          ? dp::Result<py::ImportedTensor>(dp::Error(dp::Errc::unsupported_device, "no stream"))
          : dp::try_allocate_cuda<py::ImportedTensor>(
                dp::DataType(static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits),
                             static_cast<std::uint16_t>(lanes)),
                shape, dp::Device::cuda(0), stream);
  if (stream == nullptr) {
    PyBuffer_Release(&buffer);
    return nullptr;  // kit_stream raised
  }
  if (!t) {
    PyBuffer_Release(&buffer);
    py::set_python_error(t.error());
    return nullptr;
  }
  // From pageable memory the copy returns once the bytes are staged: the buffer may go.
  const cudaError_t status = buffer.len == 0 ? cudaSuccess
                                             : cudaMemcpyAsync(t->get()->dl_tensor.data, buffer.buf,
                                                               static_cast<std::size_t>(buffer.len),
                                                               cudaMemcpyHostToDevice, stream);
  PyBuffer_Release(&buffer);
  if (status != cudaSuccess) return cuda_failed("cudaMemcpyAsync", status);
  return py::to_pyobject(std::move(*t), stream);
}

// slow_update(x, ordered) -> a dlpackpp.Tensor sharing x's float32 memory, x + 1 queued.
PyObject* slow_update(PyObject*, PyObject* args) {
  PyObject* x = nullptr;
  int ordered = 1;
  long long cycles = 200000000;  // about 0.1 s of GPU clock
  if (PyArg_ParseTuple(args, "Op|L", &x, &ordered, &cycles) == 0) return nullptr;
  const cudaStream_t stream = kit_stream(g_slow);
  if (stream == nullptr) return nullptr;
  // The import asks x's producer to order its pending work before this stream.
  py::ImportOptions options;
  options.stream = reinterpret_cast<std::intptr_t>(stream);
  options.writable = true;
  dp::Result<py::ImportedTensor> t = py::try_from_dlpack(x, options);
  if (!t) {
    py::set_python_error(t.error());
    return nullptr;
  }
  if (t->device() != dp::Device::cuda(0)) {
    PyErr_SetString(PyExc_TypeError, "slow_update takes a tensor on cuda:0");
    return nullptr;
  }
  dp::Result<dp::TensorAccessor<float, 1>> a = t->view().try_accessor<float, 1>();
  if (!a) {
    py::set_python_error(a.error());
    return nullptr;
  }
  const std::int64_t blocks = a->size(0) / 256 + 1;
  spin<<<1, 1, 0, stream>>>(cycles);
  add_one<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(*a);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) return cuda_failed("slow_update's kernels", status);
  // Not ordered: handed over as if the work were done, so __dlpack__ ignores `stream`.
  return ordered != 0 ? py::to_pyobject(std::move(*t), stream) : py::to_pyobject(std::move(*t));
}

dp::Device device_of(int type, int id) { return dp::Device(static_cast<DLDeviceType>(type), id); }

// current_stream(device_type, device_id) -> dlpackpp's current work stream there (an int).
PyObject* current_stream(PyObject*, PyObject* args) {
  int type = 0, id = 0;
  if (PyArg_ParseTuple(args, "ii", &type, &id) == 0) return nullptr;
  dp::Result<void*> s = py::detail::work_stream_of(device_of(type, id));
  if (!s) return nullptr;  // its Python exception is pending
  return PyLong_FromVoidPtr(*s);
}

// new_stream() -> a new non-blocking stream's handle (kept for the process).
PyObject* new_stream(PyObject*, PyObject*) {
  cudaStream_t s = nullptr;
  const cudaError_t status = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (status != cudaSuccess) return cuda_failed("cudaStreamCreateWithFlags", status);
  return PyLong_FromVoidPtr(static_cast<void*>(s));
}

// set_current_stream(device_type, device_id, handle): try_set_current_work_stream.
PyObject* set_current_stream(PyObject*, PyObject* args) {
  int type = 0, id = 0;
  PyObject* handle = nullptr;
  if (PyArg_ParseTuple(args, "iiO", &type, &id, &handle) == 0) return nullptr;
  void* s = PyLong_AsVoidPtr(handle);
  if (s == nullptr && PyErr_Occurred() != nullptr) return nullptr;
  dp::Result<void> done =
      py::try_set_current_work_stream(device_of(type, id), static_cast<cudaStream_t>(s));
  if (!done) {
    py::set_python_error(done.error());
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyMethodDef g_methods[] = {
    {"cuda_tensor", &cuda_tensor, METH_VARARGS, "a dlpackpp.Tensor on cuda:0, copy pending"},
    {"slow_update", &slow_update, METH_VARARGS, "x + 1 behind a long kernel"},
    {"current_stream", &current_stream, METH_VARARGS, "dlpackpp's current work stream"},
    {"new_stream", &new_stream, METH_NOARGS, "a new non-blocking stream"},
    {"set_current_stream", &set_current_stream, METH_VARARGS, "set the current work stream"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT,
                        "_dlpackpp_conformance_cuda",
                        "The dlpackpp conformance kit's GPU hooks for the dlpackpp target",
                        -1,
                        g_methods,
                        nullptr,
                        nullptr,
                        nullptr,
                        nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__dlpackpp_conformance_cuda() { return PyModule_Create(&g_module); }
