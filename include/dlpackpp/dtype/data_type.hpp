// SPDX-License-Identifier: Apache-2.0
/// @file
/// DataType: a constexpr value type over DLDataType (code, bits, lanes), its names and
/// parsing, and the tables of the widths DLPack defines for each code.
#pragma once

#include "dlpackpp/detail/checked.hpp"
#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/text.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/error.hpp"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

/// Numeric DLDataTypeCode values, usable whichever dlpack.h is in force.
namespace dtype_code {
inline constexpr std::uint8_t int_ = 0;                ///< kDLInt
inline constexpr std::uint8_t uint = 1;                ///< kDLUInt
inline constexpr std::uint8_t float_ = 2;              ///< kDLFloat
inline constexpr std::uint8_t opaque_handle = 3;       ///< kDLOpaqueHandle
inline constexpr std::uint8_t bfloat = 4;              ///< kDLBfloat
inline constexpr std::uint8_t complex = 5;             ///< kDLComplex
inline constexpr std::uint8_t bool_ = 6;               ///< kDLBool
inline constexpr std::uint8_t float8_e3m4 = 7;         ///< kDLFloat8_e3m4
inline constexpr std::uint8_t float8_e4m3 = 8;         ///< kDLFloat8_e4m3
inline constexpr std::uint8_t float8_e4m3b11fnuz = 9;  ///< kDLFloat8_e4m3b11fnuz
inline constexpr std::uint8_t float8_e4m3fn = 10;      ///< kDLFloat8_e4m3fn
inline constexpr std::uint8_t float8_e4m3fnuz = 11;    ///< kDLFloat8_e4m3fnuz
inline constexpr std::uint8_t float8_e5m2 = 12;        ///< kDLFloat8_e5m2
inline constexpr std::uint8_t float8_e5m2fnuz = 13;    ///< kDLFloat8_e5m2fnuz
inline constexpr std::uint8_t float8_e8m0fnu = 14;     ///< kDLFloat8_e8m0fnu
inline constexpr std::uint8_t float6_e2m3fn = 15;      ///< kDLFloat6_e2m3fn
inline constexpr std::uint8_t float6_e3m2fn = 16;      ///< kDLFloat6_e3m2fn
inline constexpr std::uint8_t float4_e2m1fn = 17;      ///< kDLFloat4_e2m1fn
inline constexpr std::uint8_t count = 18;              ///< One past the last known code.
}  // namespace dtype_code

namespace detail {
// Codes 7..17 have one name and one width each.
struct NamedFloatCode {
  const char* name;
  std::uint8_t bits;
};
inline constexpr NamedFloatCode named_float_codes[] = {
    {"float8_e3m4", 8},     {"float8_e4m3", 8},   {"float8_e4m3b11fnuz", 8}, {"float8_e4m3fn", 8},
    {"float8_e4m3fnuz", 8}, {"float8_e5m2", 8},   {"float8_e5m2fnuz", 8},    {"float8_e8m0fnu", 8},
    {"float6_e2m3fn", 6},   {"float6_e3m2fn", 6}, {"float4_e2m1fn", 4}};
inline constexpr std::uint8_t first_named_float_code = dtype_code::float8_e3m4;

// Codes whose name is a prefix followed by the width in bits.
constexpr const char* width_prefix(std::uint8_t code) noexcept {
  switch (code) {
    case dtype_code::int_:
      return "int";
    case dtype_code::uint:
      return "uint";
    case dtype_code::float_:
      return "float";
    case dtype_code::opaque_handle:
      return "handle";
    case dtype_code::bfloat:
      return "bfloat";
    case dtype_code::complex:
      return "complex";
    default:
      return nullptr;
  }
}

/// The name of a type code: a width prefix ("int", "float", ...), "bool", or an fp8/fp6/fp4
/// name; "unknown" for codes DLPack does not define.
constexpr const char* code_name(std::uint8_t code) noexcept {
  if (const char* prefix = width_prefix(code)) return prefix;
  if (code == dtype_code::bool_) return "bool";
  if (code >= first_named_float_code && code < dtype_code::count) {
    return named_float_codes[code - first_named_float_code].name;
  }
  return "unknown";
}

/// The widths DLPack and its users define for each code. int/uint include 4-bit (packed
/// int4/uint4 as used by quantized models); float is IEEE half/single/double.
constexpr bool is_defined_width(std::uint8_t code, std::uint8_t bits) noexcept {
  switch (code) {
    case dtype_code::int_:
    case dtype_code::uint:
      return bits == 4 || bits == 8 || bits == 16 || bits == 32 || bits == 64;
    case dtype_code::float_:
      return bits == 16 || bits == 32 || bits == 64;
    case dtype_code::opaque_handle:
      return bits == 32 || bits == 64;
    case dtype_code::bfloat:
      return bits == 16;
    case dtype_code::complex:
      return bits == 64 || bits == 128;
    case dtype_code::bool_:
      return bits == 8;
    default:
      return code >= first_named_float_code && code < dtype_code::count &&
             named_float_codes[code - first_named_float_code].bits == bits;
  }
}

/// is_defined_width() for whole-byte widths as one table: bit w of entry `code` is set when
/// DLPack defines 8 * w bits for that code. Every uint8_t code has an entry and w < 32
/// covers every uint8_t width, so a lookup needs no range check.
struct ByteWidths {
  std::uint32_t masks[256] = {};
};
// Spelled out rather than computed by a constexpr loop over is_defined_width(), which every
// translation unit would evaluate again (18 x 31 calls); test_dtype checks that the two agree.
inline constexpr ByteWidths byte_widths = {{
    0x116,                                   // int: 8, 16, 32, 64
    0x116,                                   // uint: 8, 16, 32, 64
    0x114,                                   // float: 16, 32, 64
    0x110,                                   // opaque handle: 32, 64
    0x4,                                     // bfloat: 16
    0x10100,                                 // complex: 64, 128
    0x2,                                     // bool: 8
    0x2, 0x2, 0x2, 0x2, 0x2, 0x2, 0x2, 0x2,  // the fp8 codes: 8 (fp6 and fp4 are sub-byte)
}};

/// A valid dtype (lanes >= 1, a code/bits pair DLPack defines) of whole bytes per lane: the
/// common case, checked with one table load instead of a switch over the codes.
DLPACKPP_FORCE_INLINE bool is_valid_whole_byte(DLDataType dtype) noexcept {
  // The struct as one 32-bit word (code | bits << 8 | lanes << 16), tested in place: lanes
  // of at least one, bits a multiple of 8, and the table's bit for bits / 8.
  const std::uint32_t word =
      std::uint32_t{dtype.code} | std::uint32_t{dtype.bits} << 8 | std::uint32_t{dtype.lanes} << 16;
  return word > 0xffffu && (word & 0x700u) == 0 &&
         ((byte_widths.masks[word & 0xffu] >> ((word >> 11) & 31u)) & 1u) != 0;
}

/// Bytes for `numel` elements of bits x lanes, without overflowing on the way; false when
/// the answer itself does not fit in int64_t. Sub-byte types are packed unless `padded`.
DLPACKPP_HOST_DEVICE constexpr bool storage_bytes_of(std::uint8_t bits, std::uint16_t lanes,
                                                     std::int64_t numel, bool padded,
                                                     std::int64_t& out) noexcept {
  const std::int64_t lane_count = lanes;
  if (bits < 8 && padded) return !mul_overflows(numel, lane_count, out);
  const std::int64_t element_bits = static_cast<std::int64_t>(bits) * lane_count;
  if (element_bits % 8 == 0) return !mul_overflows(numel, element_bits / 8, out);
  if (bits >= 8) return !mul_overflows(numel, (element_bits + 7) / 8, out);
  // Packed sub-byte: ceil(numel * element_bits / 8), split so no intermediate overflows.
  std::int64_t whole = 0;
  if (mul_overflows(numel / 8, element_bits, whole)) return false;
  const std::int64_t tail = ((numel % 8) * element_bits + 7) / 8;
  return !add_overflows(whole, tail, out);
}
}  // namespace detail

/// The element type of a tensor: a DLDataType code, width in bits and vector lanes.
class DataType {
 public:
  /// float32, the most common element type.
  constexpr DataType() noexcept = default;
  /// Implicit from the C struct.
  constexpr DataType(DLDataType d) noexcept : code_(d.code), bits_(d.bits), lanes_(d.lanes) {}
  /// From its parts; `code` is a DLDataTypeCode value.
  constexpr DataType(std::uint8_t code, std::uint8_t bits, std::uint16_t lanes = 1) noexcept
      : code_(code), bits_(bits), lanes_(lanes) {}

  /// Implicit to the C struct.
  constexpr operator DLDataType() const noexcept {
    DLDataType d{};
    d.code = code_;
    d.bits = bits_;
    d.lanes = lanes_;
    return d;
  }

  /// The DLDataTypeCode value.
  constexpr std::uint8_t code() const noexcept { return code_; }
  /// Bits per lane.
  constexpr std::uint8_t bits() const noexcept { return bits_; }
  /// Vector lanes per element (1 for scalars).
  constexpr std::uint16_t lanes() const noexcept { return lanes_; }

  /// True when the code is known, lanes >= 1 and DLPack defines this code/bits pair.
  constexpr bool is_valid() const noexcept {
    return lanes_ != 0 && detail::is_defined_width(code_, bits_);
  }
  /// True for types narrower than a byte (fp4, fp6, int4), whose storage may be packed.
  constexpr bool is_subbyte() const noexcept { return bits_ < 8; }

  /// Bytes needed for `numel` elements, packed (default) or padded to one byte per lane.
  /// Errc::invalid_argument for negative numel, unsupported_dtype for zero bits or lanes,
  /// size_overflow when the answer does not fit in int64_t.
  Result<std::int64_t> try_storage_bytes(std::int64_t numel, bool padded = false) const {
    if (numel < 0) {
      return detail::make_error(Errc::invalid_argument, "numel is ", numel, ", must be >= 0");
    }
    if (bits_ == 0 || lanes_ == 0) {
      return detail::make_error(Errc::unsupported_dtype, "dtype ", to_string(),
                                " has zero bits or lanes");
    }
    std::int64_t bytes = 0;
    if (!detail::storage_bytes_of(bits_, lanes_, numel, padded, bytes)) {
      return detail::make_error(Errc::size_overflow, "storage for ", numel, " elements of ",
                                to_string(), " overflows int64");
    }
    return bytes;
  }
  /// As try_storage_bytes(), throwing on failure.
  std::int64_t storage_bytes(std::int64_t numel, bool padded = false) const {
    return try_storage_bytes(numel, padded).value();
  }

  /// "float32", "int32x4", "bool", "bfloat16", "complex64", "float8_e4m3fn"; a pair DLPack
  /// does not define prints as "dtype(code=C,bits=B,lanes=L)", which parse() refuses.
  std::string to_string() const {
    detail::TextBuilder s;
    if (!is_valid()) {
      s << "dtype(code=" << code_ << ",bits=" << bits_ << ",lanes=" << lanes_ << ')';
      return s.take();
    }
    s << detail::code_name(code_);
    if (detail::width_prefix(code_) != nullptr) s << bits_;
    if (lanes_ != 1) s << 'x' << lanes_;
    return s.take();
  }

  /// Inverse of to_string() for every valid type; Errc::invalid_argument naming the input.
  static Result<DataType> try_parse(std::string_view text) {
    DataType t;
    if (parse_scalar(text, t)) return t;
    const std::size_t x = text.rfind('x');
    std::uint64_t lanes = 0;
    if (x != std::string_view::npos && parse_scalar(text.substr(0, x), t) &&
        detail::parse_decimal(text.substr(x + 1), UINT16_MAX, lanes) && lanes > 1) {
      t.lanes_ = static_cast<std::uint16_t>(lanes);
      return t;
    }
    return detail::make_error(Errc::invalid_argument, "dtype ", detail::quoted(text),
                              " is not a DLPack data type (want e.g. \"float32\", \"int8x4\")");
  }
  /// Inverse of to_string(); throws Errc::invalid_argument naming the input.
  static DataType parse(std::string_view text) { return try_parse(text).value(); }

  /// Alias of dtype_of<T> (the spelling the docs and examples use), kept because the
  /// contract names both: the DataType of C++ type T (see dtype_traits).
  template <class T>
  static constexpr DataType of() noexcept;

  /// Signed 8-bit integer.
  static constexpr DataType int8() noexcept { return {dtype_code::int_, 8}; }
  /// Signed 16-bit integer.
  static constexpr DataType int16() noexcept { return {dtype_code::int_, 16}; }
  /// Signed 32-bit integer.
  static constexpr DataType int32() noexcept { return {dtype_code::int_, 32}; }
  /// Signed 64-bit integer.
  static constexpr DataType int64() noexcept { return {dtype_code::int_, 64}; }
  /// Unsigned 8-bit integer.
  static constexpr DataType uint8() noexcept { return {dtype_code::uint, 8}; }
  /// Unsigned 16-bit integer.
  static constexpr DataType uint16() noexcept { return {dtype_code::uint, 16}; }
  /// Unsigned 32-bit integer.
  static constexpr DataType uint32() noexcept { return {dtype_code::uint, 32}; }
  /// Unsigned 64-bit integer.
  static constexpr DataType uint64() noexcept { return {dtype_code::uint, 64}; }
  /// IEEE binary16.
  static constexpr DataType float16() noexcept { return {dtype_code::float_, 16}; }
  /// IEEE binary32.
  static constexpr DataType float32() noexcept { return {dtype_code::float_, 32}; }
  /// IEEE binary64.
  static constexpr DataType float64() noexcept { return {dtype_code::float_, 64}; }
  /// Brain floating point (8-bit exponent, 7-bit mantissa).
  static constexpr DataType bfloat16() noexcept { return {dtype_code::bfloat, 16}; }
  /// Boolean stored as one byte.
  static constexpr DataType bool_() noexcept { return {dtype_code::bool_, 8}; }
  /// Two float32 (real, imaginary).
  static constexpr DataType complex64() noexcept { return {dtype_code::complex, 64}; }
  /// Two float64 (real, imaginary).
  static constexpr DataType complex128() noexcept { return {dtype_code::complex, 128}; }
  /// FP8 with 3 exponent and 4 mantissa bits.
  static constexpr DataType float8_e3m4() noexcept { return {dtype_code::float8_e3m4, 8}; }
  /// FP8 E4M3 with infinities (IEEE-like).
  static constexpr DataType float8_e4m3() noexcept { return {dtype_code::float8_e4m3, 8}; }
  /// FP8 E4M3 with exponent bias 11, finite, unsigned-zero NaN (Graphcore).
  static constexpr DataType float8_e4m3b11fnuz() noexcept {
    return {dtype_code::float8_e4m3b11fnuz, 8};
  }
  /// FP8 E4M3, finite only (the OCP/NVIDIA "e4m3").
  static constexpr DataType float8_e4m3fn() noexcept { return {dtype_code::float8_e4m3fn, 8}; }
  /// FP8 E4M3, finite, unsigned zero (AMD).
  static constexpr DataType float8_e4m3fnuz() noexcept { return {dtype_code::float8_e4m3fnuz, 8}; }
  /// FP8 E5M2 with infinities.
  static constexpr DataType float8_e5m2() noexcept { return {dtype_code::float8_e5m2, 8}; }
  /// FP8 E5M2, finite, unsigned zero (AMD).
  static constexpr DataType float8_e5m2fnuz() noexcept { return {dtype_code::float8_e5m2fnuz, 8}; }
  /// FP8 exponent-only scale type (MX formats).
  static constexpr DataType float8_e8m0fnu() noexcept { return {dtype_code::float8_e8m0fnu, 8}; }
  /// FP6 E2M3, finite only.
  static constexpr DataType float6_e2m3fn() noexcept { return {dtype_code::float6_e2m3fn, 6}; }
  /// FP6 E3M2, finite only.
  static constexpr DataType float6_e3m2fn() noexcept { return {dtype_code::float6_e3m2fn, 6}; }
  /// FP4 E2M1, finite only.
  static constexpr DataType float4_e2m1fn() noexcept { return {dtype_code::float4_e2m1fn, 4}; }

  /// Same code, bits and lanes.
  friend constexpr bool operator==(const DataType& a, const DataType& b) noexcept {
    return a.packed() == b.packed();  // one 32-bit compare on the consumer's hot path
  }
  /// Different code, bits or lanes.
  friend constexpr bool operator!=(const DataType& a, const DataType& b) noexcept {
    return !(a == b);
  }

  /// Streams to_string(); a template so this header needs only `<iosfwd>`.
  template <class Traits>
  friend std::basic_ostream<char, Traits>& operator<<(std::basic_ostream<char, Traits>& os,
                                                      const DataType& t) {
    return os << t.to_string();
  }

 private:
  // One scalar name (no lanes suffix) into `out` with lanes 1.
  static bool parse_scalar(std::string_view name, DataType& out) {
    if (name == "bool") {
      out = bool_();
      return true;
    }
    for (std::uint8_t i = 0; i < dtype_code::count - detail::first_named_float_code; ++i) {
      if (detail::names_equal(detail::named_float_codes[i].name, name)) {
        const auto code = static_cast<std::uint8_t>(detail::first_named_float_code + i);
        out = DataType(code, detail::named_float_codes[i].bits);
        return true;
      }
    }
    for (std::uint8_t code = 0; code < detail::first_named_float_code; ++code) {
      const char* prefix = detail::width_prefix(code);
      if (prefix == nullptr) continue;
      const std::string_view p(prefix);
      std::uint64_t bits = 0;
      if (name.substr(0, p.size()) == p &&
          detail::parse_decimal(name.substr(p.size()), UINT8_MAX, bits) &&
          detail::is_defined_width(code, static_cast<std::uint8_t>(bits))) {
        out = DataType(code, static_cast<std::uint8_t>(bits));
        return true;
      }
    }
    return false;
  }

  constexpr std::uint32_t packed() const noexcept {
    return std::uint32_t{code_} | std::uint32_t{bits_} << 8 | std::uint32_t{lanes_} << 16;
  }

  std::uint8_t code_ = dtype_code::float_;
  std::uint8_t bits_ = 32;
  std::uint16_t lanes_ = 1;
};

DLPACKPP_END_NAMESPACE
