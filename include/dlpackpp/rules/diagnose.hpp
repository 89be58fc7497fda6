// SPDX-License-Identifier: Apache-2.0
/// @file
/// What a tensor must satisfy, check by check: the catalogue that names the first problem of
/// a tensor the quick check (rules/quick_checks.hpp) declined, in the documented order, with
/// messages built only here and only on failure.
#pragma once

#include "dlpackpp/detail/checked.hpp"
#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/layout.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/rules/quick_checks.hpp"
#include "dlpackpp/validate_options.hpp"

#include <cstddef>
#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// The element count of an untrusted shape, naming a negative extent or an overflow.
inline Result<std::int64_t> try_numel(IntSpan shape) {
  bool empty = false;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) {
      return make_error(Errc::negative_shape, "shape[", d, "] is ", shape[d], ", must be >= 0");
    }
    empty = empty || shape[d] == 0;
  }
  if (empty) return std::int64_t{0};  // the other extents may multiply past int64: no count
  std::int64_t numel = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (mul_overflows(numel, shape[d], numel)) {
      return make_error(Errc::size_overflow, "shape[", d, "] is ", shape[d],
                        ", the element count overflows int64");
    }
  }
  return numel;
}

// The checks below run in diagnose(), in the catalogue's order, so each failure is reported
// exactly as documented; message building never reaches the hot path.

/// IS_SUBBYTE_TYPE_PADDED only means something for types narrower than a byte.
inline Result<void> check_padded_flag(DataType dtype, std::uint64_t flags) {
  if ((flags & flag::is_subbyte_type_padded) != 0 && !dtype.is_subbyte()) {
    return make_error(Errc::invalid_flags, "flags has IS_SUBBYTE_TYPE_PADDED but dtype ",
                      dtype.to_string(), " is not a sub-byte type");
  }
  return {};
}

inline Result<void> check_rank(const DLTensor& t) {
  const auto ndim = static_cast<std::int32_t>(t.ndim);
  if (ndim < 0) return make_error(Errc::invalid_ndim, "ndim is ", ndim, ", must be >= 0");
  if (ndim > 0 && t.shape == nullptr) {
    return make_error(Errc::null_shape, "shape is NULL with ndim ", ndim);
  }
  return {};
}

inline Result<void> check_dtype(DataType dtype, std::uint64_t flags) {
  if (dtype.bits() == 0) return make_error(Errc::unsupported_dtype, "dtype.bits is 0, must be > 0");
  if (dtype.lanes() == 0) {
    return make_error(Errc::unsupported_dtype, "dtype.lanes is 0, must be > 0");
  }
  if (dtype.code() >= dtype_code::count) {
    return make_error(Errc::unsupported_dtype, "dtype.code is ", dtype.code(),
                      ", not a DLPack type code");
  }
  if (!dtype.is_valid()) {
    return make_error(Errc::unsupported_dtype, "dtype.bits is ", dtype.bits(), " for dtype.code ",
                      dtype.code(), " (", code_name(dtype.code()),
                      "), a width DLPack does not define");
  }
  return check_padded_flag(dtype, flags);
}

inline Result<void> check_device(Device device) {
  if (!device.is_known()) {
    return make_error(Errc::unsupported_device, "device.device_type is ", device.type_code(),
                      ", not a DLPack device type");
  }
  if (device.id() < 0) {
    return make_error(Errc::unsupported_device, "device.device_id is ", device.id(),
                      ", must be >= 0");
  }
  return {};
}

/// Element count, and for an empty tensor whose strides views will derive, that those
/// strides fit (an empty tensor has no element count to bound them).
inline Result<std::int64_t> check_extents(const DLTensor& t) {
  const auto ndim = static_cast<int>(t.ndim);
  Result<std::int64_t> numel = try_numel({t.shape, static_cast<std::size_t>(ndim)});
  if (numel && *numel == 0 && t.strides == nullptr) {
    const int d = compact_strides(t.shape, ndim, nullptr);
    if (d >= 0) {
      return make_error(Errc::size_overflow, "shape[", d, "] is ", t.shape[d],
                        ", the compact strides of this empty tensor overflow int64");
    }
  }
  return numel;
}

/// The elements' bytes fit in int64.
inline Result<void> check_byte_size(DataType dtype, bool padded, std::int64_t numel) {
  std::int64_t nbytes = 0;
  if (!storage_bytes_of(dtype.bits(), dtype.lanes(), numel, padded, nbytes)) {
    return make_error(Errc::size_overflow, "byte size of ", numel, " elements of ",
                      dtype.to_string(), " overflows int64");
  }
  if (!fits_size_t(nbytes)) {
    return make_error(Errc::size_overflow, "byte size of ", numel, " elements of ",
                      dtype.to_string(), " is ", nbytes, ", more than size_t holds");
  }
  return {};
}

/// Strides are given when the options ask for DLPack >= 1.2 strictness.
inline Result<void> check_strides_present(const DLTensor& t, bool require_strides) {
  const auto ndim = static_cast<int>(t.ndim);
  if (t.strides == nullptr && ndim > 0 && require_strides) {
    return make_error(Errc::null_strides, "strides is NULL with ndim ", ndim,
                      ", DLPack >= 1.2 requires strides");
  }
  return {};
}

/// Data is only NULL when there is nothing to point at.
inline Result<void> check_data(const DLTensor& t, std::int64_t numel) {
  if (t.data == nullptr && numel > 0) {
    return make_error(Errc::null_data, "data is NULL with ", numel, " elements");
  }
  return {};
}

/// data + byte_offset neither wraps around the address space nor exceeds what a pointer
/// offset can hold (past PTRDIFF_MAX it is undefined even where the address would not wrap).
inline Result<void> check_byte_offset(const DLTensor& t) {
  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  if (t.byte_offset > UINTPTR_MAX - base) {
    return make_error(Errc::offset_overflow, "byte_offset is ", t.byte_offset,
                      ", data + byte_offset wraps around the address space");
  }
  if (t.byte_offset > static_cast<std::uint64_t>(PTRDIFF_MAX)) {
    return make_error(Errc::offset_overflow, "byte_offset is ", t.byte_offset,
                      ", more than a pointer offset can hold (", PTRDIFF_MAX, ")");
  }
  return {};
}

/// Offsets (in elements, relative to the first) of the nearest and farthest elements.
inline Result<void> check_reach(const DLTensor& t, std::int64_t numel, std::int64_t& low,
                                std::int64_t& high) {
  low = 0;
  high = numel - 1;
  if (t.strides == nullptr) return {};
  high = 0;
  for (std::int32_t d = 0; d < static_cast<std::int32_t>(t.ndim); ++d) {
    std::int64_t reach = 0;
    if (mul_overflows(t.strides[d], t.shape[d] - 1, reach) ||
        add_overflows(reach > 0 ? high : low, reach, reach > 0 ? high : low)) {
      return make_error(Errc::offset_overflow, "strides[", d, "] is ", t.strides[d],
                        ", the farthest element's offset overflows int64");
    }
  }
  return {};
}

/// Every address from the nearest to the farthest byte stays inside the address space.
inline Result<void> check_address_span(DataType dtype, bool padded, std::uintptr_t first,
                                       std::int64_t low, std::int64_t high) {
  std::int64_t below = 0;
  std::int64_t above = 0;
  if (low == INT64_MIN || high == INT64_MAX ||
      !storage_bytes_of(dtype.bits(), dtype.lanes(), -low, padded, below) ||
      !storage_bytes_of(dtype.bits(), dtype.lanes(), high + 1, padded, above)) {
    return make_error(Errc::offset_overflow,
                      "the strided extent in bytes overflows int64 (element offsets ", low, " to ",
                      high, ")");
  }
  if (static_cast<std::uint64_t>(below) > first ||
      static_cast<std::uint64_t>(above) > UINTPTR_MAX - first) {
    return make_error(Errc::offset_overflow, "data + byte_offset is ", first,
                      ", the strided extent (", -below, " to +", above,
                      " bytes) wraps around the address space");
  }
  return {};
}

inline Result<void> check_alignment(const DLTensor& t, std::uintptr_t first,
                                    std::size_t alignment) {
  if (alignment == 0) return {};
  if ((alignment & (alignment - 1)) != 0) {
    return make_error(Errc::invalid_argument, "alignment is ", alignment,
                      ", must be a power of two");
  }
  if (t.data != nullptr && (first & (alignment - 1)) != 0) {
    return make_error(Errc::misaligned, "data + byte_offset is ", first, ", not aligned to ",
                      alignment, " bytes");
  }
  return {};
}

/// The whole catalogue, check by check, reporting the first problem and filling `facts` for a
/// tensor it accepts. Out of line and cold: valid tensors are accepted by quick_accept() and
/// come here only when they are unusual (empty, sub-byte or padded, negative strides, sizes
/// near the int64 limits) rather than wrong, or when an export that carries its own strides
/// (which its quick path does not take) is checked.
DLPACKPP_COLD inline Result<void> diagnose(const DLTensor& t, const ValidateOptions& options,
                                           TensorFacts& facts) {
#define DLPACKPP_DETAIL_CHECK(expr)         \
  do {                                      \
    Result<void> dlpackpp_ok_ = (expr);     \
    if (!dlpackpp_ok_) return dlpackpp_ok_; \
  } while (false)
  DLPACKPP_DETAIL_CHECK(check_rank(t));
  const DataType dtype(t.dtype);
  DLPACKPP_DETAIL_CHECK(check_dtype(dtype, options.flags));
  DLPACKPP_DETAIL_CHECK(check_device(Device(t.device)));
  const Result<std::int64_t> counted = check_extents(t);
  if (!counted) return counted.error();
  const std::int64_t numel = *counted;
  const bool padded = (options.flags & flag::is_subbyte_type_padded) != 0;
  DLPACKPP_DETAIL_CHECK(check_byte_size(dtype, padded, numel));
  DLPACKPP_DETAIL_CHECK(check_strides_present(t, options.require_strides));
  DLPACKPP_DETAIL_CHECK(check_data(t, numel));
  DLPACKPP_DETAIL_CHECK(check_byte_offset(t));
  const auto ndim = static_cast<int>(t.ndim);
  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  const std::uintptr_t first = base + static_cast<std::uintptr_t>(t.byte_offset);
  if (numel > 0) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    DLPACKPP_DETAIL_CHECK(check_reach(t, numel, low, high));
    DLPACKPP_DETAIL_CHECK(check_address_span(dtype, padded, first, low, high));
  }
  DLPACKPP_DETAIL_CHECK(check_alignment(t, first, options.alignment));
#undef DLPACKPP_DETAIL_CHECK
  facts.numel = numel;
  facts.contiguous = t.strides == nullptr || dense_in_order(t.shape, t.strides, ndim, false);
  return {};
}

}  // namespace detail
DLPACKPP_END_NAMESPACE
