// SPDX-License-Identifier: Apache-2.0
// A pybind11 CUDA extension that never synchronizes (docs/cuda.md, "Handing pending work to
// Python"):
//   iota(n, spin=0)       a float32 CUDA tensor 0..n-1 written by a kernel on the extension's
//                         own stream, handed to Python while the kernel may still run:
//                         torch.from_dlpack(iota(n)) makes PyTorch's stream wait for it
//                         (an event), the host never does. `spin` delays the kernel (GPU
//                         clock cycles), so that a caller can see the order is real.
//   scale_(x, k)          x *= k in place for any float32 CUDA tensor, on the producer's
//                         current stream (PyTorch's torch.cuda.current_stream(), from its
//                         exchange table): an OnStream<TensorView> parameter, whose caster asks
//                         the producer to order its work before that stream and says which.
//   scale_on_(x, k, stream)
//                         the same on `stream` (a cudaStream_t as an int), a stream the caller
//                         chose at run time: the function takes the object and imports it
//                         with ImportOptions::stream (__dlpack__(stream=...)).
// Built by CTest with nvcc where it is found (cuda.example_streams); run on a GPU by
// run_example.py. Nothing here calls cudaDeviceSynchronize or cudaStreamSynchronize.
#include <pybind11/pybind11.h>  // first: it includes Python.h

#include <cuda_runtime_api.h>  // before dlpackpp: turns on its CUDA rooms

#include <dlpackpp/cuda.hpp>
#include <dlpackpp/pybind11.hpp>  // the casters, OnStream among them
#include <dlpackpp/python.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace pb = pybind11;
namespace py = dlpackpp::python;

namespace {

__global__ void iota_kernel(dlpackpp::TensorAccessor<float, 1> x, long long spin) {
  if (spin > 0 && blockIdx.x == 0 && threadIdx.x == 0) {  // one thread delays the whole grid
    const long long start = clock64();
    while (clock64() - start < spin) {
    }
  }
  __syncthreads();
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < x.size(0);
       i += std::int64_t{gridDim.x} * blockDim.x) {
    x(i) = static_cast<float>(i);
  }
}

__global__ void scale_kernel(dlpackpp::TensorAccessor<float, 1> x, float k) {
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < x.size(0);
       i += std::int64_t{gridDim.x} * blockDim.x) {
    x(i) *= k;
  }
}

// A failed CUDA call as a Python RuntimeError.
void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(status));
  }
}

// The extension's own stream on `device`, made once and never destroyed: tensors made on it
// free their memory on it (allocate_cuda), and consumers may wait on it, long after a call.
// (One device's is enough here; a multi-GPU extension keeps one per device.)
cudaStream_t own_stream(int device) {
  static const cudaStream_t stream = [device] {
    cudaStream_t s = nullptr;
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    return s;
  }();
  return stream;
}

// A dlpackpp::Error (or a failed to_pyobject) as the Python exception it maps to.
pb::object steal_or_throw(PyObject* obj) {
  if (obj == nullptr) throw pb::error_already_set();
  return pb::reinterpret_steal<pb::object>(obj);
}

unsigned blocks_for(std::int64_t n) {
  const std::int64_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 4096 ? 4096 : blocks));
}

pb::object iota(std::int64_t n, long long spin) {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const cudaStream_t stream = own_stream(device);
  // Zeroed and freed in `stream`'s order; the kernel is queued behind the zeroing.
  dlpackpp::ManagedTensor t = dlpackpp::allocate_cuda(dlpackpp::DataType::float32(), {n},
                                                      dlpackpp::Device::cuda(device), stream);
  iota_kernel<<<blocks_for(n), 256, 0, stream>>>(t.view().accessor<float, 1>(), spin);
  check(cudaGetLastError(), "iota_kernel");
  // No synchronization: the object carries an event recorded on `stream` now, and each
  // consumer's __dlpack__(stream=s) makes s wait for it. When the tensor goes, `stream` waits
  // for those s before the memory is freed in its order.
  return steal_or_throw(py::to_pyobject(std::move(t), stream));
}

// Launches scale_kernel on `stream`, with `device` current for the launch and the caller's
// device current again after it.
void launch_scale(const dlpackpp::TensorAccessor<float, 1>& a, float k, dlpackpp::Device device,
                  cudaStream_t stream) {
  int previous = 0;
  check(cudaGetDevice(&previous), "cudaGetDevice");
  check(cudaSetDevice(device.id()), "cudaSetDevice");
  scale_kernel<<<blocks_for(a.size(0)), 256, 0, stream>>>(a, k);
  const cudaError_t launched = cudaGetLastError();
  check(cudaSetDevice(previous), "cudaSetDevice");
  check(launched, "scale_kernel");
}

// The caster did the consumer's part: the producer ordered its pending work before
// x.stream() (its current stream; for PyTorch, torch.cuda.current_stream()). The accessor
// checks float32, 1-d and writable (a dlpackpp::Error reaches Python as TypeError/BufferError).
void scale_(dlpackpp::bindings::OnStream<dlpackpp::TensorView> x, float k) {
  const dlpackpp::Device device = x->device();
  if (device.type_code() != dlpackpp::device_code::cuda) {
    throw std::invalid_argument("scale_ takes a CUDA tensor, not one on " + device.to_string());
  }
  launch_scale(x->accessor<float, 1>(), k, device, static_cast<cudaStream_t>(x.stream()));
  // Nothing waits: the producer's later work on its current stream comes after the kernel.
}

// A stream chosen at run time cannot be a caster's: the object is imported here, with
// ImportOptions::stream, and the producer orders its pending work before `stream`.
void scale_on_(const pb::object& x, float k, std::intptr_t stream) {
  py::ImportOptions options;
  options.writable = true;
  options.stream = stream;
  dlpackpp::ManagedTensor t = py::from_dlpack(x.ptr(), options);
  const dlpackpp::Device device = t.device();
  if (device.type_code() != dlpackpp::device_code::cuda) {
    throw std::invalid_argument("scale_on_ takes a CUDA tensor, not one on " + device.to_string());
  }
  launch_scale(t.view().accessor<float, 1>(), k, device, reinterpret_cast<cudaStream_t>(stream));
  // `t` is released now, while the kernel may still run: the producer's memory stays valid
  // because the caller holds `x`, and the caller orders the producer's later work after
  // `stream` (e.g. torch.cuda.current_stream().wait_stream(s)).
}

}  // namespace

PYBIND11_MODULE(dlpackpp_cuda_streams_example, m) {
  m.doc() = "dlpackpp: CUDA tensors to and from Python without synchronizing";
  m.def("iota", &iota, pb::arg("n"), pb::arg("spin") = 0,
        "float32 0..n-1 on the current CUDA device, still being written on the extension's "
        "stream: any DLPack consumer's stream waits for it");
  m.def("scale_", &scale_, pb::arg("x"), pb::arg("k"),
        "x *= k in place (float32, 1-d, CUDA) on the producer's current stream");
  m.def("scale_on_", &scale_on_, pb::arg("x"), pb::arg("k"), pb::arg("stream"),
        "x *= k in place (float32, 1-d, CUDA) on `stream`, after the producer ordered its "
        "pending work before it");
}
