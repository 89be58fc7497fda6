// SPDX-License-Identifier: Apache-2.0
// Compile-only CUDA check of <dlpackpp/cuda.hpp> (there may be no GPU): allocate_cuda for each
// memory kind and handle kind, on a stream, feeding a kernel through a checked accessor.
#include <dlpackpp/cuda.hpp>
#include <dlpackpp/dlpackpp.hpp>

#include <cstdint>

#if !DLPACKPP_HAS_CUDA_RUNTIME
#error "under nvcc <dlpackpp/cuda.hpp> must see the CUDA runtime"
#endif

namespace {

__global__ void iota(dlpackpp::TensorAccessor<float, 2> a) {
  const std::int64_t i = blockIdx.x;
  const std::int64_t j = threadIdx.x;
  if (i < a.size(0) && j < a.size(1)) a(i, j) = static_cast<float>(i * a.size(1) + j);
}

}  // namespace

// Host side: compiled, never run.
dlpackpp::ManagedTensor dlpackpp_cuda_allocate(cudaStream_t stream) {
  dlpackpp::ManagedTensor t = dlpackpp::allocate_cuda(dlpackpp::DataType::float32(), {4, 8},
                                                      dlpackpp::Device::cuda(0), stream);
  auto a = t.view().require_device(dlpackpp::Device::cuda(0)).accessor<float, 2>();
  iota<<<4, 8, 0, stream>>>(a);
  return t;
}

dlpackpp::Result<dlpackpp::LegacyManagedTensor> dlpackpp_cuda_allocate_kinds() {
  auto managed = dlpackpp::try_allocate_cuda(dlpackpp::DataType::int32(), {16},
                                             dlpackpp::Device::cuda_managed(0));
  auto pinned = dlpackpp::try_allocate_cuda(dlpackpp::DataType::uint8(), {3, 3},
                                            dlpackpp::Device::cuda_host(), nullptr,
                                            dlpackpp::flag::read_only);
  if (!managed) return managed.error();
  if (!pinned) return pinned.error();
  return dlpackpp::try_allocate_cuda<dlpackpp::LegacyManagedTensor>(
      dlpackpp::DataType::float64(), {0, 5}, dlpackpp::Device::cuda(1));
}
