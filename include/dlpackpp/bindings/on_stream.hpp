// SPDX-License-Identifier: Apache-2.0
/// @file
/// OnStream<V, Stream>: a pybind11 or nanobind parameter whose tensor is ready for device work
/// queued on `stream()`. The caster asks the producer to order its pending work before that
/// stream (`__dlpack__(stream=...)`, the Python spec's consumer side), so the bound function
/// launches there and nobody synchronizes. `Stream` says which stream: ProducerStream (the
/// default) takes the producer's current work stream from its exchange table (PyTorch's
/// current stream), or the legacy default stream where it has no table; a type of the
/// function author's with `static void* stream(Device) noexcept` names one of the author's own.
#pragma once
#ifndef DLPACKPP_BINDINGS_ON_STREAM_HPP_
#define DLPACKPP_BINDINGS_ON_STREAM_HPP_

#include "dlpackpp/python.hpp"

#include "dlpackpp/bindings/arguments.hpp"
#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE
namespace bindings {

/// OnStream's default stream: the producer's current work stream on the tensor's device, as
/// its exchange table reports it (`torch.cuda.current_stream()` for PyTorch; for a
/// dlpackpp.Tensor, the thread's current work stream); the legacy default stream for a
/// producer without the table, as `__dlpack__(stream=None)` means it.
struct ProducerStream {};

/// A parameter of type V (`TensorView`, `TensorAccessor<T, N>`, `ManagedTensor`) whose tensor
/// is ready for work queued on `stream()`: the producer ordered its pending work before that
/// stream, and the host waited for nothing. An accessor here may point at device memory (its
/// user is a kernel); a tensor in host memory has no stream (`stream()` is NULL).
template <class V, class Stream = ProducerStream>
class OnStream {
 public:
  /// `value`, ready on `stream`.
  OnStream(V value, void* stream) noexcept : value_(std::move(value)), stream_(stream) {}
  /// The loaded value.
  V& value() noexcept { return value_; }
  /// The loaded value.
  const V& value() const noexcept { return value_; }
  /// The loaded value.
  V& operator*() noexcept { return value_; }
  /// The loaded value's members.
  V* operator->() noexcept { return &value_; }
  /// The stream to launch on, as a `void*` (cast it to `cudaStream_t`): on CUDA never NULL (the
  /// legacy default stream is `cudaStreamLegacy`); NULL for a tensor without streams (host
  /// memory, and the default stream on ROCm).
  void* stream() const noexcept { return stream_; }

 private:
  V value_;
  void* stream_;
};

namespace detail {

/// Whether work on `device` is ordered by streams (the Python spec's CUDA and ROCm rules).
constexpr bool has_streams(Device device) noexcept {
  const std::int32_t code = device.type_code();
  return code == device_code::cuda || code == device_code::cuda_managed ||
         code == device_code::rocm;
}

/// What `obj.__dlpack_device__()` says, the first step of the spec's consumer: the stream to
/// ask for depends on the device. A producer without it, or one that answers something else,
/// does not fit.
inline Result<Device> dlpack_device_of(PyObject* obj) {
  PyObject* answer = PyObject_CallMethod(obj, "__dlpack_device__", nullptr);
  if (answer == nullptr) {
    return python::detail::take_python_error(python::detail::type_name_of(obj) +
                                             ".__dlpack_device__");
  }
  int type = 0;
  int id = 0;
  const bool read = PyTuple_Check(answer) && PyArg_ParseTuple(answer, "ii", &type, &id) != 0;
  Py_DECREF(answer);
  if (!read) {
    PyErr_Clear();
    return ::dlpackpp::detail::make_error(Errc::invalid_argument, python::detail::type_name_of(obj),
                                          ".__dlpack_device__() is not (device_type, device_id)");
  }
  return Device::from_code(type, id);
}

/// The stream an OnStream<V, Stream> parameter launches on for `obj`'s tensor on `device`, as
/// OnStream::stream() reports it: on CUDA a NULL (the default stream) is named
/// `cudaStreamLegacy` (1), which is also what the spec's integer for it is.
template <class Stream>
Result<void*> launch_stream(PyObject* obj, Device device) {
  void* stream = nullptr;
  if constexpr (std::is_same<Stream, ProducerStream>::value) {
    Result<void*> current = python::current_stream(obj, device);  // NULL without a table
    if (!current) return current;
    stream = *current;
  } else {
    static_assert(noexcept(Stream::stream(device)),
                  "dlpackpp: OnStream's Stream::stream(Device) must be noexcept (a caster "
                  "cannot tell its exception from a producer's)");
    stream = Stream::stream(device);
  }
  if (stream == nullptr && device.type_code() != device_code::rocm)
    stream = reinterpret_cast<void*>(std::uintptr_t{1});  // cudaStreamLegacy
  return stream;
}

/// An OnStream<V, Stream> argument: the device asked first, then the stream chosen, then V
/// loaded as its own argument is, asking the producer to order its work before that stream
/// (through `__dlpack__(stream=...)`; a dlpackpp.Tensor read in place orders it through its
/// stream hook, see python/borrow.hpp). A tensor without streams is loaded as V alone.
template <class V, class Stream>
class Argument<OnStream<V, Stream>> {
 public:
  /// Nothing loaded.
  Argument() noexcept {}  // NOLINT(modernize-use-equals-default)

  /// Loads `src` (see the class comment); `keepable` as in import_view.
  Loaded load(PyObject* src, bool keepable) {
    if (plainly_not_a_tensor(src)) return Loaded::declined;
    std::optional<std::intptr_t> asked;
    const Loaded chosen = guarded([&] {
      Result<Device> device = dlpack_device_of(src);
      if (!device) return refuse(device.error());
      if (!has_streams(*device)) return Loaded::yes;
      Result<void*> stream = launch_stream<Stream>(src, *device);
      if (!stream) return refuse(stream.error());
      stream_ = *stream;
      asked = reinterpret_cast<std::intptr_t>(stream_);
      return Loaded::yes;
    });
    if (chosen != Loaded::yes) return chosen;
    return inner_.load_on(src, keepable, asked);
  }
  /// The loaded value, read in place.
  OnStream<V, Stream>& get() noexcept { return made(std::move(inner_.get())); }
  /// The loaded value, to be moved out, what it reads handed to `park` (see hand_over).
  template <class Park>
  OnStream<V, Stream>* moved_out(Park&& park) noexcept {
    V* value = inner_.moved_out(park);
    return value != nullptr ? &made(std::move(*value)) : nullptr;
  }

 private:
  // The value, made once. A view takes its own copy of the DLTensor it may read in inner_'s
  // storage, so that moving this argument (a library may move its caster) moves a value that
  // reads nothing of the old one.
  OnStream<V, Stream>& made(V&& value) noexcept {
    if (!value_) {
      if constexpr (std::is_same<V, TensorView>::value) value.detach_from_dltensor();
      value_.emplace(std::move(value), stream_);
    }
    return *value_;
  }

  Argument<V> inner_;
  void* stream_ = nullptr;
  std::optional<OnStream<V, Stream>> value_;
};

}  // namespace detail
}  // namespace bindings
DLPACKPP_END_NAMESPACE

#endif  // DLPACKPP_BINDINGS_ON_STREAM_HPP_
