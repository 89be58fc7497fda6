// SPDX-License-Identifier: Apache-2.0
// Compile-only (nvcc): <dlpackpp/python.hpp> in a translation unit that sees the CUDA runtime
// defines python/cuda.hpp's to_pyobject(tensor, stream) and try_set_current_work_stream;
// a kernel fills an allocate_cuda tensor that is handed to Python without synchronizing.
// tests/cuda_streams runs the same room from a host compiler against the real runtime.
#include <dlpackpp/cuda.hpp>
#include <dlpackpp/python.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

static_assert(DLPACKPP_HAS_CUDA_RUNTIME == 1, "nvcc sees the CUDA runtime");
static_assert(std::is_same<decltype(dlpackpp::python::to_pyobject(
                               std::declval<dlpackpp::python::ImportedTensor&&>(),
                               std::declval<cudaStream_t>())),
                           PyObject*>::value,
              "to_pyobject(tensor, producer_stream) returns a new reference");
static_assert(noexcept(dlpackpp::python::to_pyobject(
                  std::declval<dlpackpp::python::ImportedTensor&&>(), cudaStream_t{})),
              "to_pyobject never throws");

__global__ void fill(dlpackpp::TensorAccessor<float, 1> x, float value) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < x.size(0)) x(i) = value;
}

// What an extension's function does: launch, hand over, return; the host never waits.
PyObject* make_filled(std::int64_t n, float value, cudaStream_t stream) {
  dlpackpp::Result<dlpackpp::ManagedTensor> t = dlpackpp::try_allocate_cuda(
      dlpackpp::DataType::float32(), {n}, dlpackpp::Device::cuda(0), stream);
  if (!t) {
    dlpackpp::python::set_python_error(t.error());
    return nullptr;
  }
  auto a = t->view().try_accessor<float, 1>();
  if (!a) {
    dlpackpp::python::set_python_error(a.error());
    return nullptr;
  }
  fill<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(*a, value);
  return dlpackpp::python::to_pyobject(std::move(*t), stream);
}

// The stream an extension launches on for a tensor it imported through a table.
bool use_stream(cudaStream_t stream) {
  return static_cast<bool>(
      dlpackpp::python::try_set_current_work_stream(dlpackpp::Device::cuda(0), stream));
}
