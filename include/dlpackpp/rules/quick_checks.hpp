// SPDX-License-Identifier: Apache-2.0
/// @file
/// What a tensor must satisfy, checked fast: the message-free, inline one-pass check that
/// adoption, views and validate() apply first, and the byte and kind tests an export's quick
/// path shares with it. A tensor it declines goes to rules/diagnose.hpp, never back here.
#pragma once

#include "dlpackpp/detail/checked.hpp"
#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/layout.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/validate_options.hpp"

#include <cstddef>
#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// What validation learns on the way; uninitialized until a check accepts the tensor.
struct TensorFacts {
  std::int64_t numel;
  bool contiguous;
};

/// Bytes of the elements of a tensor validation already accepted.
inline std::int64_t nbytes_of_valid(DLDataType dtype, std::int64_t numel,
                                    std::uint64_t flags) noexcept {
  std::int64_t bytes = 0;
  static_cast<void>(storage_bytes_of(dtype.bits, dtype.lanes, numel,
                                     (flags & flag::is_subbyte_type_padded) != 0, bytes));
  return bytes;
}

/// Bit `code` of a device-type mask.
constexpr std::uint64_t device_bit(std::int32_t code) noexcept { return std::uint64_t{1} << code; }

/// Every DLPack device type this library names, as a bit mask of type codes, spelled from the
/// named codes; test_validate checks that it agrees with device_name().
constexpr std::uint64_t known_device_types() noexcept {
  namespace c = device_code;
  return device_bit(c::cpu) | device_bit(c::cuda) | device_bit(c::cuda_host) |
         device_bit(c::opencl) | device_bit(c::vulkan) | device_bit(c::metal) | device_bit(c::vpi) |
         device_bit(c::rocm) | device_bit(c::rocm_host) | device_bit(c::ext_dev) |
         device_bit(c::cuda_managed) | device_bit(c::oneapi) | device_bit(c::webgpu) |
         device_bit(c::hexagon) | device_bit(c::maia) | device_bit(c::trn);
}

/// check_device() without the messages: a known type and a non-negative id, tested on the
/// struct's 64 bits at once.
DLPACKPP_FORCE_INLINE bool is_valid_device(DLDevice device) noexcept {
  const RawDevice raw = raw_device(device);
  const std::uint64_t bits = std::uint64_t{static_cast<std::uint32_t>(raw.type)} |
                             std::uint64_t{static_cast<std::uint32_t>(raw.id)} << 32;
  // One test for a negative id (the sign bit of the high half) and a type code of 64 or
  // more (any low-half bit above the mask's six), then the mask.
  constexpr std::uint64_t negative_id = std::uint64_t{1} << 63;
  constexpr std::uint64_t type_code_64_or_more = std::uint64_t{0xffffffffu} & ~std::uint64_t{63};
  constexpr std::uint64_t out_of_range = negative_id | type_code_64_or_more;
  return (bits & out_of_range) == 0 && ((known_device_types() >> (bits & 63u)) & 1u) != 0;
}

/// The kind of tensor the quick paths take: a valid whole-byte dtype on a known device, not
/// flagged IS_SUBBYTE_TYPE_PADDED (which only sub-byte types may carry).
DLPACKPP_FORCE_INLINE bool quick_kind(DLDataType dtype, DLDevice device,
                                      std::uint64_t flags) noexcept {
  return is_valid_whole_byte(dtype) && is_valid_device(device) &&
         (flags & flag::is_subbyte_type_padded) == 0;
}

/// Element count and the span (offset of the farthest element plus one) of a strided tensor
/// that is not row-major contiguous, for quick_accept(): positive extents, non-negative
/// strides, nothing overflowing. False for anything else, which diagnose() then decides.
DLPACKPP_FORCE_INLINE bool strided_extent(const std::int64_t* shape, const std::int64_t* strides,
                                          int ndim, std::int64_t& numel,
                                          std::int64_t& span) noexcept {
  numel = 1;
  span = 1;
  for (int d = 0; d < ndim; ++d) {
    const std::int64_t extent = shape[d];
    std::int64_t reach = 0;
    if (extent <= 0 || strides[d] < 0 || mul_overflows(numel, extent, numel) ||
        mul_overflows(strides[d], extent - 1, reach) || add_overflows(span, reach, span)) {
      return false;
    }
  }
  return true;
}

/// The byte checks of quick_accept() and of an export's quick path, for a non-empty tensor
/// whose elements, and the span from the first to the farthest, are each at most `count`
/// elements: data is not NULL, the byte sizes fit in int64, byte_offset fits in a pointer
/// offset, and data + byte_offset + the span does not wrap around the address space.
DLPACKPP_FORCE_INLINE bool bytes_fit(const void* data, std::uint64_t byte_offset, DLDataType dtype,
                                     std::int64_t count) noexcept {
  // Whole bytes per lane here (the quick paths declined the rest), so sizes are products.
  const std::int64_t element_bytes =
      static_cast<std::int64_t>(dtype.bits >> 3) * static_cast<std::int64_t>(dtype.lanes);
  std::int64_t bytes = 0;
  const auto base = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(data));
  if (DLPACKPP_UNLIKELY(data == nullptr)) return false;
  if (DLPACKPP_UNLIKELY(byte_offset > static_cast<std::uint64_t>(PTRDIFF_MAX))) return false;
  if (DLPACKPP_UNLIKELY(mul_overflows(count, element_bytes, bytes))) return false;
  // Both terms are below 2^63, so their sum cannot wrap; one carry check then covers
  // data + byte_offset and the span after it.
  const std::uint64_t end = base + (byte_offset + static_cast<std::uint64_t>(bytes));
#if UINTPTR_MAX < UINT64_MAX
  if (end > UINTPTR_MAX) return false;
#endif
  return end >= base;
}

/// The element count of the quick paths, proving on the way that every extent is positive:
/// add() each extent (false once the count overflows int64), then positive().
struct PositiveCount {
  std::int64_t numel = 1;
  std::int64_t signs = 0;  // every extent OR-ed: negative when one is

  /// Multiplies `extent` in; false when the count overflows.
  DLPACKPP_FORCE_INLINE bool add(std::int64_t extent) noexcept {
    signs |= extent;
    return !mul_overflows(numel, extent, numel);
  }
  /// No extent was zero or negative. A zero makes `numel - 1` negative; computed unsigned,
  /// as negative extents may have multiplied to INT64_MIN without overflowing.
  DLPACKPP_FORCE_INLINE bool positive() const noexcept {
    const auto below = static_cast<std::int64_t>(static_cast<std::uint64_t>(numel) - 1u);
    return (signs | below) >= 0;
  }
};

/// The common case, message-free and inline: a non-empty tensor of a valid whole-byte type
/// on a known device, not padded, with NULL or non-negative strides. For a row-major
/// contiguous tensor (what producers usually send) one pass over the shape counts the
/// elements and proves the layout, whose span is then the count; other strided layouts take
/// strided_extent(). Declines (false) anything else, valid or not, and diagnose() decides;
/// it never accepts what diagnose() would refuse.
DLPACKPP_FORCE_INLINE bool quick_accept(const DLTensor& t, const ValidateOptions& options,
                                        TensorFacts& facts) noexcept {
  const auto ndim = static_cast<int>(t.ndim);
  const std::int64_t* shape = t.shape;
  const std::int64_t* strides = t.strides;
  if (DLPACKPP_UNLIKELY(ndim < 0) || DLPACKPP_UNLIKELY(shape == nullptr && ndim != 0) ||
      !quick_kind(t.dtype, t.device, options.flags) ||
      (strides == nullptr && options.require_strides && ndim > 0)) {
    return false;
  }
  PositiveCount count;
  bool contiguous = true;
  bool counted = false;
  if (strides == nullptr) {
    counted = each_dim_inside_out(
        ndim, [&](int d) DLPACKPP_LAMBDA_FORCE_INLINE { return count.add(shape[d]); });
  } else {
    // Inside out, the row-major stride of a dimension is the count so far; the common case
    // matches it and never needs the extent compared with 1.
    counted = each_dim_inside_out(ndim, [&](int d) DLPACKPP_LAMBDA_FORCE_INLINE {
      if (DLPACKPP_UNLIKELY(strides[d] != count.numel) && shape[d] != 1) {
        contiguous = false;
        return false;
      }
      return count.add(shape[d]);
    });
  }
  std::int64_t numel = count.numel;
  if (DLPACKPP_LIKELY(counted)) {
    // Contiguous (or NULL strides): the span is the count. Empty tensors and negative
    // extents are declined.
    if (!count.positive() || !bytes_fit(t.data, t.byte_offset, t.dtype, numel)) return false;
  } else {
    std::int64_t span = 0;
    if (contiguous || !strided_extent(shape, strides, ndim, numel, span) ||
        !bytes_fit(t.data, t.byte_offset, t.dtype, numel > span ? numel : span)) {
      return false;
    }
  }
  const std::size_t alignment = options.alignment;
  if (alignment != 0) {
    const std::uintptr_t first =
        reinterpret_cast<std::uintptr_t>(t.data) + static_cast<std::uintptr_t>(t.byte_offset);
    if ((alignment & (alignment - 1)) != 0 || (first & (alignment - 1)) != 0) return false;
  }
  facts.numel = numel;
  facts.contiguous = contiguous;
  return true;
}

}  // namespace detail
DLPACKPP_END_NAMESPACE
