// SPDX-License-Identifier: Apache-2.0
// from_vector, from_unique_ptr, from_shared_ptr, wrap and allocate, for both handle kinds.
#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include "support/expect_error.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using dlpackpp_test::expect_errc;

using dlpackpp::DataType;
using dlpackpp::Device;
namespace dtype_code = dlpackpp::dtype_code;
using dlpackpp::Errc;
using dlpackpp::Error;
using dlpackpp::IntSpan;
using dlpackpp::LegacyManagedTensor;
using dlpackpp::ManagedTensor;
namespace flag = dlpackpp::flag;

// A move-only owner that counts its destruction; moved-from instances count nothing, so the
// count is the number of times the owned resource was given up.
class Guard {
 public:
  explicit Guard(int& destroyed) : destroyed_(&destroyed) {}
  Guard(Guard&& other) noexcept : destroyed_(std::exchange(other.destroyed_, nullptr)) {}
  Guard& operator=(Guard&&) = delete;
  ~Guard() {
    if (destroyed_ != nullptr) ++*destroyed_;
  }
  bool owns() const noexcept { return destroyed_ != nullptr; }

 private:
  int* destroyed_;
};

struct CountingArrayDelete {
  int* deletes;
  void operator()(float* p) const noexcept {
    ++*deletes;
    delete[] p;
  }
};

// What every export promises: strides present for ndim > 0, compact unless given, and the
// shape copied out of the caller's array.
template <class Handle>
void expect_well_formed(const Handle& t, IntSpan shape) {
  const DLTensor& dl = t.get()->dl_tensor;
  ASSERT_EQ(dl.ndim, static_cast<decltype(dl.ndim)>(shape.size()));
  EXPECT_EQ(t.shape(), shape);
  if (dl.ndim > 0) {
    ASSERT_NE(dl.strides, nullptr);
    EXPECT_NE(dl.shape, shape.data());
  }
  EXPECT_EQ(dl.byte_offset, 0u);
  // Re-adopting checks the export the way any consumer would.
  EXPECT_TRUE(dlpackpp::validate(dl)) << dlpackpp::validate(dl).error().what();
}

template <class Handle>
class Producers : public ::testing::Test {};
using HandleKinds = ::testing::Types<LegacyManagedTensor, ManagedTensor>;
TYPED_TEST_SUITE(Producers, HandleKinds, );

TYPED_TEST(Producers, FromVectorTakesTheBufferWithoutCopying) {
  std::vector<float> values{0, 1, 2, 3, 4, 5};
  const float* buffer = values.data();
  TypeParam t = dlpackpp::from_vector<TypeParam>(std::move(values), {2, 3});
  EXPECT_EQ(t.data(), buffer);
  EXPECT_EQ(t.template data<float>(), buffer);
  EXPECT_EQ(t.dtype(), DataType::float32());
  EXPECT_EQ(t.device(), Device::cpu());
  EXPECT_EQ(t.strides(), (IntSpan{3, 1}));
  EXPECT_EQ(t.template data<const float>()[4], 4.0f);
  expect_well_formed(t, {2, 3});
}

TYPED_TEST(Producers, FromVectorRefusesAShapeOfAnotherSizeAndKeepsTheVector) {
  std::vector<std::int16_t> values(6, 7);
  const std::int16_t* buffer = values.data();
  const std::pair<std::vector<std::int64_t>, Errc> bad_shapes[] = {
      {{4}, Errc::invalid_argument},
      {{2, 4}, Errc::invalid_argument},
      {{}, Errc::invalid_argument},
      {{-2, -3}, Errc::negative_shape},
  };
  for (const auto& row : bad_shapes) {
    const std::vector<std::int64_t>& shape = row.first;  // C++17 lambdas cannot capture bindings
    const Errc code = row.second;
    SCOPED_TRACE(testing::PrintToString(shape));
    auto r = dlpackpp::try_from_vector<TypeParam>(std::move(values), shape);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), code);
    expect_errc(code, [&] {
      static_cast<void>(dlpackpp::from_vector<TypeParam>(std::move(values), shape));
    });
    EXPECT_EQ(values.size(), 6u);
    EXPECT_EQ(values.data(), buffer);
  }
}

TYPED_TEST(Producers, FromUniquePtrRunsItsDeleterOnceWhenTheConsumerIsDone) {
  int deletes = 0;
  std::unique_ptr<float[], CountingArrayDelete> owned(new float[6]{},
                                                      CountingArrayDelete{&deletes});
  const float* buffer = owned.get();
  TypeParam t = dlpackpp::from_unique_ptr<TypeParam>(std::move(owned), {3, 2});
  EXPECT_EQ(owned.get(), nullptr);
  EXPECT_EQ(t.data(), buffer);
  expect_well_formed(t, {3, 2});
  EXPECT_EQ(deletes, 0);
  t.reset();
  EXPECT_EQ(deletes, 1);
}

TYPED_TEST(Producers, FromUniquePtrFailureLeavesThePointerWithTheCaller) {
  int deletes = 0;
  {
    std::unique_ptr<float[], CountingArrayDelete> owned(nullptr, CountingArrayDelete{&deletes});
    expect_errc(Errc::null_data, [&] {
      static_cast<void>(dlpackpp::from_unique_ptr<TypeParam>(std::move(owned), {2}));
    });
    owned.reset(new float[2]{});
    expect_errc(Errc::negative_shape, [&] {
      static_cast<void>(dlpackpp::from_unique_ptr<TypeParam>(std::move(owned), {-2}));
    });
    EXPECT_NE(owned.get(), nullptr);
    EXPECT_EQ(deletes, 0);
  }
  EXPECT_EQ(deletes, 1);
}

TYPED_TEST(Producers, FromSharedPtrHoldsOneReferenceWhileExported) {
  std::shared_ptr<float[]> shared(new float[4]{1, 2, 3, 4});
  {
    TypeParam t = dlpackpp::from_shared_ptr<TypeParam>(shared, {4});
    EXPECT_EQ(shared.use_count(), 2);
    EXPECT_EQ(t.data(), shared.get());
    expect_well_formed(t, {4});
    t.reset();
    EXPECT_EQ(shared.use_count(), 1);
  }
  auto r = dlpackpp::try_from_shared_ptr<TypeParam>(shared, {-4});
  EXPECT_FALSE(r);
  EXPECT_EQ(shared.use_count(), 1);
}

TYPED_TEST(Producers, WrapDestroysItsOwnerExactlyOnce) {
  float buffer[6] = {};
  using Owning = std::function<TypeParam(int&)>;
  const std::pair<const char*, Owning> owners[] = {
      {"move-only owner",
       [&](int& destroyed) {
         return dlpackpp::wrap<TypeParam>(buffer, DataType::float32(), {2, 3}, {}, Device::cpu(),
                                          Guard(destroyed));
       }},
      {"lambda owner",
       [&](int& destroyed) {
         return dlpackpp::wrap<TypeParam>(buffer, DataType::float32(), {2, 3}, {}, Device::cpu(),
                                          [g = Guard(destroyed)] { static_cast<void>(g); });
       }},
      {"shared_ptr owner",
       [&](int& destroyed) {
         return dlpackpp::wrap<TypeParam>(buffer, DataType::float32(), {2, 3}, {}, Device::cpu(),
                                          std::make_shared<Guard>(destroyed));
       }},
  };
  for (const auto& [name, make] : owners) {
    SCOPED_TRACE(name);
    int destroyed = 0;
    {
      TypeParam t = make(destroyed);
      EXPECT_EQ(t.data(), buffer);
      EXPECT_EQ(destroyed, 0);
      expect_well_formed(t, {2, 3});
    }
    EXPECT_EQ(destroyed, 1);
  }
}

TYPED_TEST(Producers, WrapThatFailsValidationLeavesTheOwnerWithTheCaller) {
  float buffer[6] = {};
  int destroyed = 0;
  {
    Guard guard(destroyed);
    // Each failure hands the guard over by rvalue; only success may take it.
    const auto attempt = [&](void* data, DataType dtype, IntSpan shape, IntSpan strides) {
      auto r = dlpackpp::try_wrap<TypeParam>(data, dtype, shape, strides, Device::cpu(),
                                             std::move(guard));
      return r ? Errc{} : r.error().code();
    };
    const auto attempt_throwing = [&](void* data, DataType dtype, IntSpan shape, IntSpan strides) {
      try {
        static_cast<void>(dlpackpp::wrap<TypeParam>(data, dtype, shape, strides, Device::cpu(),
                                                    std::move(guard)));
      } catch (const Error& e) {
        return e.code();
      }
      return Errc{};
    };
    const DataType f32 = DataType::float32();
    const DataType unknown(200, 32);
    const std::pair<const char*, std::function<Errc()>> failures[] = {
        {"negative shape",
         [&] {
           return attempt(buffer, f32, {2, -3}, {});
         }},
        {"NULL data",
         [&] {
           return attempt(nullptr, f32, {2, 3}, {});
         }},
        {"strides of another rank",
         [&] {
           return attempt(buffer, f32, {2, 3}, {1});
         }},
        {"unknown dtype",
         [&] {
           return attempt(buffer, unknown, {2, 3}, {});
         }},
        {"throwing wrap",
         [&] {
           return attempt_throwing(buffer, f32, {2, -3}, {});
         }},
    };
    const Errc expected[] = {Errc::negative_shape, Errc::null_data, Errc::invalid_argument,
                             Errc::unsupported_dtype, Errc::negative_shape};
    static_assert(sizeof(expected) / sizeof(expected[0]) == sizeof(failures) / sizeof(failures[0]),
                  "");
    for (std::size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); ++i) {
      SCOPED_TRACE(failures[i].first);
      EXPECT_EQ(failures[i].second(), expected[i]);
      EXPECT_TRUE(guard.owns());
      EXPECT_EQ(destroyed, 0);
    }
  }
  EXPECT_EQ(destroyed, 1);
}

// An export of compact parts is accepted exactly when validate() accepts the DLTensor those
// parts describe, with the same error otherwise, whichever of the export's paths (the quick
// one-pass build or the catalogue) decides; the owner stays with the caller on failure.
TYPED_TEST(Producers, ExportsAcceptWhatValidationAcceptsAndReportItsError) {
  float buffer[16] = {};
  void* top = reinterpret_cast<void*>(~std::uintptr_t{0} - 63);  // near the address space's end
  const std::int64_t big = std::int64_t{1} << 40;
  const std::uint64_t max_offset = static_cast<std::uint64_t>(PTRDIFF_MAX);
  struct Case {
    const char* name;
    void* data;
    DataType dtype;
    std::vector<std::int64_t> shape;
    Device device;
    std::uint64_t byte_offset;
  };
  const Case cases[] = {
      {"scalar", buffer, DataType::float32(), {}, Device::cpu(), 0},
      {"rank 1", buffer, DataType::float32(), {16}, Device::cpu(), 0},
      {"rank 9", buffer, DataType::uint8(), {1, 2, 1, 2, 1, 2, 1, 2, 1}, Device::cpu(), 0},
      {"empty", buffer, DataType::float32(), {3, 0, 2}, Device::cpu(), 0},
      {"empty, NULL data", nullptr, DataType::float32(), {0}, Device::cpu(), 0},
      {"negative extent", buffer, DataType::float32(), {2, -3}, Device::cpu(), 0},
      {"NULL data", nullptr, DataType::float32(), {2}, Device::cpu(), 0},
      {"count overflows", buffer, DataType::float32(), {INT64_MAX, 2}, Device::cpu(), 0},
      {"bytes overflow", buffer, DataType::float64(), {big, big / 2}, Device::cpu(), 0},
      {"huge but valid", buffer, DataType::uint8(), {big, 1024}, Device::cpu(), 0},
      {"span wraps", top, DataType::float32(), {32}, Device::cpu(), 0},
      {"offset at the limit", buffer, DataType::uint8(), {1}, Device::cpu(), max_offset / 2},
      {"offset past the limit", buffer, DataType::uint8(), {1}, Device::cpu(), max_offset + 1},
      {"sub-byte", buffer, DataType(dtype_code::int_, 4), {3}, Device::cpu(), 0},
      {"bool", buffer, DataType::bool_(), {4}, Device::cpu(), 0},
      {"vector lanes", buffer, DataType(dtype_code::float_, 32, 4), {2}, Device::cpu(), 0},
      {"zero lanes", buffer, DataType(dtype_code::float_, 32, 0), {2}, Device::cpu(), 0},
      {"odd width", buffer, DataType(dtype_code::float_, 24), {2}, Device::cpu(), 0},
      {"unknown code", buffer, DataType(200, 32), {2}, Device::cpu(), 0},
      {"cuda", buffer, DataType::float32(), {2}, Device::cuda(3), 0},
      {"unknown device", buffer, DataType::float32(), {2}, Device::from_code(63), 0},
      {"negative device id", buffer, DataType::float32(), {2}, Device::from_code(2, -1), 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DLTensor described{};
    described.data = c.data;
    described.device = c.device;
    described.ndim = static_cast<std::int32_t>(c.shape.size());
    described.dtype = c.dtype;
    described.shape = const_cast<std::int64_t*>(c.shape.data());
    described.byte_offset = c.byte_offset;
    const dlpackpp::Result<void> expected = dlpackpp::validate(described);
    int destroyed = 0;
    {
      Guard guard(destroyed);
      auto r = dlpackpp::try_wrap<TypeParam>(c.data, c.dtype, c.shape, {}, c.device,
                                             std::move(guard), 0, c.byte_offset);
      ASSERT_EQ(static_cast<bool>(r), static_cast<bool>(expected));
      if (r) {
        EXPECT_FALSE(guard.owns());
        const DLTensor& dl = r->get()->dl_tensor;
        EXPECT_EQ(r->shape(), IntSpan(c.shape));
        EXPECT_EQ(dl.byte_offset, c.byte_offset);
        if (dl.ndim > 0) {
          EXPECT_NE(dl.strides, nullptr);
        }
        EXPECT_TRUE(dlpackpp::validate(dl));
      } else {
        EXPECT_TRUE(guard.owns());
        EXPECT_EQ(r.error().code(), expected.error().code());
        EXPECT_STREQ(r.error().what(), expected.error().what());
      }
    }
    EXPECT_EQ(destroyed, 1);
  }
}

TYPED_TEST(Producers, WrapCopiesShapeAndStridesIntoTheExport) {
  float buffer[12] = {};
  std::vector<std::int64_t> shape{3, 2};
  std::vector<std::int64_t> strides{1, 6};  // a strided, column-major view
  TypeParam t =
      dlpackpp::wrap<TypeParam>(buffer, DataType::float32(), shape, strides, Device::cuda(1), 0);
  shape.assign({9, 9});
  strides.assign({9, 9});
  EXPECT_EQ(t.shape(), (IntSpan{3, 2}));
  EXPECT_EQ(t.strides(), (IntSpan{1, 6}));
  EXPECT_EQ(t.device(), Device::cuda(1));
  // Shape and strides live in the export's own block, right after the struct.
  const auto* block = reinterpret_cast<const char*>(t.get());
  const auto* arrays = reinterpret_cast<const char*>(t.get()->dl_tensor.shape);
  EXPECT_GE(arrays, block + sizeof(*t.get()));
  EXPECT_LT(arrays, block + 256);
  EXPECT_EQ(t.get()->dl_tensor.strides, t.get()->dl_tensor.shape + 2);
}

TYPED_TEST(Producers, ExportsOfManyDimensionsCarryCompactStrides) {
  const std::vector<std::int64_t> shape(12, 2);
  TypeParam t = dlpackpp::allocate<TypeParam>(DataType::uint8(), shape);
  std::vector<std::int64_t> expected(12);
  for (std::size_t d = 0; d < 12; ++d) expected[d] = std::int64_t{1} << (11 - d);
  EXPECT_EQ(IntSpan(t.get()->dl_tensor.strides, 12), IntSpan(expected));
  expect_well_formed(t, shape);
}

struct AllocateCase {
  DataType dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  std::int64_t nbytes;
};

TYPED_TEST(Producers, AllocateGivesAlignedZeroedCompactMemory) {
  const AllocateCase cases[] = {
      {DataType::float32(), {2, 3}, {3, 1}, 24},
      {DataType::int8(), {7}, {1}, 7},
      {DataType::float64(), {3, 1, 5}, {5, 5, 1}, 120},
      {DataType::complex128(), {2, 2}, {2, 1}, 64},
      {DataType::float4_e2m1fn(), {3}, {1}, 2},
      {DataType::uint16(), {}, {}, 2},
      {DataType(DataType::int32().code(), 32, 4), {5}, {1}, 80},
  };
  for (const AllocateCase& c : cases) {
    SCOPED_TRACE(c.dtype.to_string() + testing::PrintToString(c.shape));
    TypeParam t = dlpackpp::allocate<TypeParam>(c.dtype, c.shape);
    EXPECT_EQ(t.dtype(), c.dtype);
    EXPECT_EQ(t.nbytes(), c.nbytes);
    EXPECT_EQ(t.strides(), IntSpan(c.strides));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % 256, 0u);
    const auto* bytes = static_cast<const unsigned char*>(t.data());
    for (std::int64_t i = 0; i < c.nbytes; ++i) EXPECT_EQ(bytes[i], 0) << "byte " << i;
    expect_well_formed(t, c.shape);
  }
}

TYPED_TEST(Producers, AllocateMakesOnlyHostMemory) {
  for (const Device device : {Device::cuda(), Device::cuda_host(), Device::rocm(1)}) {
    SCOPED_TRACE(device.to_string());
    auto r = dlpackpp::try_allocate<TypeParam>(DataType::float32(), {4}, device);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), Errc::unsupported_device);
    expect_errc(Errc::unsupported_device, [&] {
      static_cast<void>(dlpackpp::allocate<TypeParam>(DataType::float32(), {4}, device));
    });
  }
}

TYPED_TEST(Producers, AllocateRejectsBadShapesAndTypes) {
  const std::pair<std::pair<DataType, std::vector<std::int64_t>>, Errc> cases[] = {
      {{DataType::float32(), {2, -1}}, Errc::negative_shape},
      {{DataType::float32(), {INT64_MAX, 2}}, Errc::size_overflow},
      {{DataType::float64(), {INT64_MAX / 4}}, Errc::size_overflow},
      {{DataType(DataType::float32().code(), 0), {2}}, Errc::unsupported_dtype},
      {{DataType(200, 32), {2}}, Errc::unsupported_dtype},
  };
  for (const auto& [input, code] : cases) {
    SCOPED_TRACE(input.first.to_string() + testing::PrintToString(input.second));
    auto r = dlpackpp::try_allocate<TypeParam>(input.first, input.second);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), code) << r.error().what();
  }
}

// Empty and zero-dim exports survive being handed out raw and adopted back.
TYPED_TEST(Producers, ZeroSizeAndZeroDimTensorsRoundTripThroughRelease) {
  using Make = std::function<TypeParam(IntSpan)>;
  const std::pair<const char*, Make> producers[] = {
      {"allocate", [](IntSpan s) { return dlpackpp::allocate<TypeParam>(DataType::float32(), s); }},
      {"from_vector",
       [](IntSpan s) {
         std::int64_t n = 1;
         for (std::int64_t e : s) n *= e;
         return dlpackpp::from_vector<TypeParam>(std::vector<float>(static_cast<std::size_t>(n)),
                                                 s);
       }},
      {"wrap NULL data",
       [](IntSpan s) {
         return dlpackpp::wrap<TypeParam>(nullptr, DataType::float32(), s, {}, Device::cpu(), 0);
       }},
  };
  const std::vector<std::int64_t> shapes[] = {{0}, {2, 0}, {0, 3, 4}};
  for (const auto& [name, make] : producers) {
    for (const auto& shape : shapes) {
      SCOPED_TRACE(std::string(name) + testing::PrintToString(shape));
      TypeParam t = TypeParam::adopt(make(shape).release());
      EXPECT_EQ(t.numel(), 0);
      EXPECT_EQ(t.nbytes(), 0);
      expect_well_formed(t, shape);
    }
  }
  // Zero-dim holds one element, so it needs data (wrap with NULL would be rejected).
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(producers[i].first);
    TypeParam t = TypeParam::adopt(producers[i].second({}).release());
    EXPECT_EQ(t.ndim(), 0);
    EXPECT_EQ(t.numel(), 1);
    EXPECT_EQ(t.nbytes(), 4);
    EXPECT_NE(t.data(), nullptr);
    EXPECT_EQ(t.get()->dl_tensor.strides, nullptr);
  }
}

// ---- versioned exports: version and flags --------------------------------------------------

TEST(VersionedProducers, EveryExportCarriesTheHeadersVersion) {
  float buffer[2] = {};
  const std::pair<const char*, std::function<ManagedTensor()>> producers[] = {
      {"from_vector", [] { return dlpackpp::from_vector(std::vector<double>(2), {2}); }},
      {"from_unique_ptr",
       [] {
         return dlpackpp::from_unique_ptr(std::unique_ptr<std::int64_t[]>(new std::int64_t[2]),
                                          {2});
       }},
      {"from_shared_ptr",
       [] { return dlpackpp::from_shared_ptr(std::make_shared<std::uint8_t>(), {}); }},
      {"wrap",
       [&] { return dlpackpp::wrap(buffer, DataType::float32(), {2}, {}, Device::cpu(), 0); }},
      {"allocate", [] { return dlpackpp::allocate(DataType::bfloat16(), {2}); }},
  };
  for (const auto& [name, make] : producers) {
    SCOPED_TRACE(name);
    ManagedTensor t = make();
    EXPECT_EQ(t.version().major, static_cast<std::uint32_t>(DLPACK_MAJOR_VERSION));
    EXPECT_EQ(t.version().minor, static_cast<std::uint32_t>(DLPACK_MINOR_VERSION));
    EXPECT_EQ(t.flags(), 0u);
  }
}

// An empty tensor's leading extent is unbounded, so deriving its compact strides must not
// multiply it in (UBSan reports signed overflow here if it does).
TEST(VersionedProducers, EmptyExportWithHugeLeadingExtentGetsCompactStrides) {
  const ManagedTensor t =
      dlpackpp::wrap(nullptr, DataType::float32(), {INT64_MAX, 0, 2}, {}, Device::cpu(), 0);
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.strides(), (IntSpan{2, 2, 1}));
}

TEST(VersionedProducers, WrapKeepsEveryFlagBit) {
  float buffer[2] = {};
  const std::uint64_t flags = flag::read_only | flag::is_copied | (std::uint64_t{1} << 40);
  ManagedTensor t = dlpackpp::wrap(buffer, DataType::float32(), {2}, {}, Device::cpu(), 0, flags);
  EXPECT_EQ(t.flags(), flags);
  EXPECT_TRUE(t.is_copied());
  expect_errc(Errc::read_only, [&] { static_cast<void>(t.data<float>()); });
}

TEST(VersionedProducers, WrapChecksSubbytePaddedAgainstTheDtype) {
  std::uint8_t bytes[3] = {};
  int destroyed = 0;
  Guard guard(destroyed);
  auto wide = dlpackpp::try_wrap(bytes, DataType::uint8(), {3}, {}, Device::cpu(), std::move(guard),
                                 flag::is_subbyte_type_padded);
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().code(), Errc::invalid_flags);
  EXPECT_TRUE(guard.owns());
  ManagedTensor fp4 = dlpackpp::wrap(bytes, DataType::float4_e2m1fn(), {3}, {}, Device::cpu(),
                                     std::move(guard), flag::is_subbyte_type_padded);
  EXPECT_EQ(fp4.nbytes(), 3);
}

TEST(VersionedProducers, ConstElementsMakeReadOnlyExports) {
  auto shared = std::make_shared<const float>(2.5f);
  ManagedTensor from_shared = dlpackpp::from_shared_ptr(shared, {});
  EXPECT_TRUE(from_shared.read_only());
  EXPECT_EQ(*from_shared.data<const float>(), 2.5f);
  expect_errc(Errc::read_only, [&] { static_cast<void>(from_shared.data<float>()); });

  ManagedTensor from_unique =
      dlpackpp::from_unique_ptr(std::unique_ptr<const float[]>(new float[3]{}), {3});
  EXPECT_TRUE(from_unique.read_only());
  expect_errc(Errc::read_only, [&] { static_cast<void>(from_unique.view().accessor<float, 1>()); });
}

// ---- legacy exports carry no flags -------------------------------------------------------

TEST(LegacyProducers, RefuseFlagsAndKeepTheOwner) {
  float buffer[2] = {};
  int destroyed = 0;
  {
    Guard guard(destroyed);
    const std::pair<std::uint64_t, Errc> cases[] = {
        {flag::read_only, Errc::read_only},
        {flag::is_copied, Errc::invalid_flags},
        {std::uint64_t{1} << 40, Errc::invalid_flags},
    };
    for (const auto& [flags, code] : cases) {
      SCOPED_TRACE(flags);
      auto r = dlpackpp::try_wrap<LegacyManagedTensor>(buffer, DataType::float32(), {2}, {},
                                                       Device::cpu(), std::move(guard), flags);
      ASSERT_FALSE(r);
      EXPECT_EQ(r.error().code(), code);
      EXPECT_TRUE(guard.owns());
    }
  }
  EXPECT_EQ(destroyed, 1);
}

// A const element type exported as LegacyManagedTensor is a compile error: see
// tests/compile_fail/legacy_const_export.cpp.

TEST(SmartPointerExports, OneObjectExportsAtMostOneElement) {
  // A shared_ptr<T>/unique_ptr<T> owns one element: a larger shape would read past it.
  auto one = std::make_shared<float>(1.0f);
  auto r = dlpackpp::try_from_shared_ptr(one, {1000});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::invalid_argument);
  EXPECT_EQ(one.use_count(), 1);  // not consumed on failure
  EXPECT_EQ(dlpackpp::from_shared_ptr(one, {}).numel(), 1);
  EXPECT_EQ(dlpackpp::from_shared_ptr(one, {1, 1}).numel(), 1);
  auto unique = std::make_unique<std::int32_t>(7);
  EXPECT_EQ(dlpackpp::try_from_unique_ptr(std::move(unique), {2}).error().code(),
            Errc::invalid_argument);
}

TEST(SmartPointerExports, CountedArrayFormsCheckTheShape) {
  std::shared_ptr<float[]> shared(new float[6]());
  auto too_big = dlpackpp::try_from_shared_ptr(shared, 6, {2, 4});
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().code(), Errc::invalid_argument);
  const auto t = dlpackpp::from_shared_ptr(shared, 6, {2, 3});
  EXPECT_EQ(t.numel(), 6);
  auto r = dlpackpp::try_from_unique_ptr(std::unique_ptr<double[]>(new double[4]()), 3, {4});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::invalid_argument);
  const auto u = dlpackpp::from_unique_ptr(std::unique_ptr<double[]>(new double[4]()), 4, {2, 2});
  EXPECT_EQ((u.view().accessor<const double, 2>()(1, 1)), 0.0);
}

TEST(WrapExport, CarriesAByteOffsetAndAllocateCarriesFlags) {
  std::vector<float> values{9, 1, 2, 3, 4};
  auto t = dlpackpp::wrap(
      values.data(), DataType::float32(), {2, 2}, {}, Device::cpu(), [] {}, 0, sizeof(float));
  EXPECT_EQ(t.byte_offset(), sizeof(float));
  EXPECT_EQ((t.accessor<const float, 2>()(0, 0)), 1.0f);
  EXPECT_EQ((t.accessor<const float, 2>()(1, 1)), 4.0f);
  auto bad = dlpackpp::try_wrap(
      values.data(), DataType::float32(), {2}, {}, Device::cpu(), [] {}, 0,
      static_cast<std::uint64_t>(PTRDIFF_MAX) + 1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::offset_overflow);

  const auto locked = dlpackpp::allocate(DataType::int32(), {3}, Device::cpu(), flag::read_only);
  EXPECT_TRUE(locked.read_only());
  EXPECT_EQ(locked.view().try_require_writable().error().code(), Errc::read_only);
}

}  // namespace
