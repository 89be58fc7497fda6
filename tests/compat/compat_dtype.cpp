// SPDX-License-Identifier: Apache-2.0
// DataType against this dlpack.h: every DLPack 1.3 code round-trips through DLDataType and
// text, including the fp8/fp6/fp4 codes an old header does not declare.
#include "compat_check.hpp"

#include <complex>
#include <cstdint>
#include <string>

namespace dlpackpp_compat {

namespace {
struct NamedType {
  dlpackpp::DataType type;
  std::uint8_t code;
  std::uint8_t bits;
  const char* text;
};
}  // namespace

void check_dtype() {
  using dlpackpp::DataType;
  const NamedType all[] = {
      {DataType::int8(), 0, 8, "int8"},
      {DataType::int16(), 0, 16, "int16"},
      {DataType::int32(), 0, 32, "int32"},
      {DataType::int64(), 0, 64, "int64"},
      {DataType::uint8(), 1, 8, "uint8"},
      {DataType::uint16(), 1, 16, "uint16"},
      {DataType::uint32(), 1, 32, "uint32"},
      {DataType::uint64(), 1, 64, "uint64"},
      {DataType::float16(), 2, 16, "float16"},
      {DataType::float32(), 2, 32, "float32"},
      {DataType::float64(), 2, 64, "float64"},
      {DataType::bfloat16(), 4, 16, "bfloat16"},
      {DataType::complex64(), 5, 64, "complex64"},
      {DataType::complex128(), 5, 128, "complex128"},
      {DataType::bool_(), 6, 8, "bool"},
      {DataType::float8_e3m4(), 7, 8, "float8_e3m4"},
      {DataType::float8_e4m3(), 8, 8, "float8_e4m3"},
      {DataType::float8_e4m3b11fnuz(), 9, 8, "float8_e4m3b11fnuz"},
      {DataType::float8_e4m3fn(), 10, 8, "float8_e4m3fn"},
      {DataType::float8_e4m3fnuz(), 11, 8, "float8_e4m3fnuz"},
      {DataType::float8_e5m2(), 12, 8, "float8_e5m2"},
      {DataType::float8_e5m2fnuz(), 13, 8, "float8_e5m2fnuz"},
      {DataType::float8_e8m0fnu(), 14, 8, "float8_e8m0fnu"},
      {DataType::float6_e2m3fn(), 15, 6, "float6_e2m3fn"},
      {DataType::float6_e3m2fn(), 16, 6, "float6_e3m2fn"},
      {DataType::float4_e2m1fn(), 17, 4, "float4_e2m1fn"},
  };

  for (const NamedType& n : all) {
    const DataType t = n.type;
    DLPACKPP_COMPAT_CHECK(t.code() == n.code);
    DLPACKPP_COMPAT_CHECK(t.bits() == n.bits);
    DLPACKPP_COMPAT_CHECK(t.lanes() == 1);
    DLPACKPP_COMPAT_CHECK(t == DataType(n.code, n.bits));
    DLPACKPP_COMPAT_CHECK(t.is_subbyte() == (n.bits < 8));

    // Through this header's own struct, both ways.
    const DLDataType raw = t;
    DLPACKPP_COMPAT_CHECK(raw.code == n.code && raw.bits == n.bits && raw.lanes == 1);
    DLPACKPP_COMPAT_CHECK(DataType(raw) == t);

    // Through text, both ways, scalar and vector.
    DLPACKPP_COMPAT_CHECK(t.to_string() == n.text);
    const auto parsed = DataType::try_parse(n.text);
    DLPACKPP_COMPAT_CHECK(parsed.has_value());
    if (parsed) DLPACKPP_COMPAT_CHECK(*parsed == t);
    const DataType vec(n.code, n.bits, 4);
    DLPACKPP_COMPAT_CHECK(vec.to_string() == std::string(n.text) + "x4");
    const auto parsed_vec = DataType::try_parse(vec.to_string());
    DLPACKPP_COMPAT_CHECK(parsed_vec.has_value());
    if (parsed_vec) DLPACKPP_COMPAT_CHECK(*parsed_vec == vec);
  }

  // Enumerators every supported header (0.6 and later) declares.
  DLPACKPP_COMPAT_CHECK(DataType::float32().code() == kDLFloat);
  DLPACKPP_COMPAT_CHECK(DataType::int8().code() == kDLInt);
  DLPACKPP_COMPAT_CHECK(DataType::uint8().code() == kDLUInt);
  DLPACKPP_COMPAT_CHECK(DataType::bfloat16().code() == kDLBfloat);
  DLPACKPP_COMPAT_CHECK(DataType::complex64().code() == kDLComplex);

  DLPACKPP_COMPAT_CHECK(DataType::of<float>() == DataType::float32());
  DLPACKPP_COMPAT_CHECK(DataType::of<double>() == DataType::float64());
  DLPACKPP_COMPAT_CHECK(DataType::of<bool>() == DataType::bool_());
  DLPACKPP_COMPAT_CHECK(DataType::of<std::int8_t>() == DataType::int8());
  DLPACKPP_COMPAT_CHECK(DataType::of<std::int64_t>() == DataType::int64());
  DLPACKPP_COMPAT_CHECK(DataType::of<std::uint16_t>() == DataType::uint16());
  DLPACKPP_COMPAT_CHECK(DataType::of<std::complex<float>>() == DataType::complex64());
  DLPACKPP_COMPAT_CHECK(dlpackpp::dtype_of<std::complex<double>> == DataType::complex128());
  constexpr DataType compile_time = DataType::of<std::uint32_t>();
  static_assert(compile_time.bits() == 32, "DataType is usable in constant expressions");

  DLPACKPP_COMPAT_CHECK(DataType::float32().storage_bytes(1000) == 4000);
  DLPACKPP_COMPAT_CHECK(DataType::float4_e2m1fn().storage_bytes(3) == 2);
  DLPACKPP_COMPAT_CHECK(DataType::float4_e2m1fn().storage_bytes(3, true) == 3);

  DLPACKPP_COMPAT_CHECK_ERRC(DataType::try_parse("float128"), invalid_argument);
  DLPACKPP_COMPAT_CHECK_ERRC(DataType::try_parse("int32x"), invalid_argument);
}

}  // namespace dlpackpp_compat
