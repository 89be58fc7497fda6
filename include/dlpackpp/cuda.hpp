// SPDX-License-Identifier: Apache-2.0
/// @file
/// allocate_cuda(): fresh, zero-filled CUDA tensors (device, managed or pinned host memory)
/// whose deleter frees them, stream-ordered where the runtime offers it. Opt-in (not in the
/// umbrella header) and active only in translation units compiled with the CUDA runtime: under
/// nvcc, after `#include <cuda_runtime_api.h>`, or with DLPACKPP_HAS_CUDA_RUNTIME predefined to
/// 1 (which includes it here). Elsewhere DLPACKPP_HAS_CUDA_RUNTIME is 0 and nothing is defined,
/// so the rest of dlpackpp never depends on CUDA. Link the CUDA runtime (`CUDA::cudart`).
#pragma once

#include "dlpackpp/detail/config.hpp"

#ifndef DLPACKPP_HAS_CUDA_RUNTIME
#if defined(__CUDACC__) || defined(CUDART_VERSION)
/// 1 when allocate_cuda() is available: this TU sees the CUDA runtime API.
#define DLPACKPP_HAS_CUDA_RUNTIME 1
#else
/// 0: this TU does not see the CUDA runtime API, so allocate_cuda() is not defined.
#define DLPACKPP_HAS_CUDA_RUNTIME 0
#endif
#endif

#if DLPACKPP_HAS_CUDA_RUNTIME

#include "dlpackpp/device.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/producers.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

// cudaMallocAsync/cudaFreeAsync arrived in CUDA 11.2.
#if CUDART_VERSION >= 11020
#define DLPACKPP_DETAIL_CUDA_ASYNC 1
#else
#define DLPACKPP_DETAIL_CUDA_ASYNC 0
#endif

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// How a CUDA buffer was obtained, hence how it is freed.
enum class CudaMemory : int { device, device_async, managed, pinned_host };

/// Owns one CUDA allocation; the export carries it and the consumer's deleter destroys it.
/// Stream-ordered memory goes back on the stream it came from.
struct CudaBuffer {
  void* ptr = nullptr;
  CudaMemory kind = CudaMemory::device;
  cudaStream_t stream = nullptr;

  CudaBuffer() = default;
  CudaBuffer(CudaBuffer&& other) noexcept
      : ptr(std::exchange(other.ptr, nullptr)), kind(other.kind), stream(other.stream) {}
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  CudaBuffer& operator=(CudaBuffer&&) = delete;
  ~CudaBuffer() {
    if (ptr == nullptr) return;
    // A deleter cannot report failure (DLPack's returns void), so errors are dropped here.
    switch (kind) {
      case CudaMemory::pinned_host:
        static_cast<void>(cudaFreeHost(ptr));
        break;
#if DLPACKPP_DETAIL_CUDA_ASYNC
      case CudaMemory::device_async:
        static_cast<void>(cudaFreeAsync(ptr, stream));
        break;
#endif
      default:
        static_cast<void>(cudaFree(ptr));
        break;
    }
  }
};

/// Makes `device` current for its lifetime (allocation happens on the current device).
struct CudaDeviceGuard {
  int previous = -1;
  cudaError_t status = cudaSuccess;
  const char* call = "cudaGetDevice";  // the call that failed, when one did
  explicit CudaDeviceGuard(int device) {
    status = cudaGetDevice(&previous);
    if (status == cudaSuccess && previous != device) {
      call = "cudaSetDevice";
      status = cudaSetDevice(device);
    }
  }
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;
  ~CudaDeviceGuard() {
    if (previous >= 0) static_cast<void>(cudaSetDevice(previous));
  }
};

/// A CUDA call that failed: out of memory is std::bad_alloc, as for host allocation (abort
/// without exceptions, as operator new does); anything else names the call, the device and
/// CUDA's own message as Errc::unsupported_device.
DLPACKPP_COLD inline Error cuda_error(const char* call, Device device, cudaError_t status) {
  static_cast<void>(cudaGetLastError());  // leave the runtime's last-error slot clean
  if (status == cudaErrorMemoryAllocation) {
#if DLPACKPP_USE_EXCEPTIONS
    throw std::bad_alloc();
#else
    std::abort();
#endif
  }
  return make_error(Errc::unsupported_device, call, " failed on ", device.to_string(), ": ",
                    cudaGetErrorName(status), " (", cudaGetErrorString(status), ')');
}

/// Allocates and zero-fills `bytes` of `device` memory, ordered on `stream` where it can be.
inline Result<CudaBuffer> cuda_allocate_bytes(std::size_t bytes, Device device,
                                              cudaStream_t stream) {
  CudaBuffer buffer;
  buffer.stream = stream;
  if (device.type_code() == device_code::cuda_host) {
    buffer.kind = CudaMemory::pinned_host;
    const cudaError_t status = cudaMallocHost(&buffer.ptr, bytes);
    if (status != cudaSuccess) return cuda_error("cudaMallocHost", device, status);
    std::memset(buffer.ptr, 0, bytes);
    return Result<CudaBuffer>(std::move(buffer));
  }
  CudaDeviceGuard guard(device.id());
  if (guard.status != cudaSuccess) return cuda_error(guard.call, device, guard.status);
  cudaError_t status = cudaSuccess;
  if (device.type_code() == device_code::cuda_managed) {
    buffer.kind = CudaMemory::managed;
    status = cudaMallocManaged(&buffer.ptr, bytes);
    if (status != cudaSuccess) return cuda_error("cudaMallocManaged", device, status);
  } else {
#if DLPACKPP_DETAIL_CUDA_ASYNC
    int pools = 0;
    if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device.id()) ==
            cudaSuccess &&
        pools != 0) {
      buffer.kind = CudaMemory::device_async;
      status = cudaMallocAsync(&buffer.ptr, bytes, stream);
      if (status != cudaSuccess) return cuda_error("cudaMallocAsync", device, status);
    }
#endif
    if (buffer.ptr == nullptr) {
      buffer.kind = CudaMemory::device;
      status = cudaMalloc(&buffer.ptr, bytes);
      if (status != cudaSuccess) return cuda_error("cudaMalloc", device, status);
    }
  }
  status = cudaMemsetAsync(buffer.ptr, 0, bytes, stream);
  if (status != cudaSuccess) return cuda_error("cudaMemsetAsync", device, status);
  return Result<CudaBuffer>(std::move(buffer));
}

}  // namespace detail

/// A fresh, zero-filled, compact CUDA tensor, as allocate() makes host ones: on
/// Device::cuda(id) from cudaMallocAsync on `stream` where the device supports memory pools
/// (else cudaMalloc), on Device::cuda_managed(id) from cudaMallocManaged, on
/// Device::cuda_host() from cudaMallocHost. Device memory is zeroed and freed in `stream`'s
/// order: use the tensor on that stream (or synchronize with it first), and keep `stream`
/// alive until the tensor's deleter has run. Other devices are Errc::unsupported_device, as
/// is any CUDA failure except out-of-memory, which throws std::bad_alloc. For example
/// `allocate_cuda(DataType::float32(), {2, 3}, Device::cuda(0), stream)`.
template <class Handle = DefaultManagedTensor>
Result<Handle> try_allocate_cuda(DataType dtype, IntSpan shape, Device device = Device::cuda(0),
                                 cudaStream_t stream = nullptr, std::uint64_t flags = 0) {
  const std::int32_t code = device.type_code();
  if (code != device_code::cuda && code != device_code::cuda_managed &&
      code != device_code::cuda_host) {
    return detail::make_error(Errc::unsupported_device,
                              "allocate_cuda makes cuda, cuda_managed or cuda_host memory, not ",
                              device.to_string());
  }
  const Result<std::int64_t> numel = detail::try_numel(shape);
  if (!numel) return numel.error();
  const Result<std::int64_t> bytes = dtype.try_storage_bytes(*numel);
  if (!bytes) return bytes.error();
  // An empty tensor needs no memory (and its data may be NULL).
  Result<detail::CudaBuffer> made =
      *numel == 0 ? Result<detail::CudaBuffer>(detail::CudaBuffer())
                  : detail::cuda_allocate_bytes(static_cast<std::size_t>(*bytes), device, stream);
  if (!made) return made.error();
  void* data = made->ptr;
  return detail::make_export<Handle>(data, dtype, shape, {}, device, std::move(*made), flags);
}
/// As try_allocate_cuda, throwing on failure.
template <class Handle = DefaultManagedTensor>
Handle allocate_cuda(DataType dtype, IntSpan shape, Device device = Device::cuda(0),
                     cudaStream_t stream = nullptr, std::uint64_t flags = 0) {
  return try_allocate_cuda<Handle>(dtype, shape, device, stream, flags).value();
}

DLPACKPP_END_NAMESPACE

#undef DLPACKPP_DETAIL_CUDA_ASYNC
#endif  // DLPACKPP_HAS_CUDA_RUNTIME
