// SPDX-License-Identifier: Apache-2.0
/// @file
/// Conversions between the two handle kinds: to_versioned() wraps a legacy tensor for
/// consumers of DLPack >= 1.0, to_legacy() unwraps or wraps a versioned one for consumers that
/// only speak DLPack < 1.0. The original deleter stays responsible for the memory either way.
/// Only where the dlpack.h in force declares DLManagedTensorVersioned.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/recycled_block.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/managed_tensor.hpp"

#include <cstdint>
#include <new>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

#if DLPACKPP_HAS_VERSIONED
namespace detail {
// A wrapper struct of kind To around an owned tensor of kind From; its deleter releases the
// inner tensor (through its own deleter, exactly once) and then frees the wrapper.
template <class To, class From>
struct ConversionWrapper {
  To outer;
  From* inner;

  static void deleter(To* self) noexcept {
    auto* wrapper = static_cast<ConversionWrapper*>(self->manager_ctx);
    release_to_producer(wrapper->inner);
    dispose(wrapper);
  }

  // When `t` is one of our wrappers, gives back the tensor it wraps (freeing the wrapper)
  // so that a chain of conversions never grows; NULL otherwise.
  static From* unwrap(To* t) noexcept {
    if (t->deleter != &deleter) return nullptr;
    auto* wrapper = static_cast<ConversionWrapper*>(t->manager_ctx);
    From* inner = wrapper->inner;
    dispose(wrapper);
    return inner;
  }

  /// A wrapper around `inner`, which it then owns; on bad_alloc nothing changes hands.
  static To* wrap(From* inner) {
    // A legacy producer imported in a loop (NumPy 1.x, PyTorch 1.x, each import wrapped for
    // the versioned handle) then reuses one block instead of calling the allocator each time.
    auto* wrapper = ::new (RecycledBlock<ConversionWrapper>::take()) ConversionWrapper{};
    wrapper->inner = inner;
    wrapper->outer.dl_tensor = inner->dl_tensor;
    wrapper->outer.manager_ctx = wrapper;
    wrapper->outer.deleter = &deleter;
    return &wrapper->outer;
  }

 private:
  static void dispose(ConversionWrapper* wrapper) noexcept {
    wrapper->~ConversionWrapper();
    RecycledBlock<ConversionWrapper>::give_back(wrapper);
  }
};
/// The versioned wrapper around a legacy tensor already checked under `flags`: the one place
/// the wrap is made, without validating again (adoption just did). On bad_alloc `legacy`
/// still owns its tensor.
inline ManagedTensor versioned_from_checked(LegacyManagedTensor&& legacy, std::uint64_t flags) {
  using Wrapper = ConversionWrapper<DLManagedTensorVersioned, DLManagedTensor>;
  DLManagedTensorVersioned* out = Wrapper::wrap(legacy.get());
  static_cast<void>(legacy.release());
  out->version.major = DLPACKPP_DLPACK_MAJOR;
  out->version.minor = DLPACKPP_DLPACK_MINOR;
  out->flags = flags;
  return ManagedTensor::adopt_unchecked(out);
}
}  // namespace detail

/// A versioned tensor that owns `legacy`; the legacy deleter stays responsible for the
/// memory and runs exactly once. `flags` are the new tensor's flags (e.g. flag::read_only).
/// On failure `legacy` is left untouched.
inline Result<ManagedTensor> try_to_versioned(LegacyManagedTensor&& legacy,
                                              std::uint64_t flags = 0) {
  if (!legacy) return detail::make_error(Errc::null_pointer, "to_versioned of an empty handle");
  // New flags can change what the tensor means (IS_SUBBYTE_TYPE_PADDED changes its byte
  // size), so it is checked again under them.
  ValidateOptions options;
  options.flags = flags;
  Result<void> valid = validate(legacy.get()->dl_tensor, options);
  if (!valid) return valid.error();
  return detail::versioned_from_checked(std::move(legacy), flags);
}
/// As try_to_versioned, throwing on failure.
inline ManagedTensor to_versioned(LegacyManagedTensor&& legacy, std::uint64_t flags = 0) {
  return try_to_versioned(std::move(legacy), flags).value();
}

/// A legacy tensor that owns `tensor`, for consumers that only speak DLPack < 1.0. Legacy
/// tensors carry no flags, so a READ_ONLY tensor is refused (Errc::read_only) unless
/// `drop_read_only`, and a padded sub-byte one always is (Errc::invalid_flags). A tensor
/// that to_versioned() wrapped comes back unwrapped. On failure `tensor` is left untouched.
inline Result<LegacyManagedTensor> try_to_legacy(ManagedTensor&& tensor,
                                                 bool drop_read_only = false) {
  if (!tensor) return detail::make_error(Errc::null_pointer, "to_legacy of an empty handle");
  if (tensor.read_only() && !drop_read_only) {
    return detail::make_error(Errc::read_only,
                              "tensor is READ_ONLY and a legacy DLManagedTensor cannot say so "
                              "(pass drop_read_only = true to convert anyway)");
  }
  if (tensor.is_subbyte_padded()) {
    return detail::make_error(Errc::invalid_flags,
                              "tensor has IS_SUBBYTE_TYPE_PADDED, which a legacy DLManagedTensor "
                              "cannot express");
  }
  using Back = detail::ConversionWrapper<DLManagedTensorVersioned, DLManagedTensor>;
  if (DLManagedTensor* original = Back::unwrap(tensor.get())) {
    static_cast<void>(tensor.release());
    return LegacyManagedTensor::adopt_unchecked(original);
  }
  using Wrapper = detail::ConversionWrapper<DLManagedTensor, DLManagedTensorVersioned>;
  DLManagedTensor* out = Wrapper::wrap(tensor.get());
  static_cast<void>(tensor.release());
  return LegacyManagedTensor::adopt_unchecked(out);
}
/// As try_to_legacy, throwing on failure.
inline LegacyManagedTensor to_legacy(ManagedTensor&& tensor, bool drop_read_only = false) {
  return try_to_legacy(std::move(tensor), drop_read_only).value();
}
#endif

DLPACKPP_END_NAMESPACE
