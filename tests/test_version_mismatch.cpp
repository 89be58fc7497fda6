// SPDX-License-Identifier: Apache-2.0
// Adopting versioned tensors of another DLPack major: released without reading past `flags`.
#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include "support/hand_made.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <utility>

namespace {

using dlpackpp::Errc;
using dlpackpp::Error;
using dlpackpp::ManagedTensor;

constexpr std::uint32_t kMajor = DLPACK_MAJOR_VERSION;
constexpr std::uint32_t kMinor = DLPACK_MINOR_VERSION;

// Only the fields another major promises to keep: the malloc'd block ends where dl_tensor
// would begin, so under ASan any read of dl_tensor (or a later field) is a heap overflow.
constexpr std::size_t kStablePrefix = offsetof(DLManagedTensorVersioned, dl_tensor);

void count_and_free(DLManagedTensorVersioned* self) {
  ++*static_cast<int*>(self->manager_ctx);
  std::free(self);
}

DLManagedTensorVersioned* make_foreign(std::uint32_t major, std::uint32_t minor, int& deletes) {
  auto* p = static_cast<DLManagedTensorVersioned*>(std::malloc(kStablePrefix));
  if (p == nullptr) throw std::bad_alloc();
  p->version.major = major;
  p->version.minor = minor;
  p->manager_ctx = &deletes;
  p->deleter = &count_and_free;
  p->flags = 0;
  return p;
}

// Each way in, reporting the code it failed with (Errc{} when it succeeded).
using Attempt = std::function<Errc(DLManagedTensorVersioned*)>;
Errc thrown_by(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("version.major"), std::string::npos) << e.what();
    return e.code();
  }
  return Errc{};
}
const std::pair<const char*, Attempt> kAttempts[] = {
    {"try_adopt",
     [](DLManagedTensorVersioned* p) {
       auto r = ManagedTensor::try_adopt(p);
       return r ? Errc{} : r.error().code();
     }},
    {"adopt",
     [](DLManagedTensorVersioned* p) {
       return thrown_by([p] { static_cast<void>(ManagedTensor::adopt(p)); });
     }},
    {"constructor",
     [](DLManagedTensorVersioned* p) { return thrown_by([p] { ManagedTensor t(p); }); }},
    {"try_adopt_with_view",
     [](DLManagedTensorVersioned* p) {
       auto r = ManagedTensor::try_adopt_with_view(p);
       return r ? Errc{} : r.error().code();
     }},
    {"adopt_with_view",
     [](DLManagedTensorVersioned* p) {
       return thrown_by([p] { static_cast<void>(ManagedTensor::adopt_with_view(p)); });
     }},
    {"try_adopt_as",
     [](DLManagedTensorVersioned* p) {
       auto r = ManagedTensor::try_adopt_as<const float, 2>(p);
       return r ? Errc{} : r.error().code();
     }},
    {"adopt_as",
     [](DLManagedTensorVersioned* p) {
       return thrown_by([p] { static_cast<void>(ManagedTensor::adopt_as<float, 1>(p)); });
     }},
};

const std::uint32_t kForeignMajors[] = {0, kMajor + 1, kMajor + 100, UINT32_MAX};

TEST(VersionMismatch, AnotherMajorIsReleasedOnceWithoutTouchingTheTensor) {
  for (const std::uint32_t major : kForeignMajors) {
    for (const auto& [how, attempt] : kAttempts) {
      SCOPED_TRACE(std::string(how) + " of major " + std::to_string(major));
      int deletes = 0;
      EXPECT_EQ(attempt(make_foreign(major, kMinor, deletes)), Errc::version_mismatch);
      EXPECT_EQ(deletes, 1);
    }
  }
}

TEST(VersionMismatch, TheMessageNamesBothVersions) {
  int deletes = 0;
  auto r = ManagedTensor::try_adopt(make_foreign(kMajor + 1, 7, deletes));
  ASSERT_FALSE(r);
  const std::string what = r.error().what();
  EXPECT_NE(what.find("version.major is " + std::to_string(kMajor + 1)), std::string::npos) << what;
  EXPECT_NE(what.find(std::to_string(kMajor + 1) + ".7"), std::string::npos) << what;
  EXPECT_EQ(deletes, 1);
}

TEST(VersionMismatch, AForeignTensorWithoutDeleterIsRejectedWithoutACall) {
  int deletes = 0;
  DLManagedTensorVersioned* p = make_foreign(kMajor + 1, 0, deletes);
  p->deleter = nullptr;
  auto r = ManagedTensor::try_adopt(p);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::version_mismatch);
  EXPECT_EQ(deletes, 0);
  std::free(p);
}

// A complete scalar tensor of our major with any minor, from the tests' hand-made producer.
DLManagedTensorVersioned* make_scalar(std::uint32_t minor, int& deletes) {
  dlpackpp_test::Layout scalar{dlpackpp::DataType::float32(), {}, {}};
  scalar.values = {0.5f};
  DLManagedTensorVersioned* p =
      dlpackpp_test::make_counted<DLManagedTensorVersioned>(deletes, scalar);
  p->version.minor = minor;
  return p;
}

TEST(VersionMismatch, AnyMinorOfOurMajorIsAccepted) {
  for (const std::uint32_t minor : {0u, kMinor, kMinor + 5, UINT32_MAX}) {
    SCOPED_TRACE("minor " + std::to_string(minor));
    int deletes = 0;
    DLManagedTensorVersioned* p = make_scalar(minor, deletes);
    {
      ManagedTensor t = ManagedTensor::adopt(p);
      EXPECT_EQ(t.version().major, kMajor);
      EXPECT_EQ(t.version().minor, minor);
      EXPECT_EQ(*t.data<const float>(), 0.5f);
      EXPECT_EQ(deletes, 0);
    }
    EXPECT_EQ(deletes, 1);
  }
}

}  // namespace
