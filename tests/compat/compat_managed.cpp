// SPDX-License-Identifier: Apache-2.0
// Owning handles against this header's own managed structs, built by hand the way a C
// producer would: LegacyManagedTensor always, ManagedTensor where the header is versioned.
#include "compat_check.hpp"

#include <cstdint>
#include <utility>

// --- ManagedTensor section: compiled once <dlpackpp/managed_tensor.hpp> exists --------------
#if __has_include(<dlpackpp/managed_tensor.hpp>)
#include <dlpackpp/managed_tensor.hpp>
#define DLPACKPP_COMPAT_HAVE_MANAGED_TENSOR 1
#else
#define DLPACKPP_COMPAT_HAVE_MANAGED_TENSOR 0
#endif

namespace dlpackpp_compat {

#if DLPACKPP_COMPAT_HAVE_MANAGED_TENSOR
namespace {

using Ndim = decltype(DLTensor::ndim);

// One producer-side allocation per export, as DLPack intends; the deleter counts its calls
// so that "exactly once" is checked, not assumed.
struct Export {
  float data[6] = {0, 1, 2, 3, 4, 5};
  std::int64_t shape[2] = {2, 3};
  int deletes = 0;
};

DLTensor tensor_of(Export& e) {
  DLTensor t{};
  t.data = e.data;
  t.device = dlpackpp::Device::cpu();
  t.ndim = Ndim{2};
  t.dtype = dlpackpp::DataType::float32();
  t.shape = e.shape;
  t.strides = nullptr;
  t.byte_offset = 0;
  return t;
}

void legacy_deleter(DLManagedTensor* self) { ++static_cast<Export*>(self->manager_ctx)->deletes; }

DLManagedTensor legacy_of(Export& e) {
  DLManagedTensor m{};
  m.dl_tensor = tensor_of(e);
  m.manager_ctx = &e;
  m.deleter = &legacy_deleter;
  return m;
}

#if DLPACKPP_HAS_VERSIONED
void versioned_deleter(DLManagedTensorVersioned* self) {
  ++static_cast<Export*>(self->manager_ctx)->deletes;
}

DLManagedTensorVersioned versioned_of(Export& e, std::uint64_t flags) {
  DLManagedTensorVersioned m{};
  m.version.major = DLPACK_MAJOR_VERSION;
  m.version.minor = DLPACK_MINOR_VERSION;
  m.manager_ctx = &e;
  m.deleter = &versioned_deleter;
  m.flags = flags;
  m.dl_tensor = tensor_of(e);
  return m;
}
#endif

}  // namespace
#endif

void check_managed_tensor() {
#if DLPACKPP_COMPAT_HAVE_MANAGED_TENSOR
  using dlpackpp::LegacyManagedTensor;
  static_assert(sizeof(LegacyManagedTensor) == sizeof(void*), "one pointer");

  {
    Export e;
    DLManagedTensor m = legacy_of(e);
    {
      LegacyManagedTensor h = LegacyManagedTensor::adopt(&m);
      DLPACKPP_COMPAT_CHECK(static_cast<bool>(h) && h.get() == &m);
      DLPACKPP_COMPAT_CHECK(h.ndim() == 2 && h.numel() == 6);
      DLPACKPP_COMPAT_CHECK(h.shape().size() == 2 && h.strides().size() == 2);
      DLPACKPP_COMPAT_CHECK(h.dtype() == dlpackpp::DataType::float32());
      DLPACKPP_COMPAT_CHECK(h.device() == dlpackpp::Device::cpu());
      DLPACKPP_COMPAT_CHECK(h.view().is_contiguous() && h.data<float>() == e.data);
      LegacyManagedTensor moved = std::move(h);
      DLPACKPP_COMPAT_CHECK(!h && static_cast<bool>(moved));
      DLPACKPP_COMPAT_CHECK(e.deletes == 0);
    }
    DLPACKPP_COMPAT_CHECK(e.deletes == 1);
  }
  {
    // release() hands ownership back; the deleter is then the caller's to call.
    Export e;
    DLManagedTensor m = legacy_of(e);
    LegacyManagedTensor h(&m);
    DLManagedTensor* raw = h.release();
    DLPACKPP_COMPAT_CHECK(raw == &m && !h);
    h.reset();
    DLPACKPP_COMPAT_CHECK(e.deletes == 0);
    raw->deleter(raw);
    DLPACKPP_COMPAT_CHECK(e.deletes == 1);
  }
  {
    // A malformed tensor is released through its deleter and rejected.
    Export e;
    e.shape[1] = -3;
    DLManagedTensor m = legacy_of(e);
    DLPACKPP_COMPAT_CHECK_ERRC(LegacyManagedTensor::try_adopt(&m), negative_shape);
    DLPACKPP_COMPAT_CHECK(e.deletes == 1);
  }
  DLPACKPP_COMPAT_CHECK_ERRC(LegacyManagedTensor::try_adopt(nullptr), null_pointer);

#if DLPACKPP_HAS_VERSIONED
  using dlpackpp::ManagedTensor;
  static_assert(sizeof(ManagedTensor) == sizeof(void*), "one pointer");
  {
    Export e;
    DLManagedTensorVersioned m = versioned_of(e, DLPACK_FLAG_BITMASK_READ_ONLY);
    {
      ManagedTensor h = ManagedTensor::adopt(&m);
      DLPACKPP_COMPAT_CHECK(h.version().major == DLPACK_MAJOR_VERSION);
      DLPACKPP_COMPAT_CHECK(h.read_only() && !h.is_copied());
      DLPACKPP_COMPAT_CHECK(h.flags() == DLPACK_FLAG_BITMASK_READ_ONLY);
      DLPACKPP_COMPAT_CHECK(h.view().read_only() && h.numel() == 6);
      DLPACKPP_COMPAT_CHECK(h.data<const float>() == e.data);
    }
    DLPACKPP_COMPAT_CHECK(e.deletes == 1);
  }
  {
    // Another major version: released without being read, then refused.
    Export e;
    DLManagedTensorVersioned m = versioned_of(e, 0);
    m.version.major = DLPACK_MAJOR_VERSION + 1;
    DLPACKPP_COMPAT_CHECK_ERRC(ManagedTensor::try_adopt(&m), version_mismatch);
    DLPACKPP_COMPAT_CHECK(e.deletes == 1);
  }
  {
    // A newer minor is accepted.
    Export e;
    DLManagedTensorVersioned m = versioned_of(e, 0);
    m.version.minor = DLPACK_MINOR_VERSION + 1;
    auto r = ManagedTensor::try_adopt(&m);
    DLPACKPP_COMPAT_CHECK(r.has_value());
    DLPACKPP_COMPAT_CHECK(e.deletes == 0);
  }
#endif
#endif
}

}  // namespace dlpackpp_compat
