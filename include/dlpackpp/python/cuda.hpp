// SPDX-License-Identifier: Apache-2.0
/// @file
/// CUDA work still pending when a tensor reaches Python: to_pyobject(tensor, producer_stream)
/// records an event on the producer's stream, and every `__dlpack__(stream=s)` makes `s` wait
/// for it (cudaStreamWaitEvent) instead of the host waiting for the device; when the tensor
/// goes, the producer's stream waits for those consumers' streams before its deleter. Part of
/// <dlpackpp/python.hpp>, and like <dlpackpp/cuda.hpp> active only in translation units that
/// see the CUDA runtime (under nvcc, after `#include <cuda_runtime_api.h>`, or with
/// DLPACKPP_HAS_CUDA_RUNTIME=1); elsewhere empty. Link the CUDA runtime (`CUDA::cudart`).
#pragma once

#include "dlpackpp/python/python_h.hpp"

#include "dlpackpp/cuda.hpp"  // DLPACKPP_HAS_CUDA_RUNTIME, CudaDeviceGuard, cuda_error

#if DLPACKPP_HAS_CUDA_RUNTIME

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/python/errors.hpp"
#include "dlpackpp/python/stream_order.hpp"
#include "dlpackpp/python/tensor_type.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <new>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE
namespace python {
namespace detail {

/// One tensor's pending work: an event recorded on the producer's stream at to_pyobject, and
/// the streams its consumers named, which the producer's stream waits for before the tensor's
/// deleter (cuda_release).
struct CudaPendingWork {
  /// Distinct consumer streams kept; beyond them the host waits for the device at release.
  static constexpr int max_consumers = 4;
  cudaEvent_t event = nullptr;
  Device device;
  cudaStream_t producer = nullptr;
  std::mutex mutex;  // orders from two threads at once (free-threaded builds)
  bool too_many = false;
  int consumer_count = 0;
  cudaStream_t consumers[max_consumers] = {};

  /// Notes that `stream` may read the tensor until the tensor goes.
  void add(cudaStream_t stream) noexcept {
    const std::lock_guard<std::mutex> lock(mutex);
    for (int i = 0; i < consumer_count; ++i) {
      if (consumers[i] == stream) return;
    }
    if (consumer_count == max_consumers)
      too_many = true;
    else
      consumers[consumer_count++] = stream;
  }
};

/// Raises the Error a failed CUDA call makes (dlpackpp::detail::cuda_error), which throws
/// std::bad_alloc for out of memory: that becomes MemoryError here, never a throw.
DLPACKPP_COLD inline void raise_cuda_error(const char* call, Device device,
                                           cudaError_t status) noexcept {
  DLPACKPP_DETAIL_TRY { set_python_error(::dlpackpp::detail::cuda_error(call, device, status)); }
  DLPACKPP_DETAIL_CATCH(...) { set_error_from_current_exception(); }
}

/// The cudaStream_t a consumer named (python/stream_order.hpp read the Python value).
inline cudaStream_t cuda_stream_of(const ConsumerStream& consumer) noexcept {
  switch (consumer.kind) {
    case CudaConsumer::legacy:
      return cudaStreamLegacy;
    case CudaConsumer::per_thread:
      return cudaStreamPerThread;
    default:
      return reinterpret_cast<cudaStream_t>(consumer.handle);
  }
}

/// StreamHook::order for CUDA: the consumer's stream waits for the event (the host never
/// does), -1 leaves the order to the consumer, and a host copy (copy=True of managed memory)
/// waits on the host, the one reader that has no stream.
inline bool cuda_order(void* context, PyObject* stream) noexcept {
  auto* work = static_cast<CudaPendingWork*>(context);
  if (stream == nullptr) {
    if (!work->device.is_host_accessible()) return true;  // the copy is refused after this
    const cudaError_t status = cudaEventSynchronize(work->event);
    if (status != cudaSuccess) raise_cuda_error("cudaEventSynchronize", work->device, status);
    return status == cudaSuccess;
  }
  ConsumerStream consumer;
  if (!cuda_consumer_stream(stream, consumer)) return false;
  if (consumer.kind == CudaConsumer::no_wait) return true;
  // The default streams are per device: the tensor's device is made current to name them.
  const ::dlpackpp::detail::CudaDeviceGuard guard(work->device.id());
  if (guard.status != cudaSuccess) {
    raise_cuda_error(guard.call, work->device, guard.status);
    return false;
  }
  const cudaError_t status = cudaStreamWaitEvent(cuda_stream_of(consumer), work->event, 0);
  if (status != cudaSuccess) {
    raise_cuda_error("cudaStreamWaitEvent", work->device, status);
    return false;
  }
  // Kept for release, on any thread: a per-thread default stream is named through the legacy
  // one, which waits for every blocking stream (per-thread ones included).
  work->add(consumer.kind == CudaConsumer::handle ? cuda_stream_of(consumer) : cudaStreamLegacy);
  return true;
}

/// Makes the producer's stream wait for the work each consumer queued on the stream it named,
/// so that a deleter freeing in that stream's order (allocate_cuda's) frees no memory a
/// consumer kernel still reads: PyTorch calls the deleter as soon as its tensor dies on the
/// host. Where a stream cannot be waited on, or more consumers named one than are kept, the
/// host waits for the device instead: slower, never unsafe. What it buys: the example's loop
/// (`torch.from_dlpack(iota(n))` dropped after one add, 20 times) summed wrong in 3 runs of 3
/// without it, right in 3 of 3 with it, the host never waiting (H200, docs/cuda.md). What it
/// relies on: the producer's stream and each consumer's stream alive until the tensor goes.
inline void order_after_consumers(CudaPendingWork& work) noexcept {
  bool ordered = !work.too_many;
  for (int i = 0; ordered && i < work.consumer_count; ++i) {
    const cudaStream_t consumer = work.consumers[i];
    if (consumer == work.producer) continue;
    ordered = cudaEventRecord(work.event, consumer) == cudaSuccess &&
              cudaStreamWaitEvent(work.producer, work.event, 0) == cudaSuccess;
  }
  if (!ordered) static_cast<void>(cudaDeviceSynchronize());
}

/// StreamHook::release for CUDA, just before the tensor's deleter: the producer's stream is
/// ordered after the consumers', and the event goes, on any thread. A failure (the runtime
/// already unloaded at process exit) has nowhere to go and is dropped.
inline void cuda_release(void* context) noexcept {
  auto* work = static_cast<CudaPendingWork*>(context);
  if (work->event != nullptr) {
    const ::dlpackpp::detail::CudaDeviceGuard guard(work->device.id());
    if (guard.status == cudaSuccess) order_after_consumers(*work);
    static_cast<void>(cudaEventDestroy(work->event));
  }
  delete work;
}

/// The hook every CUDA tensor with a producer stream carries.
inline constexpr StreamHook cuda_stream_hook = {&cuda_order, &cuda_release};

/// A new CudaPendingWork with its event recorded on `stream`; NULL with an exception set.
inline CudaPendingWork* record_pending_work(Device device, cudaStream_t stream) noexcept {
  auto* work = new (std::nothrow) CudaPendingWork();
  if (work == nullptr) {
    PyErr_NoMemory();
    return nullptr;
  }
  work->device = device;
  work->producer = stream;
  const ::dlpackpp::detail::CudaDeviceGuard guard(device.id());  // events belong to a device
  const char* call = guard.call;
  cudaError_t status = guard.status;
  if (status == cudaSuccess) {
    call = "cudaEventCreateWithFlags";
    status = cudaEventCreateWithFlags(&work->event, cudaEventDisableTiming);
  }
  if (status == cudaSuccess) {
    call = "cudaEventRecord";
    status = cudaEventRecord(work->event, stream);
  }
  if (status != cudaSuccess) {
    raise_cuda_error(call, device, status);
    cuda_release(work);
    return nullptr;
  }
  return work;
}

}  // namespace detail

/// Makes `stream` this thread's current work stream on `device`: what dlpackpp.Tensor's
/// exchange table reports from current_work_stream (to_pyobject with a stream sets it too).
/// Keep the stream alive while consumers may launch on it.
inline Result<void> try_set_current_work_stream(Device device, cudaStream_t stream) {
  if (!detail::set_work_stream(device, static_cast<void*>(stream)))
    return detail::take_python_error("set_current_work_stream");
  return {};
}

/// As to_pyobject, for a CUDA tensor whose writes may still be queued on `producer_stream`:
/// an event recorded on it now, and `__dlpack__(stream=s)` makes `s` wait for it without
/// blocking the host (None and 1: the legacy default stream, 2: the per-thread one, -1:
/// nothing, 0: ValueError), every export its own consumer's stream; `producer_stream`
/// becomes this thread's current work stream on the tensor's device (the exchange table's
/// current_work_stream), also when the call fails after recording. When the tensor goes (the
/// object and every export), `producer_stream` is made to wait for the streams its consumers
/// named before the tensor's deleter runs, so a deleter may free in `producer_stream`'s order
/// (allocate_cuda's does); keep `producer_stream`, and each consumer's stream, alive until
/// then. The event is destroyed once, with the tensor. Only Device::cuda and
/// Device::cuda_managed tensors (else BufferError). On failure returns NULL with a Python
/// exception set and leaves `tensor` untouched.
inline PyObject* to_pyobject(ImportedTensor&& tensor, cudaStream_t producer_stream) noexcept {
  if (!tensor) return to_pyobject(std::move(tensor));  // its ValueError
  const Device device = tensor.device();
  if (device.type_code() != device_code::cuda && device.type_code() != device_code::cuda_managed) {
    DLPACKPP_DETAIL_TRY {
      set_python_error(::dlpackpp::detail::make_error(
          Errc::unsupported_device,
          "to_pyobject with a producer stream takes a cuda or "
          "cuda_managed tensor, not one on ",
          device.to_string(), " (synchronize the stream and call to_pyobject(tensor))"));
    }
    DLPACKPP_DETAIL_CATCH(...) { detail::set_error_from_current_exception(); }
    return nullptr;
  }
  detail::CudaPendingWork* work = detail::record_pending_work(device, producer_stream);
  if (work == nullptr) return nullptr;
  // The stream is made current before the object exists, so that no failure after the object
  // took the tensor can leave the caller without it.
  PyObject* obj = nullptr;
  if (detail::set_work_stream(device, static_cast<void*>(producer_stream)))
    obj = detail::new_tensor_object(std::move(tensor), &detail::cuda_stream_hook, work);
  if (obj == nullptr) detail::cuda_release(work);
  return obj;
}

}  // namespace python
DLPACKPP_END_NAMESPACE

#endif  // DLPACKPP_HAS_CUDA_RUNTIME
