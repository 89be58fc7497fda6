// SPDX-License-Identifier: Apache-2.0
/// @file
/// validate(): the one check every entry point applies to a DLTensor before trusting it.
#pragma once

#include "dlpackpp/detail/checked.hpp"
#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/int_span.hpp"

#include <cstddef>
#include <cstdint>

namespace dlpackpp {
inline namespace v0 {

/// How strict validate() is beyond what DLPack always requires.
struct ValidateOptions {
  /// Refuse NULL strides when ndim > 0, as DLPack >= 1.2 requires of producers. Off by
  /// default because 0.x/1.0/1.1 producers (and some current ones) still send NULL.
  bool require_strides = false;
  /// Bytes that data + byte_offset must be aligned to (a power of two); 0 checks nothing.
  std::size_t alignment = 0;
  /// The managed tensor's flags: IS_SUBBYTE_TYPE_PADDED changes byte sizes and is refused
  /// on types of 8 bits or more.
  std::uint64_t flags = 0;
};

namespace detail {

// The header's own field type for shape/strides: `int64_t*` in most, `const int64_t*` in some.
using shape_field_t = decltype(DLTensor{}.shape);

/// Fills `out` with a DLTensor over caller-owned parts, after the two checks a DLTensor
/// cannot express: the rank fits in ndim and strides (when given) match the shape. Empty
/// strides become NULL, which validation then treats as compact row-major.
inline Result<void> describe_parts(void* data, DataType dtype, IntSpan shape, IntSpan strides,
                                   Device device, std::uint64_t byte_offset, DLTensor& out) {
  if (shape.size() > static_cast<std::size_t>(INT32_MAX)) {
    return make_error(Errc::invalid_ndim, "shape has ", shape.size(),
                      " dimensions, more than DLTensor::ndim can hold");
  }
  if (!strides.empty() && strides.size() != shape.size()) {
    return make_error(Errc::invalid_argument, "strides has ", strides.size(),
                      " values but shape has ", shape.size());
  }
  out = DLTensor{};
  out.data = data;
  out.device = device;
  out.ndim = static_cast<decltype(out.ndim)>(shape.size());
  out.dtype = dtype;
  out.shape = const_cast<shape_field_t>(shape.data());
  out.strides = strides.empty() ? nullptr : const_cast<shape_field_t>(strides.data());
  out.byte_offset = byte_offset;
  return {};
}

/// Element count of a tensor validation already accepted: the other extents of an empty one
/// may multiply past int64, so a zero extent is looked for first.
inline std::int64_t numel_of_valid(const DLTensor& t) noexcept {
  const auto ndim = static_cast<std::int32_t>(t.ndim);
  for (std::int32_t d = 0; d < ndim; ++d) {
    if (t.shape[d] == 0) return 0;
  }
  std::int64_t numel = 1;
  for (std::int32_t d = 0; d < ndim; ++d) numel *= t.shape[d];
  return numel;
}

/// Bytes of the elements of a tensor validation already accepted.
inline std::int64_t nbytes_of_valid(const DLTensor& t, std::uint64_t flags) noexcept {
  std::int64_t bytes = 0;
  storage_bytes_of(t.dtype.bits, t.dtype.lanes, numel_of_valid(t),
                   (flags & flag::is_subbyte_type_padded) != 0, bytes);
  return bytes;
}

/// What validation learns on the way, so views need not recompute it.
struct TensorFacts {
  std::int64_t numel = 0;
  std::int64_t nbytes = 0;
};

/// Checks `t` and fills `facts`; allocates only to describe a failure.
inline Result<void> inspect(const DLTensor& t, const ValidateOptions& options,
                            TensorFacts& facts) {
  const std::int32_t ndim = static_cast<std::int32_t>(t.ndim);
  if (ndim < 0) return make_error(Errc::invalid_ndim, "ndim is ", ndim, ", must be >= 0");
  if (ndim > 0 && t.shape == nullptr) {
    return make_error(Errc::null_shape, "shape is NULL with ndim ", ndim);
  }

  const DataType dtype(t.dtype);
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

  const Device device(t.device);
  if (!device.is_known()) {
    return make_error(Errc::unsupported_device, "device.device_type is ", device.type_code(),
                      ", not a DLPack device type");
  }
  if (device.id() < 0) {
    return make_error(Errc::unsupported_device, "device.device_id is ", device.id(),
                      ", must be >= 0");
  }

  const bool padded = (options.flags & flag::is_subbyte_type_padded) != 0;
  if (padded && !dtype.is_subbyte()) {
    return make_error(Errc::invalid_flags, "flags has IS_SUBBYTE_TYPE_PADDED but dtype ",
                      dtype.to_string(), " is not a sub-byte type");
  }

  bool has_zero_dim = false;
  for (std::int32_t d = 0; d < ndim; ++d) {
    if (t.shape[d] < 0) {
      return make_error(Errc::negative_shape, "shape[", d, "] is ", t.shape[d], ", must be >= 0");
    }
    has_zero_dim = has_zero_dim || t.shape[d] == 0;
  }
  const bool derive_strides = t.strides == nullptr && ndim > 0;
  std::int64_t numel = 1;
  if (!has_zero_dim) {
    for (std::int32_t d = 0; d < ndim; ++d) {
      if (mul_overflows(numel, t.shape[d], numel)) {
        return make_error(Errc::size_overflow, "shape[", d, "] is ", t.shape[d],
                          ", the element count overflows int64");
      }
    }
  } else {
    numel = 0;
    if (derive_strides) {
      // The view derives compact strides from max(shape, 1) of the trailing dimensions; an
      // empty tensor has no element count to bound them, and shape[0] never enters a stride.
      std::int64_t stride = 1;
      for (std::int32_t d = ndim - 1; d > 0; --d) {
        if (mul_overflows(stride, t.shape[d] == 0 ? 1 : t.shape[d], stride)) {
          return make_error(Errc::size_overflow, "shape[", d, "] is ", t.shape[d],
                            ", the compact strides of this empty tensor overflow int64");
        }
      }
    }
  }

  std::int64_t nbytes = 0;
  if (!storage_bytes_of(dtype.bits(), dtype.lanes(), numel, padded, nbytes)) {
    return make_error(Errc::size_overflow, "byte size of ", numel, " elements of ",
                      dtype.to_string(), " overflows int64");
  }

  if (derive_strides && options.require_strides) {
    return make_error(Errc::null_strides, "strides is NULL with ndim ", ndim,
                      ", DLPack >= 1.2 requires strides");
  }
  if (t.data == nullptr && numel > 0) {
    return make_error(Errc::null_data, "data is NULL with ", numel, " elements");
  }

  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  if (t.byte_offset > UINTPTR_MAX - base) {
    return make_error(Errc::offset_overflow, "byte_offset is ", t.byte_offset,
                      ", data + byte_offset wraps around the address space");
  }
  const std::uintptr_t first = base + static_cast<std::uintptr_t>(t.byte_offset);

  if (numel > 0) {
    // Element offsets of the nearest and farthest reachable elements, relative to the first.
    std::int64_t low = 0;
    std::int64_t high = 0;
    if (derive_strides) {
      high = numel - 1;
    } else {
      for (std::int32_t d = 0; d < ndim; ++d) {
        std::int64_t reach = 0;
        if (mul_overflows(t.strides[d], t.shape[d] - 1, reach) ||
            add_overflows(reach > 0 ? high : low, reach, reach > 0 ? high : low)) {
          return make_error(Errc::offset_overflow, "strides[", d, "] is ", t.strides[d],
                            ", the farthest element's offset overflows int64");
        }
      }
    }
    std::int64_t below = 0;
    std::int64_t above = 0;
    if (low == INT64_MIN || high == INT64_MAX ||
        !storage_bytes_of(dtype.bits(), dtype.lanes(), -low, padded, below) ||
        !storage_bytes_of(dtype.bits(), dtype.lanes(), high + 1, padded, above)) {
      return make_error(Errc::offset_overflow,
                        "the strided extent in bytes overflows int64 (element offsets ", low,
                        " to ", high, ")");
    }
    if (static_cast<std::uint64_t>(below) > first ||
        static_cast<std::uint64_t>(above) > UINTPTR_MAX - first) {
      return make_error(Errc::offset_overflow, "data + byte_offset is ", first,
                        ", the strided extent (", -below, " to +", above,
                        " bytes) wraps around the address space");
    }
  }

  if (options.alignment != 0) {
    if ((options.alignment & (options.alignment - 1)) != 0) {
      return make_error(Errc::invalid_argument, "alignment is ", options.alignment,
                        ", must be a power of two");
    }
    if (t.data != nullptr && first % options.alignment != 0) {
      return make_error(Errc::misaligned, "data + byte_offset is ", first,
                        ", not aligned to ", options.alignment, " bytes");
    }
  }

  facts.numel = numel;
  facts.nbytes = nbytes;
  return {};
}

}  // namespace detail

/// Checks a DLTensor the way every dlpackpp entry point does and returns the first problem:
/// ndim, shape, dtype, device, flags, sizes, strided extents, address wrap, and optionally
/// strides presence and alignment. Never throws for a bad tensor; allocates only on failure.
inline Result<void> validate(const DLTensor& tensor, const ValidateOptions& options = {}) {
  detail::TensorFacts facts;
  return detail::inspect(tensor, options, facts);
}

}  // namespace v0
}  // namespace dlpackpp
