// SPDX-License-Identifier: Apache-2.0
// BasicManagedTensor: the ownership matrix for both handle kinds, adoption checks, accessors,
// flags.
#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include "support/expect_error.hpp"
#include "support/hand_made.hpp"
#include "support/same_view.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
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
using dlpackpp::ValidateOptions;
namespace flag = dlpackpp::flag;

using dlpackpp_test::HandMade;
using dlpackpp_test::Layout;
using dlpackpp_test::make_counted;
using Ints = std::vector<std::int64_t>;

template <class Handle>
class Ownership : public ::testing::Test {
 protected:
  using Managed = typename Handle::managed_type;
  Managed* make(const Layout& layout = {}) { return make_counted<Managed>(deletes, layout); }
  int deletes = 0;
};
using HandleKinds = ::testing::Types<LegacyManagedTensor, ManagedTensor>;
TYPED_TEST_SUITE(Ownership, HandleKinds, );

// ---- the ownership matrix ----------------------------------------------------------------

TYPED_TEST(Ownership, EveryWayOfAdoptingOwnsUntilDestruction) {
  using M = typename TestFixture::Managed;
  using Adopter = TypeParam (*)(M*);
  const std::pair<const char*, Adopter> adopters[] = {
      {"adopt", [](M* p) { return TypeParam::adopt(p); }},
      {"constructor", [](M* p) { return TypeParam(p); }},
      {"try_adopt", [](M* p) { return TypeParam::try_adopt(p).value(); }},
      {"adopt_unchecked", [](M* p) { return TypeParam::adopt_unchecked(p); }},
  };
  for (const auto& [name, adopter] : adopters) {
    SCOPED_TRACE(name);
    this->deletes = 0;
    M* p = this->make();
    {
      TypeParam t = adopter(p);
      EXPECT_TRUE(t);
      EXPECT_EQ(t.get(), p);
      EXPECT_EQ(this->deletes, 0);
    }
    EXPECT_EQ(this->deletes, 1);
  }
}

TYPED_TEST(Ownership, MoveConstructionTransfersAndTheMovedFromHandleReleasesNothing) {
  typename TestFixture::Managed* p = this->make();
  {
    TypeParam from = TypeParam::adopt(p);
    {
      TypeParam to(std::move(from));
      EXPECT_FALSE(from);
      EXPECT_EQ(from.get(), nullptr);
      EXPECT_EQ(to.get(), p);
      EXPECT_EQ(this->deletes, 0);
    }
    EXPECT_EQ(this->deletes, 1);
  }
  EXPECT_EQ(this->deletes, 1);
}

TYPED_TEST(Ownership, MoveAssignmentOntoAnEmptyHandle) {
  typename TestFixture::Managed* p = this->make();
  {
    TypeParam to;
    TypeParam from = TypeParam::adopt(p);
    to = std::move(from);
    EXPECT_FALSE(from);
    EXPECT_EQ(to.get(), p);
    EXPECT_EQ(this->deletes, 0);
  }
  EXPECT_EQ(this->deletes, 1);
}

TYPED_TEST(Ownership, MoveAssignmentOntoAFullHandleReleasesTheOldTensorOnce) {
  int old_deletes = 0;
  auto* old = make_counted<typename TestFixture::Managed>(old_deletes);
  typename TestFixture::Managed* incoming = this->make();
  {
    TypeParam to = TypeParam::adopt(old);
    TypeParam from = TypeParam::adopt(incoming);
    to = std::move(from);
    EXPECT_EQ(old_deletes, 1);
    EXPECT_EQ(this->deletes, 0);
    EXPECT_EQ(to.get(), incoming);
    EXPECT_FALSE(from);
  }
  EXPECT_EQ(old_deletes, 1);
  EXPECT_EQ(this->deletes, 1);
}

TYPED_TEST(Ownership, SelfMoveAssignmentIsANoOp) {
  typename TestFixture::Managed* p = this->make();
  {
    TypeParam t = TypeParam::adopt(p);
    TypeParam& alias = t;  // through a reference, so compilers do not flag the self-move
    t = std::move(alias);
    EXPECT_EQ(t.get(), p);
    EXPECT_EQ(this->deletes, 0);
  }
  EXPECT_EQ(this->deletes, 1);
}

TYPED_TEST(Ownership, SwapExchangesWithoutReleasing) {
  int other_deletes = 0;
  auto* a = this->make();
  auto* b = make_counted<typename TestFixture::Managed>(other_deletes);
  {
    TypeParam ta = TypeParam::adopt(a);
    TypeParam tb = TypeParam::adopt(b);
    ta.swap(tb);
    EXPECT_EQ(ta.get(), b);
    EXPECT_EQ(tb.get(), a);
    TypeParam empty;
    swap(empty, ta);  // the hidden friend, found by ADL
    EXPECT_EQ(empty.get(), b);
    EXPECT_FALSE(ta);
    EXPECT_EQ(this->deletes + other_deletes, 0);
  }
  EXPECT_EQ(this->deletes, 1);
  EXPECT_EQ(other_deletes, 1);
}

TYPED_TEST(Ownership, ReleaseGivesOwnershipBackWithoutCallingTheDeleter) {
  using M = typename TestFixture::Managed;
  M* p = this->make();
  M* back = nullptr;
  {
    TypeParam t = TypeParam::adopt(p);
    back = t.release();
    EXPECT_FALSE(t);
    EXPECT_EQ(t.get(), nullptr);
  }
  EXPECT_EQ(back, p);
  EXPECT_EQ(this->deletes, 0);
  HandMade<M>::free_uncounted(back);
}

TYPED_TEST(Ownership, ResetReleasesNowAndOnlyOnce) {
  TypeParam t = TypeParam::adopt(this->make());
  t.reset();
  EXPECT_FALSE(t);
  EXPECT_EQ(this->deletes, 1);
  t.reset();
  EXPECT_EQ(this->deletes, 1);
}

TYPED_TEST(Ownership, ValidationFailureInTheConstructorReleasesOnceAndThrows) {
  Layout bad;
  bad.shape = {2, -3};
  auto* p = this->make(bad);
  expect_errc(Errc::negative_shape, [p] { TypeParam t(p); });
  EXPECT_EQ(this->deletes, 1);
}

TYPED_TEST(Ownership, ValidationFailureInTryAdoptReleasesOnceAndReportsTheCode) {
  Layout bad;
  bad.shape = {2, -3};
  auto r = TypeParam::try_adopt(this->make(bad));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::negative_shape);
  EXPECT_NE(std::string(r.error().what()).find("shape[1] is -3"), std::string::npos)
      << r.error().what();
  EXPECT_EQ(this->deletes, 1);
}

TYPED_TEST(Ownership, ANullDeleterIsNeverCalled) {
  using M = typename TestFixture::Managed;
  M* p = this->make();
  p->deleter = nullptr;
  TypeParam::adopt(p).reset();
  { TypeParam destroyed(p); }
  EXPECT_EQ(this->deletes, 0);
  HandMade<M>::free_uncounted(p);
}

TYPED_TEST(Ownership, ConstructingFromNullMakesAnEmptyHandle) {
  TypeParam t(nullptr);
  EXPECT_FALSE(t);
  EXPECT_EQ(t.get(), nullptr);
  EXPECT_EQ(t.release(), nullptr);
  t.reset();
  TypeParam defaulted;
  EXPECT_FALSE(defaulted);
}

TYPED_TEST(Ownership, AdoptingNullIsNullPointer) {
  expect_errc(Errc::null_pointer, [] { static_cast<void>(TypeParam::adopt(nullptr)); });
  auto r = TypeParam::try_adopt(nullptr);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::null_pointer);
}

TYPED_TEST(Ownership, AdoptUncheckedTrustsTheProducerAndStillReleasesOnce) {
  Layout bad;
  bad.shape = {-1};
  {
    TypeParam t = TypeParam::adopt_unchecked(this->make(bad));
    EXPECT_TRUE(t);
  }
  EXPECT_EQ(this->deletes, 1);
}

// ---- malformed tensors -------------------------------------------------------------------

struct Malformed {
  const char* name;
  std::function<void(DLTensor&)> spoil;
  ValidateOptions options;
  Errc code;
};

const std::vector<Malformed>& malformed_tensors() {
  static const std::vector<Malformed> cases = [] {
    ValidateOptions strict;
    strict.require_strides = true;
    ValidateOptions aligned;
    aligned.alignment = 64;
    return std::vector<Malformed>{
        {"negative ndim", [](DLTensor& t) { t.ndim = -1; }, {}, Errc::invalid_ndim},
        {"NULL shape", [](DLTensor& t) { t.shape = nullptr; }, {}, Errc::null_shape},
        {"negative shape", [](DLTensor& t) { t.shape[0] = -2; }, {}, Errc::negative_shape},
        {"NULL data with elements", [](DLTensor& t) { t.data = nullptr; }, {}, Errc::null_data},
        {"zero bits", [](DLTensor& t) { t.dtype.bits = 0; }, {}, Errc::unsupported_dtype},
        {"zero lanes", [](DLTensor& t) { t.dtype.lanes = 0; }, {}, Errc::unsupported_dtype},
        {"unknown code", [](DLTensor& t) { t.dtype.code = 200; }, {}, Errc::unsupported_dtype},
        {"float of 7 bits", [](DLTensor& t) { t.dtype.bits = 7; }, {}, Errc::unsupported_dtype},
        {"negative device id",
         [](DLTensor& t) { t.device.device_id = -1; },
         {},
         Errc::unsupported_device},
        {"element count overflow",
         [](DLTensor& t) { t.shape[0] = INT64_MAX; },
         {},
         Errc::size_overflow},
        {"NULL strides under 1.2 rules", [](DLTensor&) {}, strict, Errc::null_strides},
        {"misaligned data", [](DLTensor& t) { t.byte_offset = 4; }, aligned, Errc::misaligned},
    };
  }();
  return cases;
}

TYPED_TEST(Ownership, EveryMalformedTensorIsReleasedOnceAndRejected) {
  using M = typename TestFixture::Managed;
  using Attempt = std::function<Errc(M*, const ValidateOptions&)>;
  const auto caught = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.code();
    }
    return Errc{};
  };
  const std::pair<const char*, Attempt> attempts[] = {
      {"try_adopt",
       [](M* p, const ValidateOptions& o) {
         auto r = TypeParam::try_adopt(p, o);
         return r ? Errc{} : r.error().code();
       }},
      {"adopt",
       [&](M* p, const ValidateOptions& o) {
         return caught([&] { static_cast<void>(TypeParam::adopt(p, o)); });
       }},
      // The constructor has no options: only rows that need none apply.
      {"constructor",
       [&](M* p, const ValidateOptions&) { return caught([&] { TypeParam t(p); }); }},
  };
  for (const Malformed& row : malformed_tensors()) {
    for (const auto& [how, attempt] : attempts) {
      const bool needs_options = row.options.require_strides || row.options.alignment != 0;
      if (needs_options && std::string(how) == "constructor") continue;
      SCOPED_TRACE(std::string(row.name) + " via " + how);
      this->deletes = 0;
      M* p = this->make();
      row.spoil(p->dl_tensor);
      EXPECT_EQ(attempt(p, row.options), row.code);
      EXPECT_EQ(this->deletes, 1);
    }
  }
}

// ---- what a handle reports ----------------------------------------------------------------

TYPED_TEST(Ownership, ShortcutsReportTheProducersTensor) {
  Layout layout;
  layout.dtype = DataType::int32();
  layout.strides = {1, 2};  // column-major: the producer's strides are reported as given
  auto* p = this->make(layout);
  TypeParam t = TypeParam::adopt(p);
  EXPECT_EQ(t.ndim(), 2);
  EXPECT_EQ(t.shape(), (IntSpan{2, 3}));
  EXPECT_EQ(t.strides(), (IntSpan{1, 2}));
  EXPECT_EQ(t.dtype(), DataType::int32());
  EXPECT_EQ(t.device(), Device::cpu());
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 24);
  EXPECT_EQ(t.byte_offset(), 0u);
  EXPECT_EQ(t.data(), p->dl_tensor.data);
  EXPECT_EQ(t.template data<std::int32_t>(), p->dl_tensor.data);
  EXPECT_EQ(t.template data<const std::int32_t>(), p->dl_tensor.data);
  EXPECT_EQ(t.const_data(), p->dl_tensor.data);
  EXPECT_EQ(t.view().data(), p->dl_tensor.data);
  EXPECT_FALSE(t.read_only());
  expect_errc(Errc::dtype_mismatch, [&] { static_cast<void>(t.template data<float>()); });
}

TYPED_TEST(Ownership, TypedAccessorMatchesTheViewsAccessor) {
  // ManagedTensor::accessor<T, N>() skips the view; it must agree with it, strides derived
  // for NULL and given ones alike, and refuse exactly what the view's accessor refuses.
  for (const std::vector<std::int64_t>& strides : {std::vector<std::int64_t>{}, {1, 2}}) {
    Layout layout;
    layout.strides = strides;
    TypeParam t = TypeParam::adopt(this->make(layout));
    const auto direct = t.template accessor<const float, 2>();
    const auto through_view = t.view().template accessor<const float, 2>();
    EXPECT_EQ(direct.data(), through_view.data());
    for (int d = 0; d < 2; ++d) {
      EXPECT_EQ(direct.size(d), through_view.size(d));
      EXPECT_EQ(direct.stride(d), through_view.stride(d));
    }
    EXPECT_EQ((t.template try_accessor<const float, 3>().error().code()), Errc::rank_mismatch);
    EXPECT_EQ((t.template try_accessor<const double, 2>().error().code()), Errc::dtype_mismatch);
    expect_errc(Errc::rank_mismatch, [&] { static_cast<void>(t.template accessor<float, 1>()); });
  }
}

TYPED_TEST(Ownership, NullStridesAreReportedCompact) {
  // Ten dimensions is past the views' inline storage: the derived strides then live on the
  // heap and must stay valid for as long as the returned Strides object.
  const std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> cases[] = {
      {{4, 1, 3}, {3, 3, 1}},
      {std::vector<std::int64_t>(10, 2), {512, 256, 128, 64, 32, 16, 8, 4, 2, 1}},
  };
  for (const auto& [shape, compact] : cases) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    Layout layout;
    layout.shape = shape;
    TypeParam t = TypeParam::adopt(this->make(layout));
    EXPECT_EQ(t.get()->dl_tensor.strides, nullptr);
    const auto strides = t.strides();
    EXPECT_EQ(IntSpan(strides), IntSpan(compact));
    EXPECT_EQ(strides.size(), compact.size());
    EXPECT_EQ(strides[0], compact[0]);
    EXPECT_EQ(t.view().strides(), IntSpan(compact));
  }
}

TYPED_TEST(Ownership, ByteOffsetIsAppliedToData) {
  auto* p = this->make();
  p->dl_tensor.byte_offset = 4;
  p->dl_tensor.shape[1] = 2;  // the offset eats one float of the producer's six
  TypeParam t = TypeParam::adopt(p);
  EXPECT_EQ(t.byte_offset(), 4u);
  EXPECT_EQ(t.data(), static_cast<char*>(p->dl_tensor.data) + 4);
}

TYPED_TEST(Ownership, AnEmptyTensorWithHugeExtentsReportsZeroElements) {
  // Validation bounds only the element count of non-empty tensors, so the handle must not
  // multiply the other extents of an empty one.
  Layout layout;
  layout.shape = {INT64_MAX, 4, 0};
  layout.strides = {0, 0, 0};
  TypeParam t = TypeParam::adopt(this->make(layout));
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.nbytes(), 0);
}

TEST(LegacyManagedTensor, CarriesNoVersionAndNoFlags) {
  int deletes = 0;
  LegacyManagedTensor t = LegacyManagedTensor::adopt(make_counted<DLManagedTensor>(deletes));
  EXPECT_EQ(t.version().major, 0u);
  EXPECT_EQ(t.version().minor, 0u);
  EXPECT_EQ(t.flags(), 0u);
  EXPECT_FALSE(t.read_only());
  EXPECT_FALSE(t.is_copied());
  EXPECT_FALSE(t.is_subbyte_padded());
  static_assert(!LegacyManagedTensor::is_versioned && ManagedTensor::is_versioned, "");
}

// ---- flags ---------------------------------------------------------------------------------

class VersionedFlags : public ::testing::Test {
 protected:
  ManagedTensor adopt(Layout layout) {
    return ManagedTensor::adopt(make_counted<DLManagedTensorVersioned>(deletes, layout));
  }
  ManagedTensor adopt_with_flags(std::uint64_t flags) {
    Layout layout;
    layout.flags = flags;
    return adopt(layout);
  }
  int deletes = 0;
};

TEST_F(VersionedFlags, ReportsTheProducersVersion) {
  ManagedTensor t = adopt({});
  EXPECT_EQ(t.version().major, static_cast<std::uint32_t>(DLPACK_MAJOR_VERSION));
  EXPECT_EQ(t.version().minor, static_cast<std::uint32_t>(DLPACK_MINOR_VERSION));
}

TEST_F(VersionedFlags, ReadOnlyRefusesEveryMutablePathAndAllowsConstOnes) {
  ManagedTensor t = adopt_with_flags(flag::read_only);
  ASSERT_TRUE(t.read_only());
  EXPECT_TRUE(t.view().read_only());
  const std::pair<const char*, std::function<void()>> mutable_paths[] = {
      {"data<float>", [&] { static_cast<void>(t.data<float>()); }},
      {"view().data<float>", [&] { static_cast<void>(t.view().data<float>()); }},
      {"view().accessor<float, 2>", [&] { static_cast<void>(t.view().accessor<float, 2>()); }},
      {"view().require_writable", [&] { static_cast<void>(t.view().require_writable()); }},
      {"data()", [&] { static_cast<void>(t.data()); }},
      {"view().data()", [&] { static_cast<void>(t.view().data()); }},
      {"view().try_data<float>", [&] { t.view().try_data<float>().value(); }},
      {"view().try_accessor<float, 2>", [&] { t.view().try_accessor<float, 2>().value(); }},
      {"view().try_require_writable", [&] { t.view().try_require_writable().value(); }},
  };
  for (const auto& [name, path] : mutable_paths) {
    SCOPED_TRACE(name);
    expect_errc(Errc::read_only, path);
  }
  EXPECT_EQ(t.data<const float>(), t.const_data());
  EXPECT_EQ(t.view().data<const float>(), t.const_data());
  EXPECT_EQ(t.view().const_data(), t.const_data());
  const auto read = t.view().accessor<const float, 2>();
  EXPECT_EQ(read.data(), t.const_data());
  expect_errc(Errc::read_only, [&] { static_cast<void>(t.accessor<float, 2>()); });
  EXPECT_EQ((t.accessor<const float, 2>().data()), t.const_data());
  EXPECT_EQ(read(1, 2), 0.0f);
}

TEST_F(VersionedFlags, WritableTensorsAllowTheSamePaths) {
  ManagedTensor t = adopt_with_flags(0);
  EXPECT_FALSE(t.read_only());
  t.data<float>()[5] = 7.0f;
  const auto write = t.view().accessor<float, 2>();
  EXPECT_EQ(write(1, 2), 7.0f);
  static_cast<void>(t.view().require_writable());
}

TEST_F(VersionedFlags, IsCopiedIsReported) {
  EXPECT_TRUE(adopt_with_flags(flag::is_copied).is_copied());
  EXPECT_FALSE(adopt_with_flags(flag::read_only).is_copied());
}

TEST_F(VersionedFlags, SubbytePaddedDrivesTheByteCount) {
  Layout fp4;
  fp4.dtype = DataType::float4_e2m1fn();
  fp4.shape = {3};
  ManagedTensor packed = adopt(fp4);
  EXPECT_FALSE(packed.is_subbyte_padded());
  EXPECT_EQ(packed.nbytes(), 2);
  fp4.flags = flag::is_subbyte_type_padded;
  ManagedTensor padded = adopt(fp4);
  EXPECT_TRUE(padded.is_subbyte_padded());
  EXPECT_EQ(padded.nbytes(), 3);
  EXPECT_EQ(padded.view().nbytes(), 3);
}

TEST_F(VersionedFlags, SubbytePaddedOnAWideTypeIsRejectedAndReleased) {
  expect_errc(Errc::invalid_flags, [&] { adopt_with_flags(flag::is_subbyte_type_padded); });
  EXPECT_EQ(deletes, 1);
}

TEST_F(VersionedFlags, UnknownBitsAreKept) {
  const std::uint64_t future = std::uint64_t{1} << 40;
  ManagedTensor t = adopt_with_flags(future | flag::is_copied);
  EXPECT_EQ(t.flags(), future | flag::is_copied);
  EXPECT_EQ(t.view().flags(), future | flag::is_copied);
  EXPECT_FALSE(t.read_only());
  t.data<float>()[0] = 1.0f;  // an unknown bit never means read-only
}

// ---- adopt_with_view: the handle and its view from one validation pass ----------------

// The ownership fixture under the name these tests report.
template <class Handle>
class AdoptWithView : public Ownership<Handle> {};
TYPED_TEST_SUITE(AdoptWithView, HandleKinds, );

// Every fact a view reports, byte count and flags too, compared with the view a handle makes
// afresh.
void expect_same_view_and_bytes(const TensorView& got, const TensorView& want) {
  dlpackpp_test::expect_same_view(got, want);
  EXPECT_EQ(got.nbytes(), want.nbytes());
  EXPECT_EQ(got.flags(), want.flags());
}

TEST(AdoptedTensor, IsAnAggregateOfHandleAndViewAndTheHandleStaysOnePointer) {
  using Adopted = decltype(ManagedTensor::adopt_with_view(nullptr));
  static_assert(std::is_aggregate<Adopted>::value, "structured bindings need an aggregate");
  static_assert(std::is_same<decltype(Adopted::tensor), ManagedTensor>::value, "");
  static_assert(std::is_same<decltype(Adopted::view), TensorView>::value, "");
  static_assert(sizeof(ManagedTensor) == sizeof(void*), "the handle stays one pointer");
  static_assert(std::is_nothrow_move_constructible<Adopted>::value, "");
  static_assert(!std::is_copy_constructible<Adopted>::value, "the handle is move-only");
}

TYPED_TEST(AdoptWithView, AcceptsWhatAdoptAcceptsWithTheViewOfTheSamePass) {
  const std::vector<Layout> layouts = {
      Layout{},                                                    // NULL strides
      Layout{DataType::float32(), {2, 3}, {3, 1}},                 // row-major
      Layout{DataType::float32(), {2, 3}, {1, 2}},                 // column-major
      Layout{DataType::int16(), {4, 1, 5}, {5, 99, 1}},            // size-1 dim, any stride
      Layout{DataType::float64(), {2, 2}, {-2, 1}},                // negative stride: slow path
      Layout{DataType::float32(), {0, 3}, {}},                     // empty: slow path
      Layout{DataType::float32(), {}, {}},                         // zero-dim
      Layout{DataType::uint8(), {2, 2, 2, 2, 2, 2, 2, 2, 2}, {}},  // above the inline rank
  };
  for (const Layout& layout : layouts) {
    SCOPED_TRACE(::testing::PrintToString(layout.shape) + " strides " +
                 ::testing::PrintToString(layout.strides));
    this->deletes = 0;
    auto* p = this->make(layout);
    {
      auto [t, v] = TypeParam::adopt_with_view(p);
      EXPECT_EQ(t.get(), p);
      expect_same_view_and_bytes(v, t.view());
      EXPECT_EQ(this->deletes, 0);
    }
    EXPECT_EQ(this->deletes, 1);

    p = this->make(layout);
    {
      auto tried = TypeParam::try_adopt_with_view(p);
      ASSERT_TRUE(tried);
      EXPECT_EQ(tried->tensor.get(), p);
      expect_same_view_and_bytes(tried->view, tried->tensor.view());
    }
    EXPECT_EQ(this->deletes, 2);
  }
}

TYPED_TEST(AdoptWithView, LegacyNullStridesAreNormalizedToCompactRowMajor) {
  auto [t, v] = TypeParam::adopt_with_view(this->make(Layout{DataType::float32(), {2, 3, 4}}));
  ASSERT_EQ(t.get()->dl_tensor.strides, nullptr);  // the producer's NULL is left as it was
  EXPECT_EQ(Ints(v.strides().begin(), v.strides().end()), (Ints{12, 4, 1}));
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_EQ(v.numel(), 24);
}

TYPED_TEST(AdoptWithView, TheViewReadsTheTensorInPlaceAndSurvivesMovingTheHandle) {
  Layout layout{DataType::float32(), {2, 2}, {}};
  layout.values = {1.5f, 2.5f, 3.5f, 4.5f};
  auto adopted = TypeParam::adopt_with_view(this->make(layout));
  const TensorView view = adopted.view;
  EXPECT_EQ(view.shape().data(), adopted.tensor.get()->dl_tensor.shape);
  std::vector<TypeParam> owners;
  owners.push_back(std::move(adopted.tensor));
  owners.reserve(16);  // moves the handle again, into new storage
  EXPECT_FALSE(adopted.tensor);
  EXPECT_EQ(this->deletes, 0);
  const auto a = view.accessor<const float, 2>();
  EXPECT_EQ(a(0, 0), 1.5f);
  EXPECT_EQ(a(1, 1), 4.5f);
  EXPECT_EQ(Ints(view.strides().begin(), view.strides().end()), (Ints{2, 1}));
  owners.clear();
  EXPECT_EQ(this->deletes, 1);
}

TYPED_TEST(AdoptWithView, EveryFailureReleasesOnceAndReportsAsAdoptDoes) {
  struct Case {
    const char* name;
    Layout layout;
    ValidateOptions options;
    Errc code;
  };
  ValidateOptions strict;
  strict.require_strides = true;
  ValidateOptions aligned;
  aligned.alignment = 64;
  Layout offset{DataType::float32(), {2, 3}, {3, 1}};
  offset.byte_offset = 4;
  std::vector<Case> cases = {
      {"negative extent", Layout{DataType::float32(), {2, -3}, {}}, {}, Errc::negative_shape},
      {"unknown dtype", Layout{DataType(200, 32), {2}, {}}, {}, Errc::unsupported_dtype},
      {"strides required", Layout{}, strict, Errc::null_strides},
      {"misaligned", offset, aligned, Errc::misaligned},
  };
  Layout bad_device{};
  bad_device.device = DLDevice{static_cast<DLDeviceType>(999), 0};
  cases.push_back({"unknown device", bad_device, {}, Errc::unsupported_device});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    this->deletes = 0;
    auto* p = this->make(c.layout);
    const dlpackpp::Error want = TypeParam::try_adopt(p, c.options).error();
    EXPECT_EQ(want.code(), c.code);
    EXPECT_EQ(this->deletes, 1);

    auto tried = TypeParam::try_adopt_with_view(this->make(c.layout), c.options);
    ASSERT_FALSE(tried);
    EXPECT_EQ(tried.error().code(), c.code);
    if (c.code != Errc::misaligned) {  // that message names the address, which differs
      EXPECT_STREQ(tried.error().what(), want.what());
    }
    EXPECT_EQ(this->deletes, 2);

    p = this->make(c.layout);
    dlpackpp_test::expect_errc(c.code, [&] { (void)TypeParam::adopt_with_view(p, c.options); });
    EXPECT_EQ(this->deletes, 3);
  }
}

TYPED_TEST(AdoptWithView, NullIsNullPointerAndReleasesNothing) {
  EXPECT_EQ(TypeParam::try_adopt_with_view(nullptr).error().code(), Errc::null_pointer);
  dlpackpp_test::expect_errc(Errc::null_pointer, [] { (void)TypeParam::adopt_with_view(nullptr); });
}

TEST(AdoptWithViewVersioned, ReadOnlyTravelsInTheView) {
  int deletes = 0;
  Layout layout{};
  layout.flags = dlpackpp::flag::read_only;
  {
    auto adopted =
        ManagedTensor::adopt_with_view(make_counted<DLManagedTensorVersioned>(deletes, layout));
    const TensorView& v = adopted.view;  // a lambda cannot capture a structured binding in C++17
    EXPECT_TRUE(v.read_only());
    EXPECT_NE(v.data<const float>(), nullptr);
    dlpackpp_test::expect_errc(Errc::read_only, [&] { (void)v.data<float>(); });
  }
  EXPECT_EQ(deletes, 1);
}

TEST(AdoptWithViewVersioned, AnotherMajorIsReleasedOnceWithoutTheView) {
  for (const bool throwing : {false, true}) {
    SCOPED_TRACE(throwing ? "adopt_with_view" : "try_adopt_with_view");
    int deletes = 0;
    DLManagedTensorVersioned* p = make_counted<DLManagedTensorVersioned>(deletes);
    p->version.major = DLPACK_MAJOR_VERSION + 1;
    if (throwing) {
      dlpackpp_test::expect_error([&] { (void)ManagedTensor::adopt_with_view(p); },
                                  Errc::version_mismatch, "version.major");
    } else {
      auto tried = ManagedTensor::try_adopt_with_view(p);
      ASSERT_FALSE(tried);
      EXPECT_EQ(tried.error().code(), Errc::version_mismatch);
    }
    EXPECT_EQ(deletes, 1);
  }
}

// ---- adopt_as<T, N>: the typed one-pass consume ------------------------------------------

TYPED_TEST(AdoptWithView, AdoptAsGivesTheHandleAndACheckedAccessor) {
  Layout layout{DataType::float32(), {2, 3}, {}};
  layout.values = {0, 1, 2, 3, 4, 5};
  for (const bool null_strides : {true, false}) {
    SCOPED_TRACE(null_strides ? "NULL strides" : "strides");
    layout.strides = null_strides ? Ints{} : Ints{3, 1};
    this->deletes = 0;
    auto* p = this->make(layout);
    {
      auto [t, a] = TypeParam::template adopt_as<const float, 2>(p);
      EXPECT_EQ(t.get(), p);
      EXPECT_EQ(a.size(0), 2);
      EXPECT_EQ(a.stride(0), 3);  // NULL strides normalized
      EXPECT_EQ(a(1, 2), 5.0f);
      TypeParam moved = std::move(t);  // the accessor reads the tensor, not the handle
      EXPECT_EQ(a(0, 1), 1.0f);
      EXPECT_EQ(this->deletes, 0);
    }
    EXPECT_EQ(this->deletes, 1);
    auto tried = TypeParam::template try_adopt_as<float, 2>(this->make(layout));
    ASSERT_TRUE(tried);
    tried->accessor(0, 0) = 7.0f;
    EXPECT_EQ(tried->tensor.view().template data<const float>()[0], 7.0f);
  }
}

TYPED_TEST(AdoptWithView, AdoptAsFailuresReleaseOnceWithAdoptsOrTheAccessorsError) {
  Layout misaligned{DataType::float32(), {2, 3}, {3, 1}};
  misaligned.byte_offset = 2;
  const std::vector<std::pair<Layout, Errc>> cases = {
      {Layout{DataType::float64(), {2, 3}, {}}, Errc::dtype_mismatch},
      {Layout{DataType::float32(), {6}, {}}, Errc::rank_mismatch},
      {Layout{DataType::float32(), {2, -3}, {}}, Errc::negative_shape},
      {Layout{DataType(200, 32), {2, 3}, {}}, Errc::unsupported_dtype},
      {misaligned, Errc::misaligned},
  };
  for (const auto& [layout, code] : cases) {
    SCOPED_TRACE(dlpackpp::to_string(code));
    this->deletes = 0;
    auto tried = TypeParam::template try_adopt_as<const float, 2>(this->make(layout));
    ASSERT_FALSE(tried);
    EXPECT_EQ(tried.error().code(), code);
    EXPECT_EQ(this->deletes, 1);
    auto* p = this->make(layout);
    expect_errc(code, [&] { (void)TypeParam::template adopt_as<const float, 2>(p); });
    EXPECT_EQ(this->deletes, 2);
  }
  expect_errc(Errc::null_pointer, [] { (void)TypeParam::template adopt_as<float, 1>(nullptr); });
}

TEST(AdoptAsVersioned, ReadOnlyRefusesAMutableAccessorAndAnotherMajorIsAVersionMismatch) {
  int deletes = 0;
  Layout layout{};
  layout.flags = flag::read_only;
  auto tried = ManagedTensor::try_adopt_as<float, 2>(
      make_counted<DLManagedTensorVersioned>(deletes, layout));
  ASSERT_FALSE(tried);
  EXPECT_EQ(tried.error().code(), Errc::read_only);
  EXPECT_EQ(deletes, 1);
  {
    auto [t, a] = ManagedTensor::adopt_as<const float, 2>(
        make_counted<DLManagedTensorVersioned>(deletes, layout));
    EXPECT_TRUE(t.read_only());
    EXPECT_EQ(a.size(1), 3);
  }
  EXPECT_EQ(deletes, 2);
  DLManagedTensorVersioned* p = make_counted<DLManagedTensorVersioned>(deletes);
  p->version.major = DLPACK_MAJOR_VERSION + 1;
  auto other_major = ManagedTensor::try_adopt_as<const float, 2>(p);
  ASSERT_FALSE(other_major);
  EXPECT_EQ(other_major.error().code(), Errc::version_mismatch);
  EXPECT_EQ(deletes, 3);
}

}  // namespace
