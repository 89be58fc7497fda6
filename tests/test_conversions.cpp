// SPDX-License-Identifier: Apache-2.0
// to_versioned / to_legacy: chains keep the original deleter responsible; refusals leave input
// owned.
#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include "support/expect_error.hpp"
#include "support/hand_made.hpp"
#include "support/same_view.hpp"

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace {

using dlpackpp_test::expect_errc;

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp::Error;
using dlpackpp::IntSpan;
using dlpackpp::LegacyManagedTensor;
using dlpackpp::ManagedTensor;
using dlpackpp::TensorView;
namespace flag = dlpackpp::flag;

// A hand-made tensor with what a conversion could lose: column-major strides, a byte offset
// and recognisable values (the first element, after the offset, is 0).
template <class M>
M* make_original(int& deletes, DataType dtype = DataType::float32(), std::uint64_t flags = 0) {
  dlpackpp_test::Layout layout{dtype, {2, 3}, {1, 2}, flags, sizeof(float)};
  layout.values = {-1, 0, 1, 2, 3, 4, 5};
  return dlpackpp_test::make_counted<M>(deletes, layout);
}
template <class M>
using Original = dlpackpp_test::HandMade<M>;

class Conversions : public ::testing::Test {
 protected:
  LegacyManagedTensor legacy(DataType dtype = DataType::float32()) {
    return LegacyManagedTensor::adopt(make_original<DLManagedTensor>(deletes, dtype));
  }
  ManagedTensor versioned(std::uint64_t flags = 0, DataType dtype = DataType::float32()) {
    return ManagedTensor::adopt(make_original<DLManagedTensorVersioned>(deletes, dtype, flags));
  }
  int deletes = 0;
};

TEST_F(Conversions, ToVersionedStampsTheHeadersVersionAndTheGivenFlags) {
  const std::uint64_t flags = flag::read_only | flag::is_copied | (std::uint64_t{1} << 40);
  LegacyManagedTensor in = legacy();
  DLManagedTensor* original = in.get();
  {
    ManagedTensor out = dlpackpp::to_versioned(std::move(in), flags);
    EXPECT_FALSE(in);
    EXPECT_EQ(out.version().major, static_cast<std::uint32_t>(DLPACK_MAJOR_VERSION));
    EXPECT_EQ(out.version().minor, static_cast<std::uint32_t>(DLPACK_MINOR_VERSION));
    EXPECT_EQ(out.flags(), flags);
    EXPECT_TRUE(out.read_only());
    expect_errc(Errc::read_only, [&] { static_cast<void>(out.data<float>()); });
    dlpackpp_test::expect_same_view(out.view(), TensorView(original->dl_tensor));
    EXPECT_EQ(deletes, 0);
  }
  EXPECT_EQ(deletes, 1);
}

// A freed wrapper is kept for the next conversion (legacy imports in a loop then make no heap
// call), and what the last tensor left in it never leaks into the next one.
TEST_F(Conversions, AFreedWrapperIsReusedWithNothingOfTheLastTensorLeft) {
  const DLManagedTensorVersioned* first = nullptr;
  {
    ManagedTensor out = dlpackpp::to_versioned(legacy(), flag::read_only | flag::is_copied);
    first = out.get();
  }
  EXPECT_EQ(deletes, 1);
  ManagedTensor again = dlpackpp::to_versioned(legacy(DataType::int16()));
  EXPECT_EQ(again.get(), first);  // the same block
  EXPECT_EQ(again.flags(), 0u);
  EXPECT_EQ(again.dtype(), DataType::int16());
  EXPECT_EQ(again.version().major, static_cast<std::uint32_t>(DLPACK_MAJOR_VERSION));
  // Two alive at once: the second is a block of its own.
  ManagedTensor other = dlpackpp::to_versioned(legacy());
  EXPECT_NE(other.get(), again.get());
  again.reset();
  other.reset();
  EXPECT_EQ(deletes, 3);
}

TEST_F(Conversions, ToVersionedRevalidatesUnderTheNewFlags) {
  // IS_SUBBYTE_TYPE_PADDED makes each int4 lane a byte: a shape whose packed size fits can
  // overflow padded. The conversion refuses it and leaves the legacy tensor owning.
  LegacyManagedTensor in = legacy(DataType(dlpackpp::dtype_code::int_, 4, 3));
  in.get()->dl_tensor.shape[0] = INT64_MAX / 2;  // packed 1.5 bytes each fits, padded 3 does not
  in.get()->dl_tensor.shape[1] = 1;
  in.get()->dl_tensor.strides[0] = 1;
  auto r = dlpackpp::try_to_versioned(std::move(in), flag::is_subbyte_type_padded);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::size_overflow);
  EXPECT_TRUE(in);
  EXPECT_EQ(deletes, 0);
  in.get()->dl_tensor.shape[0] = 2;  // let it go back to a shape its buffer holds
}

TEST_F(Conversions, ToVersionedDefaultsToNoFlags) {
  ManagedTensor out = dlpackpp::to_versioned(legacy());
  EXPECT_EQ(out.flags(), 0u);
}

TEST_F(Conversions, ToLegacyUnwrapsWhatToVersionedWrapped) {
  LegacyManagedTensor in = legacy();
  DLManagedTensor* original = in.get();
  LegacyManagedTensor back = dlpackpp::to_legacy(dlpackpp::to_versioned(std::move(in)));
  EXPECT_EQ(back.get(), original);
  EXPECT_EQ(back.get()->deleter, &Original<DLManagedTensor>::count_and_free);
  EXPECT_EQ(deletes, 0);
  back.reset();
  EXPECT_EQ(deletes, 1);
}

TEST_F(Conversions, ToLegacyKeepsTheVersionedDeleterResponsible) {
  ManagedTensor in = versioned(flag::is_copied);
  const TensorView before = in.view();
  {
    LegacyManagedTensor out = dlpackpp::to_legacy(std::move(in));
    EXPECT_FALSE(in);
    dlpackpp_test::expect_same_view(out.view(), before);
    EXPECT_EQ(deletes, 0);
  }
  EXPECT_EQ(deletes, 1);
}

// A chain of conversions: 'L' converts to legacy, 'V' to versioned, starting from `start`.
struct Chain {
  char start;
  const char* steps;
};

TEST_F(Conversions, ChainsKeepContentsAndCallTheOriginalDeleterOnceAtTheEnd) {
  const Chain chains[] = {
      {'L', "V"}, {'L', "VL"}, {'L', "VLVLVLV"}, {'L', "VLVLVLVL"},
      {'V', "L"}, {'V', "LV"}, {'V', "LVLVLVL"}, {'V', "LVLVLVLV"},
  };
  for (const Chain& chain : chains) {
    SCOPED_TRACE(std::string(1, chain.start) + "->" + chain.steps);
    deletes = 0;
    std::variant<LegacyManagedTensor, ManagedTensor> t;
    if (chain.start == 'L') {
      t = legacy();
    } else {
      t = versioned();
    }
    const TensorView original = std::visit([](const auto& h) { return h.view(); }, t);
    for (const char* step = chain.steps; *step != '\0'; ++step) {
      if (*step == 'V') {
        t = dlpackpp::to_versioned(std::get<LegacyManagedTensor>(std::move(t)), flag::is_copied);
        EXPECT_TRUE(std::get<ManagedTensor>(t).is_copied());
      } else {
        t = dlpackpp::to_legacy(std::get<ManagedTensor>(std::move(t)));
      }
      std::visit([&](const auto& h) { dlpackpp_test::expect_same_view(h.view(), original); }, t);
      EXPECT_EQ(deletes, 0);
    }
    // Every intermediate struct must still be a valid tensor a consumer could adopt.
    std::visit(
        [](auto& h) {
          using Handle = std::decay_t<decltype(h)>;
          h = Handle::adopt(h.release());
        },
        t);
    t = LegacyManagedTensor();
    EXPECT_EQ(deletes, 1);
  }
}

TEST_F(Conversions, ToLegacyRefusesReadOnlyAndLeavesTheInputOwning) {
  ManagedTensor in = versioned(flag::read_only);
  DLManagedTensorVersioned* p = in.get();
  const void* data = in.const_data();
  auto r = dlpackpp::try_to_legacy(std::move(in));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::read_only);
  expect_errc(Errc::read_only, [&] { static_cast<void>(dlpackpp::to_legacy(std::move(in))); });
  EXPECT_EQ(in.get(), p);
  EXPECT_EQ(deletes, 0);

  LegacyManagedTensor out = dlpackpp::to_legacy(std::move(in), /*drop_read_only=*/true);
  EXPECT_FALSE(in);
  EXPECT_EQ(out.data<float>(), data);  // the caller chose to make it writable
  out.reset();
  EXPECT_EQ(deletes, 1);
}

TEST_F(Conversions, ToLegacyRefusesSubbytePaddedEvenWhenDroppingReadOnly) {
  ManagedTensor in =
      versioned(flag::is_subbyte_type_padded | flag::read_only, DataType::float4_e2m1fn());
  DLManagedTensorVersioned* p = in.get();
  for (const bool drop_read_only : {false, true}) {
    expect_errc(drop_read_only ? Errc::invalid_flags : Errc::read_only,
                [&] { static_cast<void>(dlpackpp::to_legacy(std::move(in), drop_read_only)); });
    EXPECT_EQ(in.get(), p);
  }
  ManagedTensor padded_only = versioned(flag::is_subbyte_type_padded, DataType::float4_e2m1fn());
  auto r = dlpackpp::try_to_legacy(std::move(padded_only));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::invalid_flags);
  EXPECT_TRUE(padded_only);
  EXPECT_EQ(deletes, 0);
}

TEST_F(Conversions, ToVersionedChecksSubbytePaddedAgainstTheDtype) {
  LegacyManagedTensor wide = legacy();
  DLManagedTensor* p = wide.get();
  expect_errc(Errc::invalid_flags, [&] {
    static_cast<void>(dlpackpp::to_versioned(std::move(wide), flag::is_subbyte_type_padded));
  });
  EXPECT_EQ(wide.get(), p);

  ManagedTensor fp4 =
      dlpackpp::to_versioned(legacy(DataType::float4_e2m1fn()), flag::is_subbyte_type_padded);
  EXPECT_TRUE(fp4.is_subbyte_padded());
  EXPECT_EQ(fp4.nbytes(), 6);
  EXPECT_EQ(deletes, 0);
}

TEST_F(Conversions, EmptyHandlesAreNullPointer) {
  auto v = dlpackpp::try_to_versioned(LegacyManagedTensor());
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code(), Errc::null_pointer);
  auto l = dlpackpp::try_to_legacy(ManagedTensor());
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().code(), Errc::null_pointer);
  expect_errc(Errc::null_pointer, [] { static_cast<void>(dlpackpp::to_versioned({})); });
  expect_errc(Errc::null_pointer, [] { static_cast<void>(dlpackpp::to_legacy({}, true)); });
}

TEST_F(Conversions, ANullOriginalDeleterStaysUncalledAndWrappersStillFreeThemselves) {
  // LeakSanitizer reports a wrapper that is not freed when its inner deleter is NULL.
  DLManagedTensor* raw_legacy = make_original<DLManagedTensor>(deletes);
  raw_legacy->deleter = nullptr;
  DLManagedTensorVersioned* raw_versioned = make_original<DLManagedTensorVersioned>(deletes);
  raw_versioned->deleter = nullptr;
  {
    ManagedTensor a = dlpackpp::to_versioned(LegacyManagedTensor::adopt(raw_legacy));
    ManagedTensor b = dlpackpp::to_versioned(
        dlpackpp::to_legacy(ManagedTensor::adopt(raw_versioned)));  // a wrapper of a wrapper
  }
  EXPECT_EQ(deletes, 0);
  Original<DLManagedTensor>::free_uncounted(raw_legacy);
  Original<DLManagedTensorVersioned>::free_uncounted(raw_versioned);
}

TEST_F(Conversions, ProducerExportsConvertToo) {
  std::vector<float> values{1, 2, 3, 4, 5, 6};
  const float* buffer = values.data();
  ManagedTensor exported = dlpackpp::from_vector(std::move(values), {3, 2});
  LegacyManagedTensor legacy_export = dlpackpp::to_legacy(std::move(exported));
  EXPECT_EQ(legacy_export.data<const float>(), buffer);
  ManagedTensor again = dlpackpp::to_versioned(std::move(legacy_export), flag::read_only);
  EXPECT_EQ(again.data<const float>()[5], 6.0f);
  EXPECT_EQ(again.shape(), (IntSpan{3, 2}));
}

}  // namespace
