// SPDX-License-Identifier: Apache-2.0
// BasicManagedTensor: the ownership matrix for both handle kinds, adoption checks, accessors,
// flags.
#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include "support/expect_error.hpp"

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
using dlpackpp::ValidateOptions;
namespace flag = dlpackpp::flag;

// What the hand-made producer exports; the default is a valid 2x3 float32 with NULL strides.
struct Layout {
  DataType dtype = DataType::float32();
  std::vector<std::int64_t> shape{2, 3};
  std::vector<std::int64_t> strides{};  // empty: the producer sends NULL
  std::uint64_t flags = 0;              // versioned tensors only
};

// A producer written against the C structs alone, so that counting does not depend on the
// code under test: one heap object holds the struct, its arrays and the elements, and the
// deleter counts before freeing it.
template <class M>
struct HandMade {
  M managed{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  std::vector<std::uint64_t> storage;
  int* deletes = nullptr;

  static void count_and_free(M* self) {
    auto* made = static_cast<HandMade*>(self->manager_ctx);
    ++*made->deletes;
    delete made;
  }
  // For tensors the handle must never release (NULL deleter, release()).
  static void free_uncounted(M* self) { delete static_cast<HandMade*>(self->manager_ctx); }
};

template <class M>
M* make_counted(int& deletes, const Layout& layout = {}) {
  auto* made = new HandMade<M>{};
  made->shape = layout.shape;
  made->strides = layout.strides;
  // Any zero (or, for malformed layouts, negative) extent first: the others may then
  // multiply past int64.
  std::int64_t numel = 1;
  for (std::int64_t extent : layout.shape) numel = extent <= 0 ? 0 : numel;
  for (std::size_t d = 0; d < layout.shape.size() && numel != 0; ++d) numel *= layout.shape[d];
  // Padded size is the larger one; one spare word keeps data non-NULL for empty tensors.
  made->storage.assign(static_cast<std::size_t>(layout.dtype.storage_bytes(numel, true)) / 8 + 1,
                       0);
  made->deletes = &deletes;

  M& m = made->managed;
  m.dl_tensor.data = made->storage.data();
  m.dl_tensor.device = Device::cpu();
  m.dl_tensor.ndim = static_cast<decltype(m.dl_tensor.ndim)>(made->shape.size());
  m.dl_tensor.dtype = layout.dtype;
  m.dl_tensor.shape = made->shape.empty() ? nullptr : made->shape.data();
  m.dl_tensor.strides = made->strides.empty() ? nullptr : made->strides.data();
  m.manager_ctx = made;
  m.deleter = &HandMade<M>::count_and_free;
  if constexpr (std::is_same<M, DLManagedTensorVersioned>::value) {
    m.version.major = DLPACK_MAJOR_VERSION;
    m.version.minor = DLPACK_MINOR_VERSION;
    m.flags = layout.flags;
  }
  return &m;
}

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

}  // namespace
