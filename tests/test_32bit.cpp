// SPDX-License-Identifier: Apache-2.0
// Sizes and offsets that fit int64_t but not the platform's size_t/uintptr_t: on a 32-bit
// target (.ci/m32.sh builds the suite with g++ -m32) they must be refused with the overflow
// codes, never wrapped into small, plausible values. On 64-bit targets the same rules are
// checked at the 64-bit boundary, and the 32-bit cases report themselves skipped.
#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp::ManagedTensor;
using dlpackpp::TensorView;

constexpr bool k32Bit = sizeof(void*) == 4;
constexpr std::int64_t k4G = std::int64_t{1} << 32;

// A 1-D tensor over `data`; validate() only does arithmetic on the address, never reads it.
struct Tensor {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  DLTensor t{};

  Tensor(void* data, DataType dtype, std::vector<std::int64_t> shape_in,
         std::vector<std::int64_t> strides_in = {}, std::uint64_t byte_offset = 0)
      : shape(std::move(shape_in)), strides(std::move(strides_in)) {
    t.data = data;
    t.device = Device::cpu();
    t.dtype = dtype;
    t.ndim = static_cast<std::int32_t>(shape.size());
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = byte_offset;
  }
};

alignas(16) unsigned char storage[64];

Errc code_of(const DLTensor& t) {
  const auto result = dlpackpp::validate(t);
  EXPECT_FALSE(result.has_value()) << "accepted";
  return result ? Errc::out_of_range : result.error().code();
}

#define DLPACKPP_ONLY_ON_32_BIT()                                                         \
  if (!k32Bit)                                                                            \
  GTEST_SKIP() << "DLPACKPP_TEST_SKIPPED: 32-bit case (size_t is " << sizeof(std::size_t) \
               << " bytes here); .ci/m32.sh runs it with g++ -m32"

TEST(ThirtyTwoBit, ByteOffsetPastTheAddressSpace) {
  DLPACKPP_ONLY_ON_32_BIT();
  // 4 GiB + 16 fits uint64 but would wrap a 32-bit pointer to storage + 16.
  const Tensor t(storage, DataType::uint8(), {4}, {}, static_cast<std::uint64_t>(k4G) + 16);
  EXPECT_EQ(code_of(t.t), Errc::offset_overflow);
}

TEST(ThirtyTwoBit, StridedExtentPastTheAddressSpace) {
  DLPACKPP_ONLY_ON_32_BIT();
  // Two elements 4 GiB apart: the second would alias the first after wrapping.
  const Tensor t(storage, DataType::uint8(), {2}, {k4G});
  EXPECT_EQ(code_of(t.t), Errc::offset_overflow);
  const Tensor backwards(storage + 32, DataType::uint8(), {2}, {-k4G});
  EXPECT_EQ(code_of(backwards.t), Errc::offset_overflow);
}

TEST(ThirtyTwoBit, DenseTensorLargerThanTheAddressSpace) {
  DLPACKPP_ONLY_ON_32_BIT();
  // 2^30 float32 elements are 4 GiB: the byte count is 0 modulo 2^32.
  const Tensor t(storage, DataType::float32(), {std::int64_t{1} << 30});
  const Errc code = code_of(t.t);
  EXPECT_TRUE(code == Errc::size_overflow || code == Errc::offset_overflow) << to_string(code);
}

TEST(ThirtyTwoBit, BroadcastByteCountPastSizeT) {
  DLPACKPP_ONLY_ON_32_BIT();
  // Stride 0 keeps the span at one element, but nbytes() (2^33) cannot be a size_t: a
  // consumer sizing a copy from it would wrap to 0.
  const Tensor t(storage, DataType::uint8(), {std::int64_t{1} << 33}, {0});
  EXPECT_EQ(code_of(t.t), Errc::size_overflow);
}

TEST(ThirtyTwoBit, AllocateRefusesBeforeAllocating) {
  DLPACKPP_ONLY_ON_32_BIT();
  // 4 GiB + 16 bytes would be a 16-byte buffer after a cast to size_t.
  const auto made = dlpackpp::try_allocate(DataType::uint8(), {k4G + 16});
  ASSERT_FALSE(made.has_value());
  EXPECT_EQ(made.error().code(), Errc::size_overflow) << made.error().what();
}

TEST(ThirtyTwoBit, WrapRefusesWhatAViewRefuses) {
  DLPACKPP_ONLY_ON_32_BIT();
  const auto wrapped = dlpackpp::try_wrap(storage, DataType::uint8(), {2}, {k4G}, Device::cpu(), 0);
  ASSERT_FALSE(wrapped.has_value());
  EXPECT_EQ(wrapped.error().code(), Errc::offset_overflow);
  const auto view = TensorView::try_from(storage, DataType::uint8(), {4}, {}, Device::cpu(),
                                         static_cast<std::uint64_t>(k4G));
  ASSERT_FALSE(view.has_value());
  EXPECT_EQ(view.error().code(), Errc::offset_overflow);
}

// The 64-bit counterparts: the same rules where int64_t and the address space meet.
#define DLPACKPP_ONLY_ON_64_BIT() \
  if (k32Bit)                     \
  GTEST_SKIP() << "DLPACKPP_TEST_SKIPPED: 64-bit case; the 32-bit ones cover this target"

TEST(SixtyFourBit, ByteOffsetPastPtrdiffMax) {
  DLPACKPP_ONLY_ON_64_BIT();
  const Tensor t(storage, DataType::uint8(), {1}, {}, static_cast<std::uint64_t>(PTRDIFF_MAX) + 1);
  EXPECT_EQ(code_of(t.t), Errc::offset_overflow);
}

TEST(SixtyFourBit, ByteCountPastInt64) {
  DLPACKPP_ONLY_ON_64_BIT();
  const Tensor t(storage, DataType::float64(), {std::int64_t{1} << 61}, {0});
  EXPECT_EQ(code_of(t.t), Errc::size_overflow);
  const auto made = dlpackpp::try_allocate(DataType::float64(), {std::int64_t{1} << 61});
  ASSERT_FALSE(made.has_value());
  EXPECT_EQ(made.error().code(), Errc::size_overflow);
}

TEST(SixtyFourBit, StridedExtentWrappingTheAddressSpace) {
  DLPACKPP_ONLY_ON_64_BIT();
  const Tensor t(storage, DataType::uint8(), {2}, {INT64_MAX});
  EXPECT_EQ(code_of(t.t), Errc::offset_overflow);
}

}  // namespace
