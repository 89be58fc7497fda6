// SPDX-License-Identifier: Apache-2.0
// Example: scale a strided float32 CUDA matrix in a kernel that takes a TensorAccessor by value.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dlpackpp/dlpackpp.hpp>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// The accessor arrives as a kernel parameter: it carries the data pointer, sizes and strides,
// so the kernel needs neither the view nor the DLTensor. A grid-stride loop in both axes lets
// any launch shape cover any matrix.
__global__ void scale(dlpackpp::TensorAccessor<float, 2> x, float factor) {
  const std::int64_t rows = x.size(0);
  const std::int64_t cols = x.size(1);
  const std::int64_t row_step = std::int64_t{gridDim.y} * blockDim.y;
  const std::int64_t col_step = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.y} * blockDim.y + threadIdx.y; i < rows;
       i += row_step) {
    for (std::int64_t j = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; j < cols;
         j += col_step) {
      x(i, j) *= factor;
    }
  }
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

// Frees GPU memory on every path out of main.
struct CudaFree {
  void operator()(float* p) const noexcept { cudaFree(p); }
};

unsigned int blocks_for(std::int64_t extent, unsigned int threads, unsigned int cap) {
  const std::int64_t wanted = (extent + threads - 1) / threads;
  return static_cast<unsigned int>(wanted < 1 ? 1 : (wanted > cap ? cap : wanted));
}

}  // namespace

/// Multiplies every element of a 2-D float32 CUDA tensor by `factor`, in place, on `stream`.
/// Throws dlpackpp::Error when the tensor is malformed, not float32, not 2-D, not on a CUDA
/// device or read-only.
void scale_on_gpu(const DLTensor& tensor, float factor, cudaStream_t stream = nullptr) {
  const dlpackpp::TensorView view(tensor);
  view.require_dtype<float>().require_ndim(2).require_device(
      dlpackpp::Device::cuda(view.device().id()));  // any CUDA ordinal, but only CUDA memory
  const dlpackpp::TensorAccessor<float, 2> x = view.accessor<float, 2>();
  if (view.numel() == 0) return;

  check(cudaSetDevice(view.device().id()), "cudaSetDevice");
  const dim3 block(32, 8);
  // 65535 is the grid's y limit; the loops in the kernel cover whatever the grid does not.
  const dim3 grid(blocks_for(x.size(1), block.x, 65535), blocks_for(x.size(0), block.y, 65535));
  scale<<<grid, block, 0, stream>>>(x, factor);
  check(cudaGetLastError(), "launching scale");
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("cuda_scale: no CUDA GPU here; nothing to do");
    return 0;
  }

  try {
    // A 3x4 matrix stored column-major, to show that strides are honoured.
    std::vector<float> host = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    float* device_data = nullptr;
    check(cudaMalloc(&device_data, host.size() * sizeof(float)), "cudaMalloc");
    const std::unique_ptr<float, CudaFree> owner(device_data);
    check(cudaMemcpy(device_data, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
          "cudaMemcpy to the GPU");

    std::int64_t shape[2] = {3, 4};
    std::int64_t strides[2] = {1, 3};
    DLTensor tensor{};
    tensor.data = device_data;
    tensor.device = dlpackpp::Device::cuda(0);
    tensor.ndim = 2;
    tensor.dtype = dlpackpp::DataType::float32();
    tensor.shape = shape;
    tensor.strides = strides;

    scale_on_gpu(tensor, 2.0f);
    check(cudaDeviceSynchronize(), "running scale");
    std::vector<float> result(host.size());
    check(cudaMemcpy(result.data(), device_data, result.size() * sizeof(float),
                     cudaMemcpyDeviceToHost),
          "cudaMemcpy from the GPU");

    for (std::size_t k = 0; k < host.size(); ++k) {
      if (result[k] != 2.0f * host[k]) {
        std::fprintf(stderr, "cuda_scale: element %zu is %g, expected %g\n", k,
                     static_cast<double>(result[k]), static_cast<double>(2.0f * host[k]));
        return EXIT_FAILURE;
      }
    }
    std::puts("cuda_scale: scaled a 3x4 column-major matrix by 2 on the GPU");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_scale: %s\n", e.what());
    return EXIT_FAILURE;
  }
}
