// SPDX-License-Identifier: Apache-2.0
/// @file
/// The DLPack exchange API (`__dlpack_c_exchange_api__`, DLPack >= 1.2): finding a usable
/// table in a chain, typed consumer wrappers over one table, and make_exchange_api<Impl>()
/// for producers. Needs no Python.h: the table passes a PyObject* as void*.
///
/// Empty, apart from the Errc-to-Python-exception table that python.hpp shares, where the
/// dlpack.h in force does not declare the API (DLPACKPP_HAS_EXCHANGE_API is 0). Both
/// spellings of the header's link to the older table are understood: `prev_api` (DLPack
/// 1.2+) and `prev_version_api` (the draft some 1.1-era framework headers carry; predefine
/// DLPACKPP_HAS_EXCHANGE_API=1 for those).
///
/// Failures the producer reports (a non-zero return) become Errc::invalid_argument: the
/// request was refused by the producer. For every function but the allocator the producer's
/// own error (for Python, the pending exception) stays where the producer put it; the
/// allocator's SetError kind and message are carried in the Error's what(), as
/// "managed_tensor_allocator failed: <kind>: <message>".
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/error.hpp"

DLPACKPP_BEGIN_NAMESPACE
namespace detail {
/// The Python exception class an Errc maps to, for every header that reports errors to
/// Python (the producer kit's SetError kinds, python.hpp's exceptions); defined whatever
/// dlpack.h is in force.
enum class PythonErrorClass { buffer_error, type_error, value_error };

/// BufferError for what cannot be exchanged (version, device, flags, writability),
/// TypeError for a wrong or unsupported dtype or rank, ValueError for the rest.
constexpr PythonErrorClass python_error_class(Errc code) noexcept {
  switch (code) {
    case Errc::version_mismatch:
    case Errc::unsupported_device:
    case Errc::device_mismatch:
    case Errc::invalid_flags:
    case Errc::read_only:
      return PythonErrorClass::buffer_error;
    case Errc::unsupported_dtype:
    case Errc::dtype_mismatch:
    case Errc::rank_mismatch:
      return PythonErrorClass::type_error;
    default:
      return PythonErrorClass::value_error;
  }
}

/// The Python name of the class: "BufferError", "TypeError" or "ValueError".
constexpr const char* python_error_name(PythonErrorClass c) noexcept {
  switch (c) {
    case PythonErrorClass::buffer_error:
      return "BufferError";
    case PythonErrorClass::type_error:
      return "TypeError";
    case PythonErrorClass::value_error:
      break;
  }
  return "ValueError";
}
}  // namespace detail
DLPACKPP_END_NAMESPACE

#if DLPACKPP_HAS_EXCHANGE_API

#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/tensor_view.hpp"
#include "dlpackpp/validate.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

namespace detail {

// The header's link to the next older table: `prev_api` since DLPack 1.2, `prev_version_api`
// in the draft that some 1.1-era headers carry. Detected, since a field name is invisible
// to the preprocessor.
template <class H, class = void>
struct exchange_prev_field {
  static auto& of(H& h) noexcept { return h.prev_version_api; }
};
template <class H>
struct exchange_prev_field<H, std::void_t<decltype(std::declval<H&>().prev_api)>> {
  static auto& of(H& h) noexcept { return h.prev_api; }
};

/// The header's pointer to the next older table, whichever name the dlpack.h in force gives it.
template <class H>
auto& prev_exchange_api(H& header) noexcept {
  return exchange_prev_field<H>::of(header);
}

/// find_exchange_api() gives up after this many tables, so a cyclic chain still ends.
constexpr int max_exchange_chain = 64;

/// A table this build may call into: present and of this build's major version.
DLPACKPP_FORCE_INLINE bool usable_exchange_api(const DLPackExchangeAPI* api) noexcept {
  return api != nullptr && api->header.version.major == DLPACKPP_DLPACK_MAJOR;
}

DLPACKPP_COLD inline Error exchange_api_error(const DLPackExchangeAPI* api) {
  if (api == nullptr) return make_error(Errc::null_pointer, "exchange API table is NULL");
  return version_mismatch_error("exchange API table header.version.major",
                                api->header.version.major, api->header.version.minor,
                                " (pick the table with find_exchange_api)");
}

DLPACKPP_COLD inline Error exchange_missing_entry(const char* function) {
  return make_error(Errc::null_pointer, "exchange API table has no ", function,
                    " (the entry is NULL)");
}

/// The table can be called through `entry`: usable_exchange_api() and the entry not NULL.
template <class Entry>
DLPACKPP_FORCE_INLINE bool has_entry(const DLPackExchangeAPI* api,
                                     Entry DLPackExchangeAPI::*entry) noexcept {
  return usable_exchange_api(api) && api->*entry != nullptr;
}

/// Why has_entry() refused: the table, or its entry named `function`.
DLPACKPP_COLD inline Error entry_error(const DLPackExchangeAPI* api, const char* function) {
  return usable_exchange_api(api) ? exchange_missing_entry(function) : exchange_api_error(api);
}

DLPACKPP_COLD inline Error exchange_null_argument(const char* function, const char* what) {
  return make_error(Errc::null_pointer, function, ": ", what, " is NULL");
}

DLPACKPP_COLD inline Error exchange_producer_failed(const char* function, int rc) {
  return make_error(Errc::invalid_argument, function, " failed (returned ", rc,
                    "); the producer's error is in its own error state (for Python, the "
                    "pending exception)");
}

DLPACKPP_COLD inline Error exchange_no_result(const char* function, const char* what) {
  return make_error(Errc::null_pointer, function, " returned success but no ", what);
}

DLPACKPP_COLD inline Error impl_no_result(const char* function, const char* what) {
  return make_error(Errc::null_pointer, "Impl::", function, " returned no ", what);
}

/// What the consumer's SetError callback records for allocate_like(): the first report only.
struct AllocatorErrorSink {
  std::string kind;
  std::string message;
  bool reported = false;

  /// The C callback handed to managed_tensor_allocator; `context` is an AllocatorErrorSink.
  static void set_error(void* context, const char* kind_text, const char* message_text) noexcept {
    auto* sink = static_cast<AllocatorErrorSink*>(context);
    if (sink == nullptr || sink->reported) return;
    sink->reported = true;
#if DLPACKPP_USE_EXCEPTIONS
    try {
#endif
      sink->kind = kind_text != nullptr ? kind_text : "";
      sink->message = message_text != nullptr ? message_text : "";
#if DLPACKPP_USE_EXCEPTIONS
    } catch (...) {
      // Out of memory while copying the texts: keep what fits, never throw into C.
      sink->message.clear();
    }
#endif
  }
};

DLPACKPP_COLD inline Error allocator_failed(const AllocatorErrorSink& sink, int rc) {
  if (!sink.reported) {
    return make_error(Errc::invalid_argument, "managed_tensor_allocator failed (returned ", rc,
                      ") without calling SetError");
  }
  return make_error(Errc::invalid_argument, "managed_tensor_allocator failed: ", sink.kind, ": ",
                    sink.message);
}

/// A prototype is a description, not a tensor: data may be NULL, but rank, extents, dtype
/// and device must make sense before a producer reads them.
inline Result<void> check_prototype(const DLTensor& prototype) {
  Result<void> rank = check_rank(prototype);
  if (!rank) return rank;
  Result<std::int64_t> numel =
      try_numel({prototype.shape, static_cast<std::size_t>(prototype.ndim)});
  if (!numel) return numel.error();
  Result<void> dtype = check_dtype(prototype.dtype, 0);
  if (!dtype) return dtype;
  return check_device(prototype.device);
}

/// The allocator must honour the prototype: a tensor of another shape, dtype or device is
/// refused (and released) rather than handed to a caller who will index it by the prototype.
inline Result<void> check_made_like(const ManagedTensor& made, const DLTensor& prototype) {
  const TensorView view = made.view();
  const IntSpan shape{prototype.shape, static_cast<std::size_t>(prototype.ndim)};
  if (Result<TensorView> r = view.try_require_shape(shape); !r) return r.error();
  if (Result<TensorView> r = view.try_require_dtype(prototype.dtype); !r) return r.error();
  if (Result<TensorView> r = view.try_require_device(prototype.device); !r) return r.error();
  return {};
}

}  // namespace detail

/// The first table in the chain starting at `head` whose major version is this build's
/// (newer majors come first in a chain); NULL when there is none or `head` is NULL.
inline const DLPackExchangeAPI* find_exchange_api(const DLPackExchangeAPIHeader* head) noexcept {
  for (int hops = 0; head != nullptr && hops < detail::max_exchange_chain; ++hops) {
    if (head->version.major == DLPACKPP_DLPACK_MAJOR) {
      // The header is the table's first member, so the two addresses are the same object.
      return reinterpret_cast<const DLPackExchangeAPI*>(head);
    }
    head = detail::prev_exchange_api(*head);
  }
  return nullptr;
}

/// Imports `py_object` as an owning tensor through managed_tensor_from_py_object_no_sync
/// (no stream synchronization: launch work on current_stream()), validated as try_adopt does.
inline Result<ManagedTensor> managed_from_object(const DLPackExchangeAPI* api, void* py_object,
                                                 const ValidateOptions& options = {}) {
  constexpr const char* function = "managed_tensor_from_py_object_no_sync";
  if (DLPACKPP_UNLIKELY(
          !detail::has_entry(api, &DLPackExchangeAPI::managed_tensor_from_py_object_no_sync))) {
    return detail::entry_error(api, function);
  }
  if (DLPACKPP_UNLIKELY(py_object == nullptr)) {
    return detail::exchange_null_argument(function, "py_object");
  }
  DLManagedTensorVersioned* out = nullptr;
  const int rc = api->managed_tensor_from_py_object_no_sync(py_object, &out);
  // On failure *out is not ours to touch, whatever the producer left there.
  if (DLPACKPP_UNLIKELY(rc != 0)) return detail::exchange_producer_failed(function, rc);
  if (DLPACKPP_UNLIKELY(out == nullptr)) return detail::exchange_no_result(function, "tensor");
  return ManagedTensor::try_adopt(out, options);
}

namespace detail {
// dltensor_from_py_object_no_sync into `storage`, after the table and argument checks: the
// borrow itself, for view_from_object() and for callers that view `storage` in place.
DLPACKPP_FORCE_INLINE Result<void> borrow_into(const DLPackExchangeAPI* api, void* py_object,
                                               DLTensor& storage) {
  constexpr const char* function = "dltensor_from_py_object_no_sync";
  if (DLPACKPP_UNLIKELY(!has_entry(api, &DLPackExchangeAPI::dltensor_from_py_object_no_sync))) {
    return entry_error(api, function);
  }
  if (DLPACKPP_UNLIKELY(py_object == nullptr)) return exchange_null_argument(function, "py_object");
  const int rc = api->dltensor_from_py_object_no_sync(py_object, &storage);
  if (DLPACKPP_UNLIKELY(rc != 0)) return exchange_producer_failed(function, rc);
  return {};
}
}  // namespace detail

/// Borrows `py_object` through dltensor_from_py_object_no_sync into `storage`, then validates
/// it: no allocation and no ownership. The view keeps its own copy of `storage` (shape and
/// strides stay the producer's), so it is valid while `py_object` lives and the caller holds
/// the GIL. A DLTensor carries no flags: pass
/// flag::read_only in `options.flags` where the object may be read-only. Errc::null_pointer
/// when the table lacks this optional entry (fall back to managed_from_object()).
inline Result<TensorView> view_from_object(const DLPackExchangeAPI* api, void* py_object,
                                           DLTensor& storage, const ValidateOptions& options = {}) {
  Result<void> borrowed = detail::borrow_into(api, py_object, storage);
  if (DLPACKPP_UNLIKELY(!borrowed)) return borrowed.error();
  return TensorView::try_from(storage, options);
}

/// The producer's current work stream for `device` (launch work there to stay ordered with
/// it). NULL for CPU without asking the producer, and NULL when a (non-conforming) table
/// has no current_work_stream.
inline Result<void*> current_stream(const DLPackExchangeAPI* api, Device device) {
  if (DLPACKPP_UNLIKELY(!detail::usable_exchange_api(api))) return detail::exchange_api_error(api);
  void* stream = nullptr;
  if (device.type() == kDLCPU || api->current_work_stream == nullptr) return stream;
  const int rc = api->current_work_stream(device.type(), device.id(), &stream);
  if (DLPACKPP_UNLIKELY(rc != 0)) {
    return detail::exchange_producer_failed("current_work_stream", rc);
  }
  return stream;
}

/// A new tensor from the producer shaped like `prototype` (its dtype, ndim, shape and device
/// are read; data may be NULL). A failure the producer reports through SetError becomes
/// Errc::invalid_argument whose what() carries the producer's kind and message; a tensor
/// that does not match the prototype is released and refused (rank/shape/dtype/device_mismatch).
inline Result<ManagedTensor> allocate_like(const DLPackExchangeAPI* api, const DLTensor& prototype,
                                           const ValidateOptions& options = {}) {
  if (DLPACKPP_UNLIKELY(!detail::has_entry(api, &DLPackExchangeAPI::managed_tensor_allocator))) {
    return detail::entry_error(api, "managed_tensor_allocator");
  }
  Result<void> described = detail::check_prototype(prototype);
  if (DLPACKPP_UNLIKELY(!described)) return described.error();
  detail::AllocatorErrorSink sink;
  DLManagedTensorVersioned* out = nullptr;
  // The producer only reads the prototype; the C signature merely lacks the const.
  const int rc = api->managed_tensor_allocator(const_cast<DLTensor*>(&prototype), &out, &sink,
                                               &detail::AllocatorErrorSink::set_error);
  if (DLPACKPP_UNLIKELY(rc != 0)) return detail::allocator_failed(sink, rc);
  if (DLPACKPP_UNLIKELY(out == nullptr)) {
    return detail::exchange_no_result("managed_tensor_allocator", "tensor");
  }
  Result<ManagedTensor> made = ManagedTensor::try_adopt(out, options);
  if (!made) return made;
  Result<void> like = detail::check_made_like(*made, prototype);
  if (DLPACKPP_UNLIKELY(!like)) return like.error();  // `made` releases the tensor
  return made;
}

/// Hands `tensor` to the producer as one of its Python objects (a new reference) through
/// managed_tensor_to_py_object_no_sync. Ownership passes only on success: on failure
/// `tensor` still owns it. A success without an object is an error, but the producer has
/// the tensor by then.
inline Result<void*> to_object(const DLPackExchangeAPI* api, ManagedTensor&& tensor) {
  constexpr const char* function = "managed_tensor_to_py_object_no_sync";
  if (DLPACKPP_UNLIKELY(
          !detail::has_entry(api, &DLPackExchangeAPI::managed_tensor_to_py_object_no_sync))) {
    return detail::entry_error(api, function);
  }
  if (DLPACKPP_UNLIKELY(!tensor)) return detail::exchange_null_argument(function, "tensor");
  void* object = nullptr;
  const int rc = api->managed_tensor_to_py_object_no_sync(tensor.get(), &object);
  if (DLPACKPP_UNLIKELY(rc != 0)) return detail::exchange_producer_failed(function, rc);
  static_cast<void>(tensor.release());  // the producer owns it now
  if (DLPACKPP_UNLIKELY(object == nullptr)) return detail::exchange_no_result(function, "object");
  return object;
}

// ------------------------------------------------------------------------------------------
// Producer kit
// ------------------------------------------------------------------------------------------

namespace detail {

/// The kind (a Python exception name) the producer kit reports an Error as.
constexpr const char* error_kind(Errc code) noexcept {
  return python_error_name(python_error_class(code));
}

// Which of the optional and required Impl functions exist, with the contracted signatures.
template <class Impl, class = void>
struct has_managed_tensor_allocator : std::false_type {};
template <class Impl>
struct has_managed_tensor_allocator<
    Impl, std::void_t<decltype(Impl::managed_tensor_allocator(std::declval<const DLTensor&>()))>>
    : std::true_type {};
template <class Impl, class = void>
struct has_managed_tensor_from_py_object : std::false_type {};
template <class Impl>
struct has_managed_tensor_from_py_object<
    Impl, std::void_t<decltype(Impl::managed_tensor_from_py_object_no_sync(std::declval<void*>()))>>
    : std::true_type {};
template <class Impl, class = void>
struct has_managed_tensor_to_py_object : std::false_type {};
template <class Impl>
struct has_managed_tensor_to_py_object<
    Impl, std::void_t<decltype(Impl::managed_tensor_to_py_object_no_sync(
              std::declval<ManagedTensor&>()))>> : std::true_type {};
template <class Impl, class = void>
struct has_dltensor_from_py_object : std::false_type {};
template <class Impl>
struct has_dltensor_from_py_object<Impl, std::void_t<decltype(Impl::dltensor_from_py_object_no_sync(
                                             std::declval<void*>(), std::declval<DLTensor&>()))>>
    : std::true_type {};
template <class Impl, class = void>
struct has_current_work_stream : std::false_type {};
template <class Impl>
struct has_current_work_stream<
    Impl, std::void_t<decltype(Impl::current_work_stream(std::declval<Device>()))>>
    : std::true_type {};
template <class Impl, class = void>
struct has_set_error : std::false_type {};
template <class Impl>
struct has_set_error<Impl, std::void_t<decltype(Impl::set_error(std::declval<std::string_view>(),
                                                                std::declval<std::string_view>()))>>
    : std::true_type {};

/// An Impl function's result as a Result: a plain value succeeds, a Result passes through
/// (the non-throwing way for Impl to fail, e.g. under -fno-exceptions).
template <class T>
Result<T> as_result(T value) {
  return Result<T>(std::move(value));
}
template <class T>
Result<T> as_result(Result<T> result) {
  return result;
}

// Folds a trampoline's body into the trampoline (clang otherwise keeps the lambda apart,
// which doubles the cost of the borrow hot path's producer call).
#if defined(__GNUC__) || defined(__clang__)
#define DLPACKPP_DETAIL_LAMBDA_INLINE __attribute__((always_inline))
#else
#define DLPACKPP_DETAIL_LAMBDA_INLINE
#endif

/// Runs `body` (returning Result<void>) for a C entry point: 0 on success; on an Error or
/// any exception, `report(kind, message)` and -1. Nothing escapes into C.
template <class Report, class Body>
DLPACKPP_FORCE_INLINE int exchange_guard(Report&& report, Body&& body) noexcept {
#if DLPACKPP_USE_EXCEPTIONS
  try {
#endif
    Result<void> done = body();
    if (DLPACKPP_UNLIKELY(!done)) {
      report(error_kind(done.error().code()), done.error().what());
      return -1;
    }
    return 0;
#if DLPACKPP_USE_EXCEPTIONS
  } catch (const Error& e) {
    report(error_kind(e.code()), e.what());
  } catch (const std::bad_alloc& e) {
    report("MemoryError", e.what());
  } catch (const std::exception& e) {
    report("RuntimeError", e.what());
  } catch (...) {
    report("RuntimeError", "unknown C++ exception");
  }
  return -1;
#endif
}

/// The current_work_stream of a producer without streams: NULL for every device, as the
/// header allows for CPU-only frameworks (the entry itself must not be NULL).
inline int exchange_no_stream(DLDeviceType, std::int32_t, void** out_stream) noexcept {
  if (out_stream != nullptr) *out_stream = nullptr;
  return 0;
}

/// The C entry points make_exchange_api<Impl>() puts in the table.
template <class Impl>
struct ExchangeTrampolines {
  // Through the framework's error state; an exception from set_error itself has nowhere
  // left to go and is dropped.
  static void report(const char* kind, std::string_view message) noexcept {
#if DLPACKPP_USE_EXCEPTIONS
    try {
      Impl::set_error(kind, message);
    } catch (...) {
    }
#else
    Impl::set_error(kind, message);
#endif
  }

  static int allocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_context,
                       void (*set_error)(void*, const char*, const char*)) noexcept {
    if (out != nullptr) *out = nullptr;
    const auto through_set_error = [&](const char* kind, std::string_view message) noexcept {
      // SetError takes NUL-terminated text: every message here is a what() or a literal.
      if (set_error != nullptr) set_error(error_context, kind, message.data());
    };
    return exchange_guard(through_set_error, [&]() DLPACKPP_DETAIL_LAMBDA_INLINE -> Result<void> {
      if (out == nullptr) return exchange_null_argument("managed_tensor_allocator", "out");
      if (prototype == nullptr) {
        return exchange_null_argument("managed_tensor_allocator", "prototype");
      }
      // The consumer's own check, so Impl is never handed a prototype it would read through
      // NULL or misread (NULL shape with ndim > 0, ndim < 0, negative extents, bad dtype).
      Result<void> described = check_prototype(*prototype);
      if (!described) return described.error();
      auto made = as_result(Impl::managed_tensor_allocator(*prototype));
      if (!made) return made.error();
      if (!*made) return impl_no_result("managed_tensor_allocator", "tensor");
      *out = made->release();
      return {};
    });
  }

  static int from_py_object(void* py_object, DLManagedTensorVersioned** out) noexcept {
    if (out != nullptr) *out = nullptr;
    return exchange_guard(&report, [&]() DLPACKPP_DETAIL_LAMBDA_INLINE -> Result<void> {
      constexpr const char* function = "managed_tensor_from_py_object_no_sync";
      if (out == nullptr) return exchange_null_argument(function, "out");
      if (py_object == nullptr) return exchange_null_argument(function, "py_object");
      auto made = as_result(Impl::managed_tensor_from_py_object_no_sync(py_object));
      if (!made) return made.error();
      if (!*made) return impl_no_result(function, "tensor");
      *out = made->release();
      return {};
    });
  }

  static int to_py_object(DLManagedTensorVersioned* tensor, void** out_py_object) noexcept {
    constexpr const char* function = "managed_tensor_to_py_object_no_sync";
    if (out_py_object != nullptr) *out_py_object = nullptr;
    // Checked before anything owns it: a refused tensor stays the caller's.
    const int checked =
        exchange_guard(&report, [&]() DLPACKPP_DETAIL_LAMBDA_INLINE -> Result<void> {
          if (out_py_object == nullptr) return exchange_null_argument(function, "out_py_object");
          if (tensor == nullptr) return exchange_null_argument(function, "tensor");
          if (tensor->version.major != DLPACKPP_DLPACK_MAJOR) {
            return version_mismatch_error(
                "managed_tensor_to_py_object_no_sync: tensor version.major", tensor->version.major,
                tensor->version.minor);
          }
          ValidateOptions options;
          options.flags = tensor->flags;
          return validate(tensor->dl_tensor, options);
        });
    if (checked != 0) return checked;
    ManagedTensor owned = ManagedTensor::adopt_unchecked(tensor);
    const int rc = exchange_guard(&report, [&]() DLPACKPP_DETAIL_LAMBDA_INLINE -> Result<void> {
      auto object = as_result(Impl::managed_tensor_to_py_object_no_sync(owned));
      if (!object) return object.error();
      if (*object == nullptr) return impl_no_result(function, "object");
      *out_py_object = *object;
      return {};
    });
    if (rc != 0) {
      DLPACKPP_ASSERT(owned.get() == tensor,
                      "Impl::managed_tensor_to_py_object_no_sync took the tensor and then failed");
      static_cast<void>(owned.release());  // ownership passes only on success
    }
    // On success, whatever Impl left in `owned` it chose not to keep: released here.
    return rc;
  }

  static int dltensor_from_py_object(void* py_object, DLTensor* out) noexcept {
    return exchange_guard(&report, [&]() DLPACKPP_DETAIL_LAMBDA_INLINE -> Result<void> {
      constexpr const char* function = "dltensor_from_py_object_no_sync";
      if (DLPACKPP_UNLIKELY(out == nullptr)) return exchange_null_argument(function, "out");
      if (DLPACKPP_UNLIKELY(py_object == nullptr)) {
        return exchange_null_argument(function, "py_object");
      }
      using R = decltype(Impl::dltensor_from_py_object_no_sync(py_object, *out));
      if constexpr (std::is_void<R>::value) {
        Impl::dltensor_from_py_object_no_sync(py_object, *out);
        return {};
      } else {
        return Impl::dltensor_from_py_object_no_sync(py_object, *out);
      }
    });
  }

  static int current_work_stream(DLDeviceType type, std::int32_t id, void** out_stream) noexcept {
    if (out_stream != nullptr) *out_stream = nullptr;
    return exchange_guard(&report, [&]() DLPACKPP_DETAIL_LAMBDA_INLINE -> Result<void> {
      if (out_stream == nullptr) {
        return exchange_null_argument("current_work_stream", "out_current_stream");
      }
      auto stream = as_result(Impl::current_work_stream(Device(type, id)));
      if (!stream) return stream.error();
      *out_stream = *stream;
      return {};
    });
  }

  static constexpr DLPackDLTensorFromPyObjectNoSync dltensor_entry() noexcept {
    if constexpr (has_dltensor_from_py_object<Impl>::value) {
      return &dltensor_from_py_object;
    } else {
      return nullptr;
    }
  }
  static constexpr DLPackCurrentWorkStream stream_entry() noexcept {
    if constexpr (has_current_work_stream<Impl>::value) {
      return &current_work_stream;
    } else {
      return &exchange_no_stream;
    }
  }
};

/// One static, constant-initialized table per Impl (no initialization order to worry about).
template <class Impl>
struct ExchangeTable {
  using T = ExchangeTrampolines<Impl>;
  // Positional, so it fits either name of the header's link field.
  static constexpr DLPackExchangeAPI value = {
      {{DLPACKPP_DLPACK_MAJOR, DLPACKPP_DLPACK_MINOR}, nullptr},
      &T::allocator,
      &T::from_py_object,
      &T::to_py_object,
      T::dltensor_entry(),
      T::stream_entry(),
  };
};

}  // namespace detail

/// The exchange table for the producer `Impl`: one static table per Impl, version set to the
/// dlpack.h in force, prev_api NULL. Its C entry points call Impl's static functions named
/// after the fields (see docs/exchange-api.md) and never let an exception cross into C. Impl may
/// return Result<...> instead of a value to fail without exceptions. Without
/// dltensor_from_py_object_no_sync the entry is NULL; without current_work_stream the entry
/// reports a NULL stream for every device (the header forbids a NULL entry there).
template <class Impl>
const DLPackExchangeAPI* make_exchange_api() noexcept {
  static_assert(detail::has_managed_tensor_allocator<Impl>::value,
                "make_exchange_api<Impl>: Impl needs static ManagedTensor "
                "managed_tensor_allocator(const DLTensor& prototype)");
  static_assert(detail::has_managed_tensor_from_py_object<Impl>::value,
                "make_exchange_api<Impl>: Impl needs static ManagedTensor "
                "managed_tensor_from_py_object_no_sync(void* py_object)");
  static_assert(detail::has_managed_tensor_to_py_object<Impl>::value,
                "make_exchange_api<Impl>: Impl needs static void* "
                "managed_tensor_to_py_object_no_sync(ManagedTensor& tensor)");
  static_assert(detail::has_set_error<Impl>::value,
                "make_exchange_api<Impl>: Impl needs static void set_error(std::string_view kind, "
                "std::string_view message), which its functions' failures are reported through");
  return &detail::ExchangeTable<Impl>::value;
}

DLPACKPP_END_NAMESPACE

#undef DLPACKPP_DETAIL_LAMBDA_INLINE

#endif  // DLPACKPP_HAS_EXCHANGE_API
