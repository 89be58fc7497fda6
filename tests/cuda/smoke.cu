// SPDX-License-Identifier: Apache-2.0
// Compile-only CUDA check (there may be no GPU): dlpackpp's value types and accessor must be
// usable in device code under nvcc. DataType/Device are constexpr host code, callable from
// kernels with --expt-relaxed-constexpr; TensorAccessor is explicitly __host__ __device__.
#include <dlpackpp/dlpackpp.hpp>

#include <cstdint>
#include <type_traits>

namespace {

__global__ void describe(int* out) {
  constexpr dlpackpp::DataType dtype = dlpackpp::DataType::float32();
  const dlpackpp::Device device = dlpackpp::Device::cuda(static_cast<std::int32_t>(threadIdx.x));
  const dlpackpp::DataType vec(dlpackpp::dtype_code::float_, 16, 2);
  out[threadIdx.x] = dtype.bits() * dtype.lanes() + device.id() +
                     (device.is_host_accessible() ? 1000 : 0) +
                     (device == dlpackpp::Device::cuda(0) ? 100 : 0) + (vec != dtype ? 10 : 0);
}

#if __has_include(<dlpackpp/tensor_accessor.hpp>)
static_assert(std::is_trivially_copyable<dlpackpp::TensorAccessor<float, 2>>::value,
              "accessors are passed to kernels by value");

__global__ void scale(dlpackpp::TensorAccessor<float, 2> a, float factor) {
  const std::int64_t i = blockIdx.x;
  const std::int64_t j = threadIdx.x;
  if (i < a.size(0) && j < a.size(1)) {
    a(i, j) *= factor;
    a[i][j] += 1.0f;
  }
}
#endif

}  // namespace

// Host side: launches that are compiled, never run.
void dlpackpp_cuda_smoke(int* out) { describe<<<1, 4>>>(out); }

#if __has_include(<dlpackpp/tensor_view.hpp>)
void dlpackpp_cuda_smoke_scale(const dlpackpp::TensorView& view) {
  const auto a = view.require_device(dlpackpp::Device::cuda(0)).accessor<float, 2>();
  scale<<<static_cast<unsigned>(a.size(0)), static_cast<unsigned>(a.size(1))>>>(a, 2.0f);
}
#endif
