// SPDX-License-Identifier: Apache-2.0
/// @file
/// validate(): the one check every entry point applies to a DLTensor before trusting it.
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

#include <cstddef>
#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE

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

// The checks below run only when quick_accept() declined, in the catalogue's order, so each
// failure is reported exactly as documented; message building never reaches the hot path.

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

/// The whole catalogue, check by check, reporting the first problem. Out of line and cold:
/// valid tensors are accepted by quick_accept() and never come here unless they are unusual
/// (empty, sub-byte or padded, negative strides, sizes near the int64 limits) rather than
/// wrong.
DLPACKPP_COLD inline Result<void> diagnose(const DLTensor& t, const ValidateOptions& options,
                                           TensorFacts& facts) {
#define DLPACKPP_DETAIL_TRY(expr)           \
  do {                                      \
    Result<void> dlpackpp_ok_ = (expr);     \
    if (!dlpackpp_ok_) return dlpackpp_ok_; \
  } while (false)
  DLPACKPP_DETAIL_TRY(check_rank(t));
  const DataType dtype(t.dtype);
  DLPACKPP_DETAIL_TRY(check_dtype(dtype, options.flags));
  DLPACKPP_DETAIL_TRY(check_device(Device(t.device)));
  const Result<std::int64_t> counted = check_extents(t);
  if (!counted) return counted.error();
  const std::int64_t numel = *counted;
  const bool padded = (options.flags & flag::is_subbyte_type_padded) != 0;
  DLPACKPP_DETAIL_TRY(check_byte_size(dtype, padded, numel));
  DLPACKPP_DETAIL_TRY(check_strides_present(t, options.require_strides));
  DLPACKPP_DETAIL_TRY(check_data(t, numel));
  DLPACKPP_DETAIL_TRY(check_byte_offset(t));
  const auto ndim = static_cast<int>(t.ndim);
  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  const std::uintptr_t first = base + static_cast<std::uintptr_t>(t.byte_offset);
  if (numel > 0) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    DLPACKPP_DETAIL_TRY(check_reach(t, numel, low, high));
    DLPACKPP_DETAIL_TRY(check_address_span(dtype, padded, first, low, high));
  }
  DLPACKPP_DETAIL_TRY(check_alignment(t, first, options.alignment));
#undef DLPACKPP_DETAIL_TRY
  facts.numel = numel;
  facts.contiguous = t.strides == nullptr || dense_in_order(t.shape, t.strides, ndim, false);
  return {};
}

/// Every DLPack device type this library names, as a bit mask of type codes: bit c is set
/// when device_name(c) is not NULL. A literal, not a loop over the names, because compilers
/// fold the call in every translation unit; test_validate checks that the two agree.
constexpr std::uint64_t known_device_types() noexcept { return 0x7ff9e; }

/// check_device() without the messages: a known type and a non-negative id, tested on the
/// struct's 64 bits at once.
DLPACKPP_FORCE_INLINE bool is_valid_device(DLDevice device) noexcept {
  const RawDevice raw = raw_device(device);
  const std::uint64_t bits = std::uint64_t{static_cast<std::uint32_t>(raw.type)} |
                             std::uint64_t{static_cast<std::uint32_t>(raw.id)} << 32;
  // One test for a negative id and a type code of 64 or more, then the mask.
  constexpr std::uint64_t out_of_range = 0x80000000ffffffc0u;
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

/// Checks `t` and fills `facts`; allocates only to describe a failure.
DLPACKPP_FORCE_INLINE Result<void> inspect(const DLTensor& t, const ValidateOptions& options,
                                           TensorFacts& facts) {
  if (DLPACKPP_UNLIKELY(!quick_accept(t, options, facts))) return diagnose(t, options, facts);
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

DLPACKPP_END_NAMESPACE
