// SPDX-License-Identifier: Apache-2.0
/// @file
/// The consumer side of the DLPack exchange API: finding a usable table in a chain and the
/// typed wrappers over one table's entries (import, borrow, stream, allocation, hand-over),
/// each validating what the producer returns. Empty where dlpack.h does not declare the API.
///
/// Failures the producer reports (a non-zero return) become Errc::invalid_argument: the
/// request was refused by the producer. For every function but the allocator the producer's
/// own error (for Python, the pending exception) stays where the producer put it; the
/// allocator's SetError kind and message are carried in the Error's what(), as
/// "managed_tensor_allocator failed: <kind>: <message>".
#pragma once

#include "dlpackpp/detail/config.hpp"

#if DLPACKPP_HAS_EXCHANGE_API

#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/tensor_view.hpp"
#include "dlpackpp/validate.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

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
    DLPACKPP_DETAIL_TRY {
      sink->kind = kind_text != nullptr ? kind_text : "";
      sink->message = message_text != nullptr ? message_text : "";
    }
    DLPACKPP_DETAIL_CATCH(...) {
      // Out of memory while copying the texts: keep what fits, never throw into C.
      sink->message.clear();
    }
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

DLPACKPP_END_NAMESPACE

#endif  // DLPACKPP_HAS_EXCHANGE_API
