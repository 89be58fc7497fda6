// SPDX-License-Identifier: Apache-2.0
/// @file
/// A producer's pending device work, as dlpackpp.Tensor sees it, with no CUDA type in sight:
/// the hook python/cuda.hpp fills when C++ code hands over a tensor whose writes are still
/// queued on a stream, the Python spec's reading of `__dlpack__(stream=...)` on CUDA, and each
/// thread's current work stream per device (what the exchange table's current_work_stream
/// reports). A tensor without a hook is what it always was: its producer finished writing
/// before to_pyobject, so there is nothing to order.
#pragma once

#include "dlpackpp/python/python_h.hpp"

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/python/errors.hpp"

#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE
namespace python {
namespace detail {

/// How one dlpackpp.Tensor orders its pending work before a consumer, and its consumers' work
/// before the tensor's deleter (python/cuda.hpp fills it). A static table: the object keeps a
/// pointer to it and a context of the hook's own, which the exports share.
struct StreamHook {
  /// Makes `stream` (what __dlpack__ was given: Py_None or an int) wait for the work, without
  /// blocking the host; NULL means the host itself reads next (copy=True) and must wait.
  /// False with a Python exception set.
  bool (*order)(void* context, PyObject* stream) noexcept;
  /// Releases `context`, exactly once, when the tensor itself goes (the object and every
  /// export), just before its deleter runs: a deleter that frees in its stream's order must
  /// come after the work each consumer queued on the stream it named. On whatever thread lets
  /// go last, also while the interpreter finalizes, so it calls no Python.
  void (*release)(void* context) noexcept;
};

/// What a consumer's `stream` asks of a CUDA producer (the Python spec's CUDA rules).
enum class CudaConsumer : int {
  no_wait,     ///< -1: the consumer orders the work itself
  legacy,      ///< None or 1: the legacy default stream
  per_thread,  ///< 2: the per-thread default stream
  handle,      ///< any other positive int: a cudaStream_t
};

/// A consumer's stream, read: its kind and, for CudaConsumer::handle, the cudaStream_t's value.
struct ConsumerStream {
  CudaConsumer kind = CudaConsumer::legacy;  ///< what the consumer asked for
  std::uintptr_t handle = 0;                 ///< the stream's address, for `handle`
};

/// Reads `stream` (Py_None or an int, as __dlpack__ checked) by the Python spec's CUDA rules;
/// 0 ("ambiguous", refused by the spec) and negatives other than -1 are ValueError, an int
/// wider than a pointer too. False with the exception set.
inline bool cuda_consumer_stream(PyObject* stream, ConsumerStream& out) {
  out = ConsumerStream();
  if (stream == Py_None) return true;  // the spec: None is the legacy default stream on CUDA
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(stream, &overflow);
  if (value == -1 && overflow == 0 && PyErr_Occurred() != nullptr) return false;
  if (overflow == 0 && value == -1) {
    out.kind = CudaConsumer::no_wait;
    return true;
  }
  if (overflow == 0 && (value == 1 || value == 2)) {
    out.kind = value == 1 ? CudaConsumer::legacy : CudaConsumer::per_thread;
    return true;
  }
  if (overflow > 0 || (overflow == 0 && value > 2)) {
    // A handle is an address: as unsigned as the pointer it came from (CuPy's `ptr`, PyTorch's
    // `cuda_stream`), and never wider.
    const unsigned long long address = PyLong_AsUnsignedLongLong(stream);
    if (PyErr_Occurred() == nullptr && address <= UINTPTR_MAX) {
      out.kind = CudaConsumer::handle;
      out.handle = static_cast<std::uintptr_t>(address);
      return true;
    }
    PyErr_Clear();
  }
  PyErr_Format(PyExc_ValueError,
               "dlpackpp.Tensor.__dlpack__: stream=%R is not a CUDA stream: pass None or 1 (the "
               "legacy default stream), 2 (the per-thread default stream), a cudaStream_t, or -1 "
               "(no synchronization); 0 is ambiguous and refused",
               stream);
  return false;
}

// ---- the thread's current work stream -----------------------------------------------------
// The exchange table's current_work_stream names no tensor, only a device: it reports the
// stream this thread's C++ code last handed work over on (to_pyobject with a stream, or
// set_current_work_stream). It lives in the thread state's dict, not in a C++ thread_local,
// because the table answering may belong to another extension module (every module built
// with this ABI shares dlpackpp.Tensor's type), and CPython drops the dict with the thread.

/// The thread state's dict key: {(device type << 32) | id: stream address}.
inline constexpr const char work_streams_key[] = "dlpackpp.current_work_streams";

/// The key of `device` in that dict (a new reference), NULL with an exception set.
inline PyObject* work_stream_key(Device device) noexcept {
  const unsigned long long code = (static_cast<unsigned long long>(device.type()) << 32U) |
                                  static_cast<std::uint32_t>(device.id());
  return PyLong_FromUnsignedLongLong(code);
}

/// The thread's dict of current work streams (borrowed), made when `make`; NULL when there
/// is none yet (no exception) or with an exception set.
inline PyObject* work_streams(bool make) noexcept {
  PyObject* state = PyThreadState_GetDict();  // borrowed; per thread, so no lock needed
  if (state == nullptr) {
    if (make && PyErr_Occurred() == nullptr)
      PyErr_SetString(PyExc_RuntimeError, "dlpackpp: no thread state dict");
    return nullptr;
  }
  PyObject* streams = PyDict_GetItemString(state, work_streams_key);  // borrowed
  if (streams != nullptr || !make) return streams;
  streams = PyDict_New();
  if (streams == nullptr) return nullptr;
  const int rc = PyDict_SetItemString(state, work_streams_key, streams);
  Py_DECREF(streams);  // the thread's dict holds it now
  return rc == 0 ? streams : nullptr;
}

// The exception stays pending: the exchange table's set_error keeps a pending one.
DLPACKPP_COLD inline Error work_stream_error() {
  return Error(Errc::invalid_argument, "dlpackpp: the current work stream could not be read");
}

/// This thread's current work stream on `device`: NULL (the default stream) until C++ code
/// hands work over on another; on failure an Error, with the Python exception left pending.
inline Result<void*> work_stream_of(Device device) {
  PyObject* streams = work_streams(false);
  if (streams == nullptr) {
    if (PyErr_Occurred() != nullptr) return work_stream_error();
    return static_cast<void*>(nullptr);
  }
  PyObject* key = work_stream_key(device);
  if (key == nullptr) return work_stream_error();
  PyObject* value = PyDict_GetItem(streams, key);  // borrowed
  Py_DECREF(key);
  return value != nullptr ? PyLong_AsVoidPtr(value) : nullptr;
}

/// Makes `stream` this thread's current work stream on `device`; false with an exception set.
inline bool set_work_stream(Device device, void* stream) noexcept {
  PyObject* streams = work_streams(true);
  if (streams == nullptr) return false;
  PyObject* key = work_stream_key(device);
  PyObject* value = key != nullptr ? PyLong_FromVoidPtr(stream) : nullptr;
  const int rc = value != nullptr ? PyDict_SetItem(streams, key, value) : -1;
  Py_XDECREF(value);
  Py_XDECREF(key);
  return rc == 0;
}

}  // namespace detail
}  // namespace python
DLPACKPP_END_NAMESPACE
