// SPDX-License-Identifier: Apache-2.0
// DataType: makers, to_string/parse, validity, dtype_of<T> and dtype_traits, storage_bytes.
#include <dlpackpp/dtype.hpp>

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

namespace {

struct MyHalf {
  std::uint16_t raw;
};
struct Float32x4 {
  float v[4];
};
struct Plain {
  int x;
};
enum class Colour : std::uint8_t { red };

}  // namespace

// The extension point as a user would write it, including opting in a type the library
// refuses on its own (char, whose signedness varies).
namespace dlpackpp {
template <>
struct dtype_traits<MyHalf> {
  static constexpr DLDataType value = {kDLFloat, 16, 1};
};
template <>
struct dtype_traits<Float32x4> {
  static constexpr DLDataType value = {kDLFloat, 32, 4};
};
template <>
struct dtype_traits<char> {
  static constexpr DLDataType value = {kDLUInt, 8, 1};
};
}  // namespace dlpackpp

namespace {

using dlpackpp::DataType;
using dlpackpp::dtype_of;
using dlpackpp::Errc;

// Constant evaluation is part of the contract: these fail the build, not the run.
static_assert(DataType() == DataType::float32(), "");
static_assert(DataType::int8().code() == 0 && DataType::int8().bits() == 8, "");
static_assert(DataType(DLDataType{2, 32, 4}).lanes() == 4, "");
static_assert(static_cast<DLDataType>(DataType::bfloat16()).code == 4, "");
static_assert(DataType::float4_e2m1fn().is_subbyte() && !DataType::bool_().is_subbyte(), "");
static_assert(DataType::float8_e5m2().is_valid() && !DataType(2, 8).is_valid(), "");
static_assert(dtype_of<std::int64_t> == DataType::int64(), "");
static_assert(dtype_of<std::complex<float>> == DataType::complex64(), "");
static_assert(DataType::of<MyHalf>() == DataType::float16(), "");

struct Named {
  const char* name;
  DataType type;
  int code;  // literal DLPack numbers, so a wrong dtype_code constant is caught
  int bits;
};

// Every code/bits pair DLPack 1.3 defines; makers where the contract names one.
const Named kNamed[] = {
    {"int4", DataType(0, 4), 0, 4},
    {"int8", DataType::int8(), 0, 8},
    {"int16", DataType::int16(), 0, 16},
    {"int32", DataType::int32(), 0, 32},
    {"int64", DataType::int64(), 0, 64},
    {"uint4", DataType(1, 4), 1, 4},
    {"uint8", DataType::uint8(), 1, 8},
    {"uint16", DataType::uint16(), 1, 16},
    {"uint32", DataType::uint32(), 1, 32},
    {"uint64", DataType::uint64(), 1, 64},
    {"float16", DataType::float16(), 2, 16},
    {"float32", DataType::float32(), 2, 32},
    {"float64", DataType::float64(), 2, 64},
    {"handle32", DataType(3, 32), 3, 32},
    {"handle64", DataType(3, 64), 3, 64},
    {"bfloat16", DataType::bfloat16(), 4, 16},
    {"complex64", DataType::complex64(), 5, 64},
    {"complex128", DataType::complex128(), 5, 128},
    {"bool", DataType::bool_(), 6, 8},
    {"float8_e3m4", DataType::float8_e3m4(), 7, 8},
    {"float8_e4m3", DataType::float8_e4m3(), 8, 8},
    {"float8_e4m3b11fnuz", DataType::float8_e4m3b11fnuz(), 9, 8},
    {"float8_e4m3fn", DataType::float8_e4m3fn(), 10, 8},
    {"float8_e4m3fnuz", DataType::float8_e4m3fnuz(), 11, 8},
    {"float8_e5m2", DataType::float8_e5m2(), 12, 8},
    {"float8_e5m2fnuz", DataType::float8_e5m2fnuz(), 13, 8},
    {"float8_e8m0fnu", DataType::float8_e8m0fnu(), 14, 8},
    {"float6_e2m3fn", DataType::float6_e2m3fn(), 15, 6},
    {"float6_e3m2fn", DataType::float6_e3m2fn(), 16, 6},
    {"float4_e2m1fn", DataType::float4_e2m1fn(), 17, 4},
};

DataType with_lanes(DataType t, std::uint16_t lanes) { return DataType(t.code(), t.bits(), lanes); }

TEST(DataType, EveryNamedTypeHasItsCodeBitsAndName) {
  for (const Named& n : kNamed) {
    SCOPED_TRACE(n.name);
    EXPECT_EQ(n.type.code(), n.code);
    EXPECT_EQ(n.type.bits(), n.bits);
    EXPECT_EQ(n.type.lanes(), 1);
    EXPECT_TRUE(n.type.is_valid());
    EXPECT_EQ(n.type.to_string(), n.name);
    EXPECT_EQ(with_lanes(n.type, 4).to_string(), std::string(n.name) + "x4");
    EXPECT_EQ(DataType::parse(n.name), n.type);
  }
}

TEST(DataType, ToStringWithLanesExact) {
  EXPECT_EQ(DataType(0, 32, 4).to_string(), "int32x4");
  EXPECT_EQ(with_lanes(DataType::float4_e2m1fn(), 2).to_string(), "float4_e2m1fnx2");
  EXPECT_EQ(with_lanes(DataType::bool_(), 16).to_string(), "boolx16");
  EXPECT_EQ(with_lanes(DataType::complex128(), 65535).to_string(), "complex128x65535");
}

TEST(DataType, ToStringParseRoundTripWithLanes) {
  const std::uint16_t lanes[] = {1, 2, 3, 4, 16, 255, 256, 65535};
  for (const Named& n : kNamed) {
    for (std::uint16_t l : lanes) {
      const DataType t = with_lanes(n.type, l);
      const std::string text = t.to_string();
      const dlpackpp::Result<DataType> parsed = DataType::try_parse(text);
      ASSERT_TRUE(parsed.has_value()) << text;
      EXPECT_EQ(*parsed, t) << text;
    }
  }
}

struct Invalid {
  DataType type;
  const char* text;
};

TEST(DataType, InvalidPairsPrintTheirPartsAndDoNotParse) {
  const Invalid cases[] = {
      {DataType(2, 8), "dtype(code=2,bits=8,lanes=1)"},
      {DataType(2, 32, 0), "dtype(code=2,bits=32,lanes=0)"},
      {DataType(0, 0), "dtype(code=0,bits=0,lanes=1)"},
      {DataType(0, 7), "dtype(code=0,bits=7,lanes=1)"},
      {DataType(0, 128), "dtype(code=0,bits=128,lanes=1)"},
      {DataType(3, 16), "dtype(code=3,bits=16,lanes=1)"},
      {DataType(4, 32), "dtype(code=4,bits=32,lanes=1)"},
      {DataType(5, 32), "dtype(code=5,bits=32,lanes=1)"},
      {DataType(6, 1), "dtype(code=6,bits=1,lanes=1)"},
      {DataType(6, 16, 2), "dtype(code=6,bits=16,lanes=2)"},
      {DataType(10, 16), "dtype(code=10,bits=16,lanes=1)"},
      {DataType(17, 8), "dtype(code=17,bits=8,lanes=1)"},
      {DataType(18, 8), "dtype(code=18,bits=8,lanes=1)"},
      {DataType(255, 255, 65535), "dtype(code=255,bits=255,lanes=65535)"},
  };
  for (const Invalid& c : cases) {
    EXPECT_FALSE(c.type.is_valid()) << c.text;
    EXPECT_EQ(c.type.to_string(), c.text);
    EXPECT_FALSE(DataType::try_parse(c.text).has_value()) << c.text;
  }
}

// Checks both faces of a refused input: the Result and the exception, each naming the input.
void expect_rejected(std::string_view text) {
  SCOPED_TRACE(std::string("input: \"") + std::string(text) + "\"");
  const std::string quoted = "\"" + std::string(text) + "\"";
  const dlpackpp::Result<DataType> r = DataType::try_parse(text);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::invalid_argument);
  EXPECT_NE(std::string(r.error().what()).find(quoted), std::string::npos) << r.error().what();
  try {
    static_cast<void>(DataType::parse(text));
    ADD_FAILURE() << "parse() did not throw";
  } catch (const dlpackpp::Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
  }
}

TEST(DataType, ParseRejectsAnythingElse) {
  const char* inputs[] = {
      "",
      "float",
      "float128",
      "int7",
      "bfloat32",
      "bool8",
      "int32x1",
      "int32x0",
      "int32x01",
      "int32x65536",
      "float8_e4m3fn8",
      "Float32",
      "complex32",
      "x4",
      "int32x",
      "int32X4",
      "int32x-4",
      "int32x+4",
      "int32x4x2",
      "int 32",
      "int032",
      "int+32",
      "uint",
      "handle16",
      "float8",
      "float8_e4m3fnx1",
      "boolx",
      "xint32",
      " int32",
      "int32 ",
      "float32x4 ",
      "float4_e2m1fn_x2",
      "int32x99999999999999999999",
      "dtype(code=2,bits=32,lanes=1)",
      "float32\n",
  };
  for (const char* text : inputs) expect_rejected(text);
}

TEST(DataType, ConvertsToAndFromDLDataType) {
  const DLDataType dl = DataType(2, 32, 4);
  EXPECT_EQ(dl.code, 2);
  EXPECT_EQ(dl.bits, 32);
  EXPECT_EQ(dl.lanes, 4);
  const DataType back = DLDataType{kDLBfloat, 16, 1};
  EXPECT_EQ(back, DataType::bfloat16());
  const auto bits_of = [](DLDataType d) { return d.bits; };
  EXPECT_EQ(bits_of(DataType::complex128()), 128);
}

TEST(DataType, EqualityComparesCodeBitsAndLanes) {
  const DataType f32 = DataType::float32();
  EXPECT_TRUE(f32 == DataType(2, 32, 1));
  EXPECT_FALSE(f32 != DataType(2, 32, 1));
  const DataType others[] = {DataType(2, 32, 2), DataType(2, 64), DataType(1, 32)};
  for (const DataType& other : others) {
    EXPECT_FALSE(f32 == other) << other;
    EXPECT_TRUE(f32 != other) << other;
  }
}

TEST(DataType, StreamsItsName) {
  std::ostringstream os;
  os << DataType::float32() << ' ' << DataType(0, 8, 4) << ' ' << DataType(2, 8);
  EXPECT_EQ(os.str(), "float32 int8x4 dtype(code=2,bits=8,lanes=1)");
}

TEST(DataType, IsSubbyteMeansUnderEightBits) {
  const DataType narrow[] = {DataType::float4_e2m1fn(),
                             DataType::float6_e2m3fn(),
                             DataType::float6_e3m2fn(),
                             DataType(0, 4),
                             DataType(1, 4),
                             with_lanes(DataType::float4_e2m1fn(), 2)};
  const DataType wide[] = {DataType::int8(), DataType::bool_(), DataType::float8_e4m3fn(),
                           DataType(2, 32, 4)};
  for (const DataType& t : narrow) EXPECT_TRUE(t.is_subbyte()) << t;
  for (const DataType& t : wide) EXPECT_FALSE(t.is_subbyte()) << t;
}

// dtype_of<T> and DataType::of<T>() agree with the expectation and has_dtype<T> says yes.
// The name is passed in because typeid has no typeinfo for _Float16 in older libstdc++.
template <class T>
void expect_dtype(const char* name, DataType want) {
  SCOPED_TRACE(name);
  EXPECT_EQ(dtype_of<T>, want);
  EXPECT_EQ(DataType::of<T>(), want);
  EXPECT_TRUE(dlpackpp::has_dtype<T>);
}
#define DLPACKPP_EXPECT_DTYPE(T, want) expect_dtype<T>(#T, want)

TEST(DtypeOf, BuiltInTypes) {
  DLPACKPP_EXPECT_DTYPE(bool, DataType::bool_());
  DLPACKPP_EXPECT_DTYPE(float, DataType::float32());
  DLPACKPP_EXPECT_DTYPE(double, DataType::float64());
  DLPACKPP_EXPECT_DTYPE(std::complex<float>, DataType::complex64());
  DLPACKPP_EXPECT_DTYPE(std::complex<double>, DataType::complex128());
}

TEST(DtypeOf, EveryStandardIntegerType) {
  const DataType long_type = sizeof(long) == 8 ? DataType::int64() : DataType::int32();
  const DataType ulong_type = sizeof(long) == 8 ? DataType::uint64() : DataType::uint32();
  DLPACKPP_EXPECT_DTYPE(signed char, DataType::int8());
  DLPACKPP_EXPECT_DTYPE(short, DataType::int16());
  DLPACKPP_EXPECT_DTYPE(int, DataType::int32());
  DLPACKPP_EXPECT_DTYPE(long, long_type);
  DLPACKPP_EXPECT_DTYPE(long long, DataType::int64());
  DLPACKPP_EXPECT_DTYPE(unsigned char, DataType::uint8());
  DLPACKPP_EXPECT_DTYPE(unsigned short, DataType::uint16());
  DLPACKPP_EXPECT_DTYPE(unsigned, DataType::uint32());
  DLPACKPP_EXPECT_DTYPE(unsigned long, ulong_type);
  DLPACKPP_EXPECT_DTYPE(unsigned long long, DataType::uint64());
}

TEST(DtypeOf, FixedWidthIntegers) {
  DLPACKPP_EXPECT_DTYPE(std::int8_t, DataType::int8());
  DLPACKPP_EXPECT_DTYPE(std::int16_t, DataType::int16());
  DLPACKPP_EXPECT_DTYPE(std::int32_t, DataType::int32());
  DLPACKPP_EXPECT_DTYPE(std::int64_t, DataType::int64());
  DLPACKPP_EXPECT_DTYPE(std::uint8_t, DataType::uint8());
  DLPACKPP_EXPECT_DTYPE(std::uint16_t, DataType::uint16());
  DLPACKPP_EXPECT_DTYPE(std::uint32_t, DataType::uint32());
  DLPACKPP_EXPECT_DTYPE(std::uint64_t, DataType::uint64());
}

TEST(DtypeOf, IgnoresCvQualifiers) {
  DLPACKPP_EXPECT_DTYPE(const int, DataType::int32());
  DLPACKPP_EXPECT_DTYPE(const bool, DataType::bool_());
  DLPACKPP_EXPECT_DTYPE(volatile float, DataType::float32());
  DLPACKPP_EXPECT_DTYPE(const volatile std::complex<double>, DataType::complex128());
  DLPACKPP_EXPECT_DTYPE(const MyHalf, DataType::float16());
}

TEST(DtypeOf, UserSpecializationsOfDtypeTraits) {
  DLPACKPP_EXPECT_DTYPE(MyHalf, DataType::float16());
  DLPACKPP_EXPECT_DTYPE(Float32x4, DataType(2, 32, 4));
  EXPECT_EQ(dtype_of<Float32x4>.to_string(), "float32x4");
  DLPACKPP_EXPECT_DTYPE(char, DataType::uint8());
}

TEST(DtypeOf, Float16Builtin) {
#if DLPACKPP_HAS_FLOAT16
  DLPACKPP_EXPECT_DTYPE(_Float16, DataType::float16());
#else
  GTEST_SKIP() << "this compiler has no _Float16 in C++";
#endif
}

TEST(DtypeOf, Bf16Builtin) {
#if DLPACKPP_HAS_BF16
  DLPACKPP_EXPECT_DTYPE(__bf16, DataType::bfloat16());
#else
  GTEST_SKIP() << "this compiler has no arithmetic __bf16";
#endif
}

#if defined(__SIZEOF_INT128__)
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;
#endif

TEST(DtypeOf, HasDtypeIsFalseWithoutOne) {
  EXPECT_FALSE(dlpackpp::has_dtype<Plain>);
  EXPECT_FALSE(dlpackpp::has_dtype<const Plain>);
  EXPECT_FALSE(dlpackpp::has_dtype<Colour>);
  EXPECT_FALSE(dlpackpp::has_dtype<wchar_t>);
  EXPECT_FALSE(dlpackpp::has_dtype<char16_t>);
  EXPECT_FALSE(dlpackpp::has_dtype<char32_t>);
  EXPECT_FALSE(dlpackpp::has_dtype<long double>);
  EXPECT_FALSE(dlpackpp::has_dtype<std::complex<long double>>);
  EXPECT_FALSE(dlpackpp::has_dtype<int*>);
  EXPECT_FALSE(dlpackpp::has_dtype<void>);
#if defined(__cpp_char8_t)
  EXPECT_FALSE(dlpackpp::has_dtype<char8_t>);
#endif
#if defined(__SIZEOF_INT128__)
  // Integral under -std=gnu++, but DLPack has no 128-bit integer.
  EXPECT_FALSE(dlpackpp::has_dtype<Int128>);
  EXPECT_FALSE(dlpackpp::has_dtype<UInt128>);
#endif
}

struct Storage {
  DataType type;
  std::int64_t numel;
  bool padded;
  std::int64_t bytes;
};

constexpr DataType kFp4 = DataType::float4_e2m1fn();
constexpr DataType kFp6 = DataType::float6_e2m3fn();

TEST(DataType, StorageBytes) {
  const Storage cases[] = {
      {DataType::float32(), 0, false, 0},
      {kFp4, 0, false, 0},
      {kFp6, 0, true, 0},
      {DataType::float32(), 10, false, 40},
      {DataType::float32(), 3, true, 12},  // padding only concerns sub-byte types
      {DataType::bool_(), 3, false, 3},
      {DataType::complex128(), 2, false, 32},
      // Packed sub-byte: ceil(numel * bits / 8).
      {kFp4, 1, false, 1},
      {kFp4, 2, false, 1},
      {kFp4, 3, false, 2},
      {kFp4, 9, false, 5},
      {DataType(0, 4), 3, false, 2},
      {kFp6, 1, false, 1},
      {kFp6, 4, false, 3},
      {kFp6, 5, false, 4},
      {kFp6, 8, false, 6},
      // Padded sub-byte: one byte per lane.
      {kFp4, 1, true, 1},
      {kFp4, 3, true, 3},
      {kFp6, 4, true, 4},
      {DataType(1, 4), 7, true, 7},
      // Lanes multiply the element.
      {DataType(2, 32, 4), 10, false, 160},
      {with_lanes(kFp4, 2), 3, false, 3},
      {with_lanes(kFp4, 2), 3, true, 6},
      {with_lanes(kFp4, 3), 1, false, 2},
      {with_lanes(kFp4, 3), 2, false, 3},
      {with_lanes(kFp6, 4), 2, false, 6},
      // At the int64 edge: the largest sizes that still fit.
      {DataType::int8(), INT64_MAX, false, INT64_MAX},
      {DataType::float64(), INT64_MAX / 8, false, INT64_MAX - 7},
      {kFp4, INT64_MAX, false, INT64_MAX / 2 + 1},
      {kFp4, INT64_MAX, true, INT64_MAX},
      {kFp6, INT64_MAX, false, 6917529027641081856},
      {with_lanes(kFp4, 2), INT64_MAX, false, INT64_MAX},
  };
  for (const Storage& c : cases) {
    SCOPED_TRACE(c.type.to_string() + " x " + std::to_string(c.numel) +
                 (c.padded ? " padded" : " packed"));
    const dlpackpp::Result<std::int64_t> r = c.type.try_storage_bytes(c.numel, c.padded);
    ASSERT_TRUE(r.has_value()) << r.error().what();
    EXPECT_EQ(*r, c.bytes);
    EXPECT_EQ(c.type.storage_bytes(c.numel, c.padded), c.bytes);
  }
}

struct StorageError {
  DataType type;
  std::int64_t numel;
  bool padded;
  Errc code;
  const char* mentions;  // a part of what() that identifies the culprit
};

TEST(DataType, StorageBytesErrors) {
  const StorageError cases[] = {
      {DataType::float64(), INT64_MAX / 4, false, Errc::size_overflow, "2305843009213693951"},
      {DataType::float64(), INT64_MAX / 8 + 1, false, Errc::size_overflow, "float64"},
      {DataType::int16(), INT64_MAX, false, Errc::size_overflow, "int16"},
      {with_lanes(kFp4, 4), INT64_MAX, false, Errc::size_overflow, "float4_e2m1fnx4"},
      {with_lanes(kFp6, 2), INT64_MAX, true, Errc::size_overflow, "float6_e2m3fnx2"},
      {DataType(2, 32, 65535), INT64_MAX / 1000, false, Errc::size_overflow, "float32x65535"},
      {DataType::float32(), -1, false, Errc::invalid_argument, "numel is -1"},
      {kFp4, INT64_MIN, true, Errc::invalid_argument, "numel is -9223372036854775808"},
      {DataType(2, 0), 1, false, Errc::unsupported_dtype, "bits=0"},
      {DataType(2, 0), 0, false, Errc::unsupported_dtype, "bits=0"},
      {DataType(2, 32, 0), 1, false, Errc::unsupported_dtype, "lanes=0"},
  };
  for (const StorageError& c : cases) {
    SCOPED_TRACE(c.type.to_string() + " x " + std::to_string(c.numel));
    const dlpackpp::Result<std::int64_t> r = c.type.try_storage_bytes(c.numel, c.padded);
    ASSERT_FALSE(r.has_value()) << *r;
    EXPECT_EQ(r.error().code(), c.code);
    EXPECT_NE(std::string(r.error().what()).find(c.mentions), std::string::npos)
        << r.error().what();
    try {
      static_cast<void>(c.type.storage_bytes(c.numel, c.padded));
      ADD_FAILURE() << "storage_bytes() did not throw";
    } catch (const dlpackpp::Error& e) {
      EXPECT_EQ(e.code(), c.code);
    }
  }
}

}  // namespace

// detail::byte_widths is spelled out in the header (computing it there costs every
// translation unit a constexpr loop); it must stay exactly is_defined_width() for whole bytes.
TEST(DataType, ByteWidthTableMatchesTheDefinedWidths) {
  for (unsigned code = 0; code < 256; ++code) {
    for (unsigned w = 1; w < 32; ++w) {
      const bool defined = dlpackpp::detail::is_defined_width(static_cast<std::uint8_t>(code),
                                                              static_cast<std::uint8_t>(8 * w));
      const bool in_table = ((dlpackpp::detail::byte_widths.masks[code] >> w) & 1u) != 0;
      EXPECT_EQ(in_table, defined) << "code " << code << ", bits " << 8 * w;
    }
    EXPECT_EQ(dlpackpp::detail::byte_widths.masks[code] & 1u, 0u) << "code " << code;
  }
}
