// SPDX-License-Identifier: Apache-2.0
// <dlpackpp/cuda.hpp> from a host compiler linked with the real CUDA runtime: the refusals
// run anywhere; without a GPU the runtime's own error comes back as Errc::unsupported_device;
// with one, every memory kind is allocated, zero-filled, used and freed.
#include <cuda_runtime_api.h>

#include <gtest/gtest.h>
#include <dlpackpp/cuda.hpp>

#include "support/expect_error.hpp"

#include <cstdint>
#include <string>
#include <vector>

#if !DLPACKPP_HAS_CUDA_RUNTIME
#error "<cuda_runtime_api.h> was included first, so allocate_cuda must be available"
#endif

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp_test::expect_error;

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

TEST(CudaAllocate, RefusesOtherDevices) {
  expect_error([] { dlpackpp::allocate_cuda(DataType::float32(), {2}, Device::cpu()); },
               Errc::unsupported_device, "not cpu");
  expect_error([] { dlpackpp::allocate_cuda(DataType::float32(), {2}, Device::rocm(0)); },
               Errc::unsupported_device, "rocm:0");
  expect_error([] { dlpackpp::allocate_cuda(DataType::float32(), {-2}); }, Errc::negative_shape);
}

TEST(CudaAllocate, WithoutAGpuTheRuntimeSaysWhy) {
  if (have_gpu())
    GTEST_SKIP() << "DLPACKPP_TEST_SKIPPED: a GPU is present; this checks the no-GPU path";
  const auto r = dlpackpp::try_allocate_cuda(DataType::float32(), {2, 3}, Device::cuda(0));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::unsupported_device);
  EXPECT_NE(std::string(r.error().what()).find("on cuda:0: cuda"), std::string::npos)
      << r.error().what();
  // An empty tensor needs no memory, so it needs no GPU either.
  const auto empty = dlpackpp::try_allocate_cuda(DataType::float32(), {0, 3}, Device::cuda(0));
  ASSERT_TRUE(empty) << empty.error().what();
  EXPECT_EQ(empty->numel(), 0);
}

TEST(CudaAllocate, EveryMemoryKindOnTheGpu) {
  if (!have_gpu()) GTEST_SKIP() << "DLPACKPP_TEST_SKIPPED: no CUDA device";
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for (Device device : {Device::cuda(0), Device::cuda_managed(0), Device::cuda_host()}) {
    SCOPED_TRACE(device.to_string());
    dlpackpp::ManagedTensor t = dlpackpp::allocate_cuda(DataType::int32(), {3, 5}, device, stream,
                                                        dlpackpp::flag::is_copied);
    EXPECT_EQ(t.device(), device);
    EXPECT_TRUE(t.is_copied());
    EXPECT_EQ(t.view().strides(), (std::vector<std::int64_t>{5, 1}));
    std::vector<std::int32_t> host(15, -1);
    ASSERT_EQ(cudaMemcpyAsync(host.data(), t.const_data(), 15 * sizeof(std::int32_t),
                              cudaMemcpyDefault, stream),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(host, std::vector<std::int32_t>(15, 0)) << "zero-filled";
    cudaPointerAttributes attributes{};
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, t.const_data()), cudaSuccess);
    t.reset();  // the deleter frees on the stream
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
