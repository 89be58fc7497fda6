// SPDX-License-Identifier: Apache-2.0
// validate(): each rejection's Errc and message (also via TensorView), and edge cases it accepts.
#include <gtest/gtest.h>

#include "support/expect_error.hpp"

#include <cstdint>
#include <dlpackpp/tensor_view.hpp>
#include <dlpackpp/validate.hpp>
#include <functional>
#include <iterator>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace {

using dlpackpp_test::thrown_by;

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp::Error;
using dlpackpp::TensorView;
using dlpackpp::ValidateOptions;
namespace dtype_code = dlpackpp::dtype_code;
namespace flag = dlpackpp::flag;

// Addresses validate() only does arithmetic on; nothing here is ever dereferenced.
void* fake_address(std::uintptr_t address) { return reinterpret_cast<void*>(address); }

// A valid float32 2x3x4 row-major tensor that each case bends in one way. Not copyable:
// the DLTensor points into the object itself.
struct Probe {
  std::int64_t shape[4] = {2, 3, 4, 1};
  std::int64_t strides[4] = {12, 4, 1, 1};
  float storage[24] = {};
  DLTensor t{};
  ValidateOptions options{};

  Probe() {
    t.data = storage;
    t.device = Device::cpu();
    t.ndim = 3;
    t.dtype = DataType::float32();
    t.shape = shape;
    t.strides = strides;
  }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  // Replaces shape (and strides, or NULL strides when `new_strides` is empty) and ndim.
  void set_layout(std::vector<std::int64_t> new_shape, std::vector<std::int64_t> new_strides) {
    t.ndim = static_cast<std::int32_t>(new_shape.size());
    for (std::size_t d = 0; d < new_shape.size(); ++d) shape[d] = new_shape[d];
    for (std::size_t d = 0; d < new_strides.size(); ++d) strides[d] = new_strides[d];
    t.strides = new_strides.empty() ? nullptr : strides;
  }
};

struct Case {
  std::string name;
  std::function<void(Probe&)> bend;
  Errc code;                          // unused for accepted cases
  std::vector<std::string> mentions;  // what() must name the field and the value
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }
// Failures print the case's name instead of its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string pair_name(std::uint8_t code, std::uint8_t bits) {
  return "code" + std::to_string(code) + "_bits" + std::to_string(bits);
}

// Code/bits pairs DLPack does not define, one or more per code: bool is 8 bits, bfloat 16,
// complex 64/128, fp8 codes 8, fp6 codes 6, fp4 4, float 16/32/64, int/uint 4..64 by powers.
std::vector<std::pair<std::uint8_t, std::uint8_t>> undefined_pairs() {
  std::vector<std::pair<std::uint8_t, std::uint8_t>> pairs = {
      {dtype_code::bool_, 1},         {dtype_code::bool_, 16},
      {dtype_code::bfloat, 8},        {dtype_code::bfloat, 32},
      {dtype_code::complex, 32},      {dtype_code::complex, 16},
      {dtype_code::complex, 255},     {dtype_code::float_, 8},
      {dtype_code::float_, 128},      {dtype_code::int_, 7},
      {dtype_code::int_, 128},        {dtype_code::uint, 7},
      {dtype_code::uint, 1},          {dtype_code::opaque_handle, 16},
      {dtype_code::float6_e2m3fn, 8}, {dtype_code::float6_e3m2fn, 4},
      {dtype_code::float4_e2m1fn, 8}, {dtype_code::float4_e2m1fn, 6}};
  for (std::uint8_t code = dtype_code::float8_e3m4; code <= dtype_code::float8_e8m0fnu; ++code) {
    pairs.emplace_back(code, std::uint8_t{16});
    pairs.emplace_back(code, std::uint8_t{4});
  }
  return pairs;
}

std::vector<Case> rejections() {
  std::vector<Case> cases = {
      {"ndim_minus_one", [](Probe& p) { p.t.ndim = -1; }, Errc::invalid_ndim, {"ndim is -1"}},
      {"ndim_int32_min",
       [](Probe& p) { p.t.ndim = INT32_MIN; },
       Errc::invalid_ndim,
       {"ndim is -2147483648"}},
      {"null_shape",
       [](Probe& p) { p.t.shape = nullptr; },
       Errc::null_shape,
       {"shape is NULL", "ndim 3"}},
      {"negative_shape",
       [](Probe& p) { p.shape[2] = -3; },
       Errc::negative_shape,
       {"shape[2] is -3, must be >= 0"}},
      {"negative_shape_min",
       [](Probe& p) { p.shape[0] = INT64_MIN; },
       Errc::negative_shape,
       {"shape[0] is -9223372036854775808"}},
      {"null_data",
       [](Probe& p) { p.t.data = nullptr; },
       Errc::null_data,
       {"data is NULL", "24 elements"}},
      {"null_data_zero_dim",
       [](Probe& p) {
         p.set_layout({}, {});
         p.t.data = nullptr;
       },
       Errc::null_data,
       {"data is NULL", "1 elements"}},
      {"bits_zero",
       [](Probe& p) { p.t.dtype.bits = 0; },
       Errc::unsupported_dtype,
       {"dtype.bits is 0"}},
      {"lanes_zero",
       [](Probe& p) { p.t.dtype.lanes = 0; },
       Errc::unsupported_dtype,
       {"dtype.lanes is 0"}},
      {"code_18",
       [](Probe& p) { p.t.dtype.code = 18; },
       Errc::unsupported_dtype,
       {"dtype.code is 18"}},
      {"code_255",
       [](Probe& p) { p.t.dtype.code = 255; },
       Errc::unsupported_dtype,
       {"dtype.code is 255"}},
      {"device_id_negative",
       [](Probe& p) { p.t.device = Device::cuda(-1); },
       Errc::unsupported_device,
       {"device.device_id is -1"}},
      {"element_count",
       [](Probe& p) {
         p.set_layout({1, 1LL << 32, 1LL << 32}, {});
       },
       Errc::size_overflow,
       {"shape[2] is 4294967296", "element count"}},
      {"element_count_strided",
       [](Probe& p) {
         p.set_layout({1LL << 31, 1LL << 31, 4}, {1, 1, 1});
       },
       Errc::size_overflow,
       {"shape[2] is 4", "element count"}},
      {"byte_size",
       [](Probe& p) { p.set_layout({1LL << 62}, {1}); },
       Errc::size_overflow,
       {"byte size of 4611686018427387904 elements of float32"}},
      {"byte_size_complex128",
       [](Probe& p) {
         p.set_layout({1LL << 60}, {1});
         p.t.dtype = DataType::complex128();
       },
       Errc::size_overflow,
       {"byte size of 1152921504606846976 elements of complex128"}},
      {"compact_strides_of_empty",
       [](Probe& p) {
         p.set_layout({2, INT64_MAX, 3, 0}, {});
       },
       Errc::size_overflow,
       {"shape[1] is 9223372036854775807"}},
      {"stride_extent",
       [](Probe& p) {
         p.set_layout({4, 1, 1}, {INT64_MAX / 2, 1, 1});
       },
       Errc::offset_overflow,
       {"strides[0] is 4611686018427387903"}},
      {"stride_extent_negative",
       [](Probe& p) {
         p.set_layout({2, 4}, {4, INT64_MIN / 2});
       },
       Errc::offset_overflow,
       {"strides[1] is -4611686018427387904"}},
      {"stride_extent_sum",
       [](Probe& p) {
         p.set_layout({2, 2}, {INT64_MAX, 1});
       },
       Errc::offset_overflow,
       {"strides[1] is 1"}},
      {"stride_extent_bytes",
       [](Probe& p) { p.set_layout({2}, {INT64_MAX / 4}); },
       Errc::offset_overflow,
       {"strided extent in bytes", "element offsets 0 to 2305843009213693951"}},
      {"extent_wraps_above",
       [](Probe& p) {
         p.t.data = fake_address(UINTPTR_MAX - 4095);
         p.set_layout({2048}, {1});
       },
       Errc::offset_overflow,
       {"wraps around the address space", "+8192 bytes"}},
      {"extent_wraps_below",
       [](Probe& p) {
         p.t.data = fake_address(0x1000);
         p.set_layout({2}, {-1025});
       },
       Errc::offset_overflow,
       {"data + byte_offset is 4096", "-4100"}},
      {"byte_offset_wraps",
       [](Probe& p) { p.t.byte_offset = UINT64_MAX; },
       Errc::offset_overflow,
       {"byte_offset is 18446744073709551615"}},
      {"byte_offset_past_ptrdiff_max",  // the address fits, but no pointer offset does
       [](Probe& p) {
         p.t.data = fake_address(0x1000);
         p.t.byte_offset = static_cast<std::uint64_t>(PTRDIFF_MAX) + 1;
       },
       Errc::offset_overflow,
       {"more than a pointer offset can hold"}},
      {"byte_offset_wraps_fake",
       [](Probe& p) {
         p.t.data = fake_address(UINTPTR_MAX - 15);
         p.t.byte_offset = 16;
       },
       Errc::offset_overflow,
       {"byte_offset is 16"}},
      {"null_strides_required",
       [](Probe& p) {
         p.t.strides = nullptr;
         p.options.require_strides = true;
       },
       Errc::null_strides,
       {"strides is NULL with ndim 3"}},
      {"misaligned",
       [](Probe& p) {
         p.t.data = fake_address(0x10000);
         p.t.byte_offset = 4;
         p.options.alignment = 64;
       },
       Errc::misaligned,
       {"data + byte_offset is 65540", "aligned to 64 bytes"}},
      {"misaligned_data_itself",
       [](Probe& p) {
         p.t.data = fake_address(0x10008);
         p.options.alignment = 16;
       },
       Errc::misaligned,
       {"data + byte_offset is 65544", "aligned to 16 bytes"}},
      {"alignment_not_power_of_two",
       [](Probe& p) { p.options.alignment = 48; },
       Errc::invalid_argument,
       {"alignment is 48", "power of two"}},
      {"padded_on_float32",
       [](Probe& p) { p.options.flags = flag::is_subbyte_type_padded; },
       Errc::invalid_flags,
       {"IS_SUBBYTE_TYPE_PADDED", "float32"}},
      {"padded_on_int8",
       [](Probe& p) {
         p.t.dtype = DataType::int8();
         p.options.flags = flag::is_subbyte_type_padded | flag::read_only;
       },
       Errc::invalid_flags,
       {"IS_SUBBYTE_TYPE_PADDED", "int8"}},
      {"padded_on_fp8",
       [](Probe& p) {
         p.t.dtype = DataType::float8_e4m3fn();
         p.options.flags = flag::is_subbyte_type_padded;
       },
       Errc::invalid_flags,
       {"IS_SUBBYTE_TYPE_PADDED", "float8_e4m3fn"}},
  };
  for (const auto& [code, bits] : undefined_pairs()) {
    const std::uint8_t c = code;
    const std::uint8_t b = bits;
    cases.push_back({"undefined_" + pair_name(c, b),
                     [c, b](Probe& p) {
                       p.t.dtype.code = c;
                       p.t.dtype.bits = b;
                     },
                     Errc::unsupported_dtype,
                     {"dtype.bits is " + std::to_string(b), "dtype.code " + std::to_string(c)}});
  }
  for (const std::int32_t type : {0, 5, 6, 19, 99, -1, INT32_MAX}) {
    const std::string number = type < 0 ? "minus" + std::to_string(-static_cast<std::int64_t>(type))
                                        : std::to_string(type);
    cases.push_back({"device_type_" + number,
                     [type](Probe& p) { p.t.device = Device::from_code(type, 0); },
                     Errc::unsupported_device,
                     {"device.device_type is " + std::to_string(type)}});
  }
  return cases;
}

class Rejects : public ::testing::TestWithParam<Case> {};

TEST_P(Rejects, WithCodeAndMessageEverywhere) {
  Probe p;
  GetParam().bend(p);

  const dlpackpp::Result<void> result = dlpackpp::validate(p.t, p.options);
  ASSERT_FALSE(result.has_value());
  EXPECT_FALSE(static_cast<bool>(result));
  const Error& error = result.error();
  EXPECT_EQ(error.code(), GetParam().code) << dlpackpp::to_string(error.code());
  const std::string what = error.what();
  EXPECT_EQ(what.rfind("dlpackpp: ", 0), 0u) << what;
  for (const std::string& mention : GetParam().mentions) {
    EXPECT_NE(what.find(mention), std::string::npos)
        << "'" << what << "' lacks '" << mention << "'";
  }

  dlpackpp::Result<TensorView> tried = TensorView::try_from(p.t, p.options);
  ASSERT_FALSE(tried.has_value());
  EXPECT_EQ(tried.error().code(), error.code());
  EXPECT_STREQ(tried.error().what(), what.c_str());

  const Error from_constructor = thrown_by([&] { TensorView view(p.t, p.options); });
  EXPECT_EQ(from_constructor.code(), error.code());
  EXPECT_STREQ(from_constructor.what(), what.c_str());

  // value() on the failed Result rethrows the same Error.
  EXPECT_EQ(thrown_by([&] { result.value(); }).code(), error.code());
}

INSTANTIATE_TEST_SUITE_P(Validate, Rejects, ::testing::ValuesIn(rejections()), case_name);

std::vector<Case> acceptances() {
  return {
      {"base", [](Probe&) {}, {}, {}},
      {"null_strides_by_default", [](Probe& p) { p.t.strides = nullptr; }, {}, {}},
      {"strides_when_required", [](Probe& p) { p.options.require_strides = true; }, {}, {}},
      {"zero_dim_null_strides_when_required",
       [](Probe& p) {
         p.set_layout({}, {});
         p.t.shape = nullptr;
         p.options.require_strides = true;
       },
       {},
       {}},
      {"zero_size_null_data",
       [](Probe& p) {
         p.set_layout({3, 0, 2}, {0, -7, 1 << 30});
         p.t.data = nullptr;
         p.t.byte_offset = 12;
       },
       {},
       {}},
      {"empty_null_strides_huge_leading_dim",
       [](Probe& p) {
         p.set_layout({INT64_MAX, 0, 2}, {});
         p.t.data = nullptr;
       },
       {},
       {}},
      {"empty_null_strides_largest_stride",
       [](Probe& p) {
         p.set_layout({2, INT64_MAX, 0}, {});
         p.t.data = nullptr;
       },
       {},
       {}},
      {"size_one_dims_any_stride",
       [](Probe& p) {
         p.set_layout({1, 24, 1}, {INT64_MAX, 1, INT64_MIN});
       },
       {},
       {}},
      {"negative_stride_in_range",
       [](Probe& p) {
         p.t.data = p.storage + 23;
         p.set_layout({2, 3, 4}, {-12, -4, -1});
       },
       {},
       {}},
      {"aligned",
       [](Probe& p) {
         p.t.data = fake_address(0x10000);
         p.t.byte_offset = 64;
         p.options.alignment = 64;
       },
       {},
       {}},
      {"alignment_one", [](Probe& p) { p.options.alignment = 1; }, {}, {}},
      {"alignment_ignored_for_null_data",
       [](Probe& p) {
         p.set_layout({0}, {1});
         p.t.data = nullptr;
         p.t.byte_offset = 3;
         p.options.alignment = 64;
       },
       {},
       {}},
      {"near_top_of_address_space",
       [](Probe& p) {
         p.t.data = fake_address(UINTPTR_MAX - 4095);
         p.set_layout({512}, {1});
       },
       {},
       {}},
      {"padded_fp4",
       [](Probe& p) {
         p.t.dtype = DataType::float4_e2m1fn();
         p.options.flags = flag::is_subbyte_type_padded;
       },
       {},
       {}},
      {"padded_int4x2",
       [](Probe& p) {
         p.t.dtype = DataType(dtype_code::int_, 4, 2);
         p.options.flags = flag::is_subbyte_type_padded;
       },
       {},
       {}},
      {"unknown_flag_bits",
       [](Probe& p) { p.options.flags = flag::read_only | (std::uint64_t{1} << 40); },
       {},
       {}},
      {"vector_lanes", [](Probe& p) { p.t.dtype = DataType(dtype_code::float_, 32, 4); }, {}, {}},
      {"device_trn_7", [](Probe& p) { p.t.device = Device::trn(7); }, {}, {}},
      {"device_id_max", [](Probe& p) { p.t.device = Device::cuda(INT32_MAX); }, {}, {}},
  };
}

class Accepts : public ::testing::TestWithParam<Case> {};

TEST_P(Accepts, EverywhereWithoutThrowing) {
  Probe p;
  GetParam().bend(p);
  const dlpackpp::Result<void> result = dlpackpp::validate(p.t, p.options);
  EXPECT_TRUE(result.has_value()) << result.error().what();
  EXPECT_TRUE(TensorView::try_from(p.t, p.options).has_value());
  EXPECT_NO_THROW(TensorView(p.t, p.options));
}

INSTANTIATE_TEST_SUITE_P(Validate, Accepts, ::testing::ValuesIn(acceptances()), case_name);

// Every device type DLPack 1.3 defines, with a nonzero ordinal.
TEST(Validate, AcceptsEveryKnownDeviceType) {
  for (const std::int32_t type : {1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}) {
    Probe p;
    p.t.device = Device::from_code(type, 3);
    const dlpackpp::Result<void> result = dlpackpp::validate(p.t);
    EXPECT_TRUE(result.has_value()) << "device type " << type << ": " << result.error().what();
  }
}

// The first problem wins, so a caller fixing one field at a time sees them in a stable order.
TEST(Validate, ReportsTheFirstProblem) {
  Probe p;
  p.t.ndim = -2;
  p.t.dtype.bits = 0;
  p.t.data = nullptr;
  EXPECT_EQ(dlpackpp::validate(p.t).error().code(), Errc::invalid_ndim);
  p.t.ndim = 3;
  EXPECT_EQ(dlpackpp::validate(p.t).error().code(), Errc::unsupported_dtype);
  p.t.dtype.bits = 32;
  EXPECT_EQ(dlpackpp::validate(p.t).error().code(), Errc::null_data);
}

// validate() takes an inline, message-free path for the common case and the catalogue
// (diagnose) for everything else. The fast path may decline a valid tensor but must never
// accept one the catalogue refuses, and where both accept they must learn the same facts.
// Seeded random tensors around every boundary the two paths check.
TEST(Validate, QuickPathNeverAcceptsWhatTheCatalogueRefuses) {
  std::uint64_t state = 0x2545f4914f6cdd1du;
  const auto next = [&state](std::uint64_t n) {  // xorshift, uniform enough
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state % n;
  };
  const std::int64_t extents[] = {
      0, 1, 1, 2, 3, 4, 5, -1, -(1LL << 62), INT64_MAX / 2, 1LL << 31, 1LL << 40};
  const std::int64_t odd_strides[] = {0, -1, -3, 7, INT64_MAX, INT64_MIN, 1LL << 40, 2};
  const DLDataType dtypes[] = {DataType::float32(),
                               DataType::float64(),
                               DataType::int8(),
                               DataType::complex128(),
                               DataType(dtype_code::int_, 32, 4),
                               DataType::float4_e2m1fn(),
                               DataType(dtype_code::int_, 4),
                               DataType(dtype_code::float_, 24),
                               DataType(dtype_code::bfloat, 0),
                               DataType(dtype_code::uint, 8, 0),
                               DataType(200, 8),
                               DataType(dtype_code::int_, 128),
                               DataType(dtype_code::uint, 255)};
  const DLDevice devices[] = {Device::cpu(),
                              Device::cuda(1),
                              Device::from_code(5, 0),
                              Device::from_code(19, 0),
                              Device::from_code(63, 0),
                              Device::from_code(-1, 0),
                              Device::cpu(),
                              Device::cuda(-2)};
  const std::uintptr_t datas[] = {0, 64, 4096, UINTPTR_MAX - 64, 1u << 20, 3};
  const std::uint64_t offsets[] = {0, 0, 4, 1, UINT64_MAX / 2, UINT64_MAX - 8, 1ULL << 63};
  const std::uint64_t flag_sets[] = {0, flag::read_only, flag::is_subbyte_type_padded};
  int quick = 0;
  int declined_but_valid = 0;
  for (int round = 0; round < 20000; ++round) {
    const int ndim = static_cast<int>(next(11)) - (next(20) == 0 ? 1 : 0);
    std::vector<std::int64_t> shape(10);
    std::vector<std::int64_t> strides(10);
    std::int64_t running = 1;
    for (int d = 9; d >= 0; --d) {
      const auto i = static_cast<std::size_t>(d);
      shape[i] =
          next(4) == 0 ? extents[next(std::size(extents))] : 1 + static_cast<std::int64_t>(next(3));
      strides[i] = next(6) == 0 ? odd_strides[next(std::size(odd_strides))] : running;
      running = static_cast<std::int64_t>(static_cast<std::uint64_t>(running) *
                                          static_cast<std::uint64_t>(shape[i] > 0 ? shape[i] : 1));
    }
    DLTensor t{};
    t.ndim = ndim;
    t.shape = next(30) == 0 ? nullptr : shape.data();
    t.strides = next(3) == 0 ? nullptr : strides.data();
    t.dtype = next(3) == 0 ? dtypes[next(std::size(dtypes))] : DLDataType(DataType::float32());
    t.device = next(3) == 0 ? devices[next(std::size(devices))] : DLDevice(Device::cpu());
    t.data = fake_address(datas[next(std::size(datas))]);
    t.byte_offset = offsets[next(std::size(offsets))];
    ValidateOptions options;
    options.flags = flag_sets[next(std::size(flag_sets))];
    options.require_strides = next(4) == 0;
    options.alignment = next(4) == 0 ? std::size_t{1} << next(5) : next(8) == 0 ? 3 : 0;

    dlpackpp::detail::TensorFacts fast;
    dlpackpp::detail::TensorFacts full;
    const bool accepted = dlpackpp::detail::quick_accept(t, options, fast);
    const dlpackpp::Result<void> verdict = dlpackpp::detail::diagnose(t, options, full);
    if (accepted) {
      ++quick;
      ASSERT_TRUE(verdict.has_value()) << "round " << round << ": " << verdict.error().what();
      EXPECT_EQ(fast.numel, full.numel) << "round " << round;
      EXPECT_EQ(fast.contiguous, full.contiguous) << "round " << round;
    } else if (verdict.has_value()) {
      ++declined_but_valid;
    }
  }
  // Both outcomes must be exercised, or the comparison above proves nothing.
  EXPECT_GT(quick, 1000);
  EXPECT_GT(declined_but_valid, 100);
}

}  // namespace

// known_device_types() is spelled from the named codes; it must stay exactly the codes that
// have a name.
TEST(Validate, KnownDeviceTypesMatchTheNamedCodes) {
  std::uint64_t named = 0;
  for (std::int32_t code = 0; code < 64; ++code) {
    if (dlpackpp::detail::device_name(code) != nullptr) named |= std::uint64_t{1} << code;
  }
  EXPECT_EQ(dlpackpp::detail::known_device_types(), named);
}
