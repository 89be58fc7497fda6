// SPDX-License-Identifier: Apache-2.0
/// @file
/// Exporting C++ buffers as DLPack tensors: from_vector, from_unique_ptr, from_shared_ptr,
/// wrap and allocate. Each export is one heap block (struct + shape + strides + owner) on
/// top of the buffer itself, built by producers/export_engine.hpp.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/producers/export_engine.hpp"
#include "dlpackpp/validate.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

DLPACKPP_BEGIN_NAMESPACE

/// Exports any memory: `owner` (a lambda, a handle, a guard; anything movable) is moved into
/// the export and destroyed when the consumer calls the deleter. Empty `strides` means
/// compact row-major; `byte_offset` is where the first element sits after `data`. The parts
/// are validated first; on failure `owner` is not consumed. For example
/// `wrap(p, DataType::float32(), {2, 3}, {}, Device::cuda(0), CudaFree{p})`.
template <class Handle = DefaultManagedTensor, class Owner>
DLPACKPP_FORCE_INLINE Result<Handle> try_wrap(void* data, DataType dtype, IntSpan shape,
                                              IntSpan strides, Device device, Owner&& owner,
                                              std::uint64_t flags = 0,
                                              std::uint64_t byte_offset = 0) {
  return detail::make_export<Handle>(data, dtype, shape, strides, device,
                                     std::forward<Owner>(owner), flags, -1, byte_offset);
}
/// As try_wrap, throwing on failure.
template <class Handle = DefaultManagedTensor, class Owner>
DLPACKPP_FORCE_INLINE Handle wrap(void* data, DataType dtype, IntSpan shape, IntSpan strides,
                                  Device device, Owner&& owner, std::uint64_t flags = 0,
                                  std::uint64_t byte_offset = 0) {
  return try_wrap<Handle>(data, dtype, shape, strides, device, std::forward<Owner>(owner), flags,
                          byte_offset)
      .value();
}

/// Exports a vector's buffer without copying it; the vector lives on inside the export.
/// Errc::invalid_argument when shape's element count differs from the vector's size.
template <class Handle = DefaultManagedTensor, class T, class Alloc>
Result<Handle> try_from_vector(std::vector<T, Alloc>&& values, IntSpan shape) {
  static_assert(!std::is_same<T, bool>::value,
                "std::vector<bool> is bit-packed and cannot be exported; use std::vector<uint8_t>");
  const Result<std::int64_t> numel = detail::try_numel(shape);
  if (!numel) return numel.error();
  if (static_cast<std::uint64_t>(*numel) != values.size()) {
    return detail::make_error(Errc::invalid_argument, "shape has ", *numel,
                              " elements but the vector has ", values.size());
  }
  void* data = values.data();
  return detail::make_export<Handle>(data, dtype_of<T>, shape, {}, Device::cpu(), std::move(values),
                                     0);
}
/// As try_from_vector, throwing on failure.
template <class Handle = DefaultManagedTensor, class T, class Alloc>
Handle from_vector(std::vector<T, Alloc>&& values, IntSpan shape) {
  return try_from_vector<Handle>(std::move(values), shape).value();
}

namespace detail {
/// Elements behind a smart pointer: one for a pointer to an object; unknown (-1) for an
/// array form, which carries no size.
template <class T>
constexpr std::int64_t pointee_capacity() noexcept {
  return std::is_array<T>::value ? -1 : 1;
}
}  // namespace detail

/// Exports what a unique_ptr owns (T may be const, which makes the export READ_ONLY); D runs
/// when the consumer is done. A `unique_ptr<T>` holds one element, so the shape may have at
/// most one; a `unique_ptr<T[]>` carries no size, so the caller vouches for the shape (the
/// overload with `count` checks it).
template <class Handle = DefaultManagedTensor, class T, class D>
Result<Handle> try_from_unique_ptr(std::unique_ptr<T, D>&& ptr, IntSpan shape) {
  using E = std::remove_extent_t<T>;
  void* data = const_cast<std::remove_const_t<E>*>(ptr.get());
  return detail::make_export<Handle>(data, dtype_of<E>, shape, {}, Device::cpu(), std::move(ptr),
                                     detail::export_flags<Handle, E>(),
                                     detail::pointee_capacity<T>());
}
/// An array of `count` elements: a shape with more is Errc::invalid_argument.
template <class Handle = DefaultManagedTensor, class T, class D>
Result<Handle> try_from_unique_ptr(std::unique_ptr<T[], D>&& ptr, std::size_t count,
                                   IntSpan shape) {
  void* data = const_cast<std::remove_const_t<T>*>(ptr.get());
  return detail::make_export<Handle>(data, dtype_of<T>, shape, {}, Device::cpu(), std::move(ptr),
                                     detail::export_flags<Handle, T>(), detail::clamp_count(count));
}
/// As try_from_unique_ptr, throwing on failure.
template <class Handle = DefaultManagedTensor, class T, class D>
Handle from_unique_ptr(std::unique_ptr<T, D>&& ptr, IntSpan shape) {
  return try_from_unique_ptr<Handle>(std::move(ptr), shape).value();
}
/// As the counted try_from_unique_ptr, throwing on failure.
template <class Handle = DefaultManagedTensor, class T, class D>
Handle from_unique_ptr(std::unique_ptr<T[], D>&& ptr, std::size_t count, IntSpan shape) {
  return try_from_unique_ptr<Handle>(std::move(ptr), count, shape).value();
}

/// Exports memory a shared_ptr keeps alive; the export holds one reference until the
/// consumer is done. A shared_ptr to const makes the export READ_ONLY. A `shared_ptr<T>`
/// holds one element; a `shared_ptr<T[]>` carries no size, so the caller vouches for the
/// shape (the overload with `count` checks it).
template <class Handle = DefaultManagedTensor, class T>
Result<Handle> try_from_shared_ptr(std::shared_ptr<T> ptr, IntSpan shape) {
  using E = std::remove_extent_t<T>;
  void* data = const_cast<std::remove_const_t<E>*>(ptr.get());
  return detail::make_export<Handle>(data, dtype_of<E>, shape, {}, Device::cpu(), std::move(ptr),
                                     detail::export_flags<Handle, E>(),
                                     detail::pointee_capacity<T>());
}
/// An array of `count` elements: a shape with more is Errc::invalid_argument.
template <class Handle = DefaultManagedTensor, class T>
Result<Handle> try_from_shared_ptr(std::shared_ptr<T[]> ptr, std::size_t count, IntSpan shape) {
  void* data = const_cast<std::remove_const_t<T>*>(ptr.get());
  return detail::make_export<Handle>(data, dtype_of<T>, shape, {}, Device::cpu(), std::move(ptr),
                                     detail::export_flags<Handle, T>(), detail::clamp_count(count));
}
/// As try_from_shared_ptr, throwing on failure.
template <class Handle = DefaultManagedTensor, class T>
Handle from_shared_ptr(std::shared_ptr<T> ptr, IntSpan shape) {
  return try_from_shared_ptr<Handle>(std::move(ptr), shape).value();
}
/// As the counted try_from_shared_ptr, throwing on failure.
template <class Handle = DefaultManagedTensor, class T>
Handle from_shared_ptr(std::shared_ptr<T[]> ptr, std::size_t count, IntSpan shape) {
  return try_from_shared_ptr<Handle>(std::move(ptr), count, shape).value();
}

/// A fresh, zero-filled, compact host tensor whose data is aligned to 256 bytes, as DLPack
/// recommends, carrying `flags` (e.g. flag::read_only once filled). Only Device::cpu()
/// memory can be made here (Errc::unsupported_device). For example
/// `allocate(DataType::float32(), {2, 3})`.
template <class Handle = DefaultManagedTensor>
Result<Handle> try_allocate(DataType dtype, IntSpan shape, Device device = Device::cpu(),
                            std::uint64_t flags = 0) {
  if (device != Device::cpu()) {
    return detail::make_error(Errc::unsupported_device, "allocate makes host memory; device ",
                              device.to_string(), " needs its own allocator (export it with wrap)");
  }
  const Result<std::int64_t> numel = detail::try_numel(shape);
  if (!numel) return numel.error();
  // Padded sub-byte elements take a byte each: the buffer must hold what the export claims.
  const bool padded = (flags & flag::is_subbyte_type_padded) != 0;
  const Result<std::int64_t> bytes = dtype.try_storage_bytes(*numel, padded);
  if (!bytes) return bytes.error();
  if (!detail::fits_size_t(*bytes)) {
    return detail::make_error(Errc::size_overflow, "allocate needs ", *bytes,
                              " bytes, more than size_t holds");
  }
  detail::AlignedBuffer buffer(static_cast<std::size_t>(*bytes));
  std::memset(buffer.ptr, 0, static_cast<std::size_t>(*bytes));
  void* data = *numel == 0 ? nullptr : buffer.ptr;
  return detail::make_export<Handle>(data, dtype, shape, {}, device, std::move(buffer), flags);
}
/// As try_allocate, throwing on failure.
template <class Handle = DefaultManagedTensor>
Handle allocate(DataType dtype, IntSpan shape, Device device = Device::cpu(),
                std::uint64_t flags = 0) {
  return try_allocate<Handle>(dtype, shape, device, flags).value();
}

DLPACKPP_END_NAMESPACE
