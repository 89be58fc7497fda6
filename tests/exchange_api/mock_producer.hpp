// SPDX-License-Identifier: Apache-2.0
// A mock exchange-API producer for the exchange API tests (tests/python has a mock Python
// framework of its own): a fake "PyObject" type that owns its elements, MockImpl (a producer
// built with make_exchange_api<MockImpl>()) whose behaviour each test picks, and counters for
// every deleter, object and error report.
#pragma once

#include <dlpackpp/exchange_api.hpp>
#include <dlpackpp/producers.hpp>

#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mock {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::ManagedTensor;

/// What the mock framework tracks; reset by each test.
struct Counters {
  int deleters = 0;          // deleters of tensors the mock exported
  int set_error_calls = 0;   // MockImpl::set_error reports
  std::string last_kind;     // the last reported kind
  std::string last_message;  // the last reported message
  int stream_queries = 0;    // MockImpl::current_work_stream calls
  Device last_stream_device;
};
inline Counters& counters() {
  static Counters c;
  return c;
}

/// The mock framework's tensor object, standing in for a PyObject of its tensor type.
struct FakeObject {
  std::vector<float> values;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // empty: the object exports NULL strides
  Device device = Device::cpu();
  ManagedTensor held;  // a tensor handed over by managed_tensor_to_py_object_no_sync
};

/// A 2x3 float object holding 0..5.
inline std::unique_ptr<FakeObject> make_object() {
  auto o = std::make_unique<FakeObject>();
  o->values = {0, 1, 2, 3, 4, 5};
  o->shape = {2, 3};
  o->strides = {3, 1};
  return o;
}

/// The owner of an exported tensor: counts the deleter when the export dies.
struct CountedOwner {
  bool live = true;
  CountedOwner() = default;
  CountedOwner(CountedOwner&& other) noexcept : live(std::exchange(other.live, false)) {}
  CountedOwner& operator=(CountedOwner&&) = delete;
  ~CountedOwner() {
    if (live) ++counters().deleters;
  }
};

/// A counted owner that also keeps an allocated buffer alive.
struct CountedBuffer {
  CountedOwner owner;
  std::shared_ptr<std::vector<std::uint8_t>> buffer;
};

/// Exports `object`'s elements (borrowed: the object outlives its exports in the tests).
inline ManagedTensor export_object(FakeObject& object) {
  return dlpackpp::wrap(object.values.data(), DataType::float32(), object.shape, object.strides,
                        object.device, CountedOwner{});
}

/// A fresh counted tensor of `shape` and `dtype`, for the allocator.
inline ManagedTensor counted_tensor(DataType dtype, dlpackpp::IntSpan shape, Device device) {
  std::int64_t numel = 1;
  for (std::int64_t extent : shape) numel *= extent;
  auto buffer = std::make_shared<std::vector<std::uint8_t>>(
      static_cast<std::size_t>(dtype.storage_bytes(numel)) + 1);
  void* data = buffer->data();
  return dlpackpp::wrap(data, dtype, shape, {}, device, CountedBuffer{{}, std::move(buffer)});
}

/// How MockImpl's next call behaves.
enum class Mode {
  ok,
  throw_error,      // throws dlpackpp::Error(Errc::unsupported_device)
  throw_bad_alloc,  // throws std::bad_alloc
  throw_runtime,    // throws std::runtime_error("mock failure")
  throw_int,        // throws 42: not a std::exception
  return_error,     // returns a Result holding Errc::dtype_mismatch (no exception)
  return_empty,     // returns an empty tensor / NULL object
  keep_copy,        // to_py_object: succeeds without taking the tensor
  malformed,        // from_py_object: exports a tensor with a negative extent
  other_major,      // from_py_object: exports a tensor of major version 2
  wrong_shape,      // allocator: ignores the prototype's shape
};
inline Mode& mode() {
  static Mode m = Mode::ok;
  return m;
}
inline bool& set_error_throws() {
  static bool b = false;
  return b;
}

/// Throws as `mode()` says for the failure modes every function shares.
inline void maybe_throw() {
  switch (mode()) {
    case Mode::throw_error:
      throw dlpackpp::Error(dlpackpp::Errc::unsupported_device, "mock refuses this device");
    case Mode::throw_bad_alloc:
      throw std::bad_alloc();
    case Mode::throw_runtime:
      throw std::runtime_error("mock failure");
    case Mode::throw_int:
      throw 42;
    default:
      break;
  }
}

inline dlpackpp::Error returned_error() {
  return dlpackpp::Error(dlpackpp::Errc::dtype_mismatch, "mock returns an error");
}

/// The producer: every contracted function, returning Result so it can fail both ways.
struct MockImpl {
  static dlpackpp::Result<ManagedTensor> managed_tensor_allocator(const DLTensor& prototype) {
    maybe_throw();
    if (mode() == Mode::return_error) return returned_error();
    if (mode() == Mode::return_empty) return ManagedTensor();
    if (mode() == Mode::wrong_shape) return counted_tensor(prototype.dtype, {1}, prototype.device);
    return counted_tensor(prototype.dtype,
                          {prototype.shape, static_cast<std::size_t>(prototype.ndim)},
                          prototype.device);
  }

  static dlpackpp::Result<ManagedTensor> managed_tensor_from_py_object_no_sync(void* py_object) {
    maybe_throw();
    if (mode() == Mode::return_error) return returned_error();
    if (mode() == Mode::return_empty) return ManagedTensor();
    ManagedTensor t = export_object(*static_cast<FakeObject*>(py_object));
    if (mode() == Mode::malformed) t.get()->dl_tensor.shape[0] = -2;
    if (mode() == Mode::other_major) t.get()->version.major = 2;
    return t;
  }

  static dlpackpp::Result<void*> managed_tensor_to_py_object_no_sync(ManagedTensor& tensor) {
    maybe_throw();
    if (mode() == Mode::return_error) return returned_error();
    if (mode() == Mode::return_empty) return static_cast<void*>(nullptr);
    auto object = std::make_unique<FakeObject>();
    if (mode() != Mode::keep_copy) object->held = std::move(tensor);
    return static_cast<void*>(object.release());
  }

  // Allocation-free: points into the object's own arrays.
  static void dltensor_from_py_object_no_sync(void* py_object, DLTensor& out) {
    maybe_throw();
    auto& object = *static_cast<FakeObject*>(py_object);
    out = DLTensor{};
    out.data = object.values.data();
    out.device = object.device;
    out.ndim = static_cast<std::int32_t>(object.shape.size());
    out.dtype = DataType::float32();
    out.shape = object.shape.data();
    out.strides = object.strides.empty() ? nullptr : object.strides.data();
  }

  static void* current_work_stream(Device device) {
    maybe_throw();
    ++counters().stream_queries;
    counters().last_stream_device = device;
    return reinterpret_cast<void*>(std::uintptr_t{0x1000} +
                                   static_cast<std::uintptr_t>(device.id()));
  }

  static void set_error(std::string_view kind, std::string_view message) {
    ++counters().set_error_calls;
    counters().last_kind = std::string(kind);
    counters().last_message = std::string(message);
    if (set_error_throws()) throw std::runtime_error("set_error itself failed");
  }
};

/// A producer with only the required functions, returning plain values.
struct MinimalImpl {
  static ManagedTensor managed_tensor_allocator(const DLTensor& prototype) {
    return counted_tensor(prototype.dtype,
                          {prototype.shape, static_cast<std::size_t>(prototype.ndim)},
                          prototype.device);
  }
  static ManagedTensor managed_tensor_from_py_object_no_sync(void* py_object) {
    return export_object(*static_cast<FakeObject*>(py_object));
  }
  static void* managed_tensor_to_py_object_no_sync(ManagedTensor& tensor) {
    auto object = std::make_unique<FakeObject>();
    object->held = std::move(tensor);
    return object.release();
  }
  static void set_error(std::string_view kind, std::string_view message) {
    MockImpl::set_error(kind, message);
  }
};

}  // namespace mock
