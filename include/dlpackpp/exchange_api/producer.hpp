// SPDX-License-Identifier: Apache-2.0
/// @file
/// The producer side of the DLPack exchange API: make_exchange_api<Impl>() builds one static
/// table whose C entry points call Impl's functions, check what crosses the C boundary with
/// the consumer's own checks, and never let an exception out. Each trampoline's body is a
/// lambda marked DLPACKPP_LAMBDA_FORCE_INLINE: clang otherwise keeps the lambda apart, which
/// doubles the cost of the borrow hot path's producer call. Empty where dlpack.h does not
/// declare the API.
#pragma once

#include "dlpackpp/detail/config.hpp"

#if DLPACKPP_HAS_EXCHANGE_API

#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/exchange_api/consumer.hpp"
#include "dlpackpp/exchange_api/error_kinds.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/validate.hpp"

#include <cstdint>
#include <exception>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

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

/// Hands the exception being handled to `report(kind, message)`, by its class. Called only
/// from a handler; without exceptions there is none, and the body is empty.
template <class Report>
DLPACKPP_COLD void report_current_exception(Report& report) noexcept {
#if DLPACKPP_USE_EXCEPTIONS
  try {
    throw;
  } catch (const Error& e) {
    report(error_kind(e.code()), e.what());
  } catch (const std::bad_alloc& e) {
    report("MemoryError", e.what());
  } catch (const std::exception& e) {
    report("RuntimeError", e.what());
  } catch (...) {
    report("RuntimeError", "unknown C++ exception");
  }
#else
  static_cast<void>(report);
#endif
}

/// Runs `body` (returning Result<void>) for a C entry point: 0 on success; on an Error or
/// any exception, `report(kind, message)` and -1. Nothing escapes into C.
template <class Report, class Body>
DLPACKPP_FORCE_INLINE int exchange_guard(Report&& report, Body&& body) noexcept {
  DLPACKPP_DETAIL_TRY {
    Result<void> done = body();
    if (DLPACKPP_UNLIKELY(!done)) {
      report(error_kind(done.error().code()), done.error().what());
      return -1;
    }
    return 0;
  }
  DLPACKPP_DETAIL_CATCH(...) { report_current_exception(report); }
  return -1;
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
    DLPACKPP_DETAIL_TRY { Impl::set_error(kind, message); }
    DLPACKPP_DETAIL_CATCH(...) {}
  }

  static int allocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_context,
                       void (*set_error)(void*, const char*, const char*)) noexcept {
    if (out != nullptr) *out = nullptr;
    const auto through_set_error = [&](const char* kind, std::string_view message) noexcept {
      // SetError takes NUL-terminated text: every message here is a what() or a literal.
      if (set_error != nullptr) set_error(error_context, kind, message.data());
    };
    return exchange_guard(through_set_error, [&]() DLPACKPP_LAMBDA_FORCE_INLINE -> Result<void> {
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
    return exchange_guard(&report, [&]() DLPACKPP_LAMBDA_FORCE_INLINE -> Result<void> {
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
    const int checked = exchange_guard(&report, [&]() DLPACKPP_LAMBDA_FORCE_INLINE -> Result<void> {
      if (out_py_object == nullptr) return exchange_null_argument(function, "out_py_object");
      if (tensor == nullptr) return exchange_null_argument(function, "tensor");
      if (tensor->version.major != DLPACKPP_DLPACK_MAJOR) {
        return version_mismatch_error("managed_tensor_to_py_object_no_sync: tensor version.major",
                                      tensor->version.major, tensor->version.minor);
      }
      ValidateOptions options;
      options.flags = tensor->flags;
      return validate(tensor->dl_tensor, options);
    });
    if (checked != 0) return checked;
    ManagedTensor owned = ManagedTensor::adopt_unchecked(tensor);
    const int rc = exchange_guard(&report, [&]() DLPACKPP_LAMBDA_FORCE_INLINE -> Result<void> {
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
    return exchange_guard(&report, [&]() DLPACKPP_LAMBDA_FORCE_INLINE -> Result<void> {
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
    return exchange_guard(&report, [&]() DLPACKPP_LAMBDA_FORCE_INLINE -> Result<void> {
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

#endif  // DLPACKPP_HAS_EXCHANGE_API
