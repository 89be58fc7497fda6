// SPDX-License-Identifier: Apache-2.0
// Accessor kernels on a real GPU: tensors from allocate_cuda, consumed through
// adopt_with_view and adopt_as, written by kernels through TensorAccessor (compact, transposed
// and sliced layouts), read back and compared on the host. CTest only compiles it (CI has no
// GPU); run the program on a machine with one: it prints what it checked and exits non-zero
// on the first wrong element or CUDA error.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dlpackpp/cuda.hpp>
#include <dlpackpp/dlpackpp.hpp>
#include <exception>
#include <vector>

namespace {

// Element (i, j) becomes i * 1000 + j, wherever the accessor's strides put it.
__global__ void fill_coordinates(dlpackpp::TensorAccessor<float, 2> x) {
  const std::int64_t i = std::int64_t{blockIdx.y} * blockDim.y + threadIdx.y;
  const std::int64_t j = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < x.size(0) && j < x.size(1)) x(i, j) = static_cast<float>(i * 1000 + j);
}

// Scales every element through row slices (x[i][j]), the other indexing path.
__global__ void scale_rows(dlpackpp::TensorAccessor<float, 2> x, float factor) {
  const std::int64_t i = std::int64_t{blockIdx.y} * blockDim.y + threadIdx.y;
  const std::int64_t j = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < x.size(0) && j < x.size(1)) x[i][j] *= factor;
}

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "accessor_kernels: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(EXIT_FAILURE);
  }
}

void launch_fill(const dlpackpp::TensorAccessor<float, 2>& x) {
  const dim3 block(16, 16);
  const dim3 grid(static_cast<unsigned>((x.size(1) + 15) / 16),
                  static_cast<unsigned>((x.size(0) + 15) / 16));
  fill_coordinates<<<grid, block>>>(x);
  check_cuda(cudaGetLastError(), "fill_coordinates launch");
  check_cuda(cudaDeviceSynchronize(), "fill_coordinates");
}

// Copies `count` floats of device memory back and checks element k against expected(k).
template <class Expected>
bool compare(const void* device_data, std::size_t count, Expected expected, const char* what) {
  std::vector<float> host(count);
  check_cuda(cudaMemcpy(host.data(), device_data, count * sizeof(float), cudaMemcpyDeviceToHost),
             "cudaMemcpy");
  for (std::size_t k = 0; k < count; ++k) {
    if (host[k] != expected(k)) {
      std::fprintf(stderr, "accessor_kernels: %s: element %zu is %g, expected %g\n", what, k,
                   static_cast<double>(host[k]), static_cast<double>(expected(k)));
      return false;
    }
  }
  std::printf("accessor_kernels: %s: %zu elements ok\n", what, count);
  return true;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("DLPACKPP_TEST_SKIPPED: no CUDA device\n");
    return 0;
  }
  try {
    constexpr std::int64_t rows = 37, cols = 53;  // not multiples of the block
    bool ok = true;

    // Device memory, adopted and viewed in one pass; a compact row-major layout.
    auto [t, v] = dlpackpp::ManagedTensor::adopt_with_view(
        dlpackpp::allocate_cuda(dlpackpp::DataType::float32(), {rows, cols}).release());
    v.require_dtype<float>().require_shape({rows, cols}).require_device(dlpackpp::Device::cuda(0));
    launch_fill(v.accessor<float, 2>());
    ok &= compare(
        v.data(), static_cast<std::size_t>(rows * cols),
        [](std::size_t k) { return static_cast<float>((k / cols) * 1000 + k % cols); }, "compact");

    // The same memory seen transposed (cols x rows, strides {1, cols}): the kernel's (i, j)
    // lands at j * cols + i.
    const std::int64_t transposed_shape[] = {cols, rows};
    const std::int64_t transposed_strides[] = {1, cols};
    const dlpackpp::TensorView transposed(v.data(), dlpackpp::DataType::float32(),
                                          {transposed_shape, 2}, {transposed_strides, 2},
                                          dlpackpp::Device::cuda(0));
    launch_fill(transposed.accessor<float, 2>());
    ok &= compare(
        v.data(), static_cast<std::size_t>(rows * cols),
        [](std::size_t k) { return static_cast<float>((k % cols) * 1000 + k / cols); },
        "transposed");

    // Every other column of the first 10 rows (shape {10, 27}, strides {cols, 2}): only those
    // elements change.
    check_cuda(cudaMemset(v.data(), 0, static_cast<std::size_t>(rows * cols) * sizeof(float)),
               "cudaMemset");
    const std::int64_t slice_shape[] = {10, (cols + 1) / 2};
    const std::int64_t slice_strides[] = {cols, 2};
    const dlpackpp::TensorView slice(v.data(), dlpackpp::DataType::float32(), {slice_shape, 2},
                                     {slice_strides, 2}, dlpackpp::Device::cuda(0));
    launch_fill(slice.accessor<float, 2>());
    ok &= compare(
        v.data(), static_cast<std::size_t>(rows * cols),
        [](std::size_t k) {
          const std::size_t i = k / cols, j = k % cols;
          return i < 10 && j % 2 == 0 ? static_cast<float>(i * 1000 + j / 2) : 0.0f;
        },
        "sliced");

    // Managed memory through the typed one-pass consume: filled, scaled by row slices, then
    // read on the host directly.
    auto [m, x] = dlpackpp::ManagedTensor::adopt_as<float, 2>(
        dlpackpp::allocate_cuda(dlpackpp::DataType::float32(), {rows, cols},
                                dlpackpp::Device::cuda_managed(0))
            .release());
    launch_fill(x);
    const dim3 block(16, 16);
    const dim3 grid((cols + 15) / 16, (rows + 15) / 16);
    scale_rows<<<grid, block>>>(x, 2.0f);
    check_cuda(cudaGetLastError(), "scale_rows launch");
    check_cuda(cudaDeviceSynchronize(), "scale_rows");
    ok &= compare(
        m.get()->dl_tensor.data, static_cast<std::size_t>(rows * cols),
        [](std::size_t k) { return 2.0f * static_cast<float>((k / cols) * 1000 + k % cols); },
        "managed, adopt_as, row slices");
    const float* host = x.data();
    ok &= host[cols + 1] == 2.0f * 1001.0f;
    return ok ? 0 : EXIT_FAILURE;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accessor_kernels: %s\n", e.what());
    return EXIT_FAILURE;
  }
}
