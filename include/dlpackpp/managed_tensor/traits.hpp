// SPDX-License-Identifier: Apache-2.0
/// @file
/// The two managed C structs as every owner of one sees them: their names and whether they
/// carry a version (managed_traits), how one goes back to its producer, and the one
/// version-mismatch error. Apart from BasicManagedTensor because conversions.hpp, the exchange
/// API and the Python capsules hand structs back and refuse other majors the same way.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/error.hpp"

#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// What an owner needs to know of managed struct M: `versioned` and its C `name`.
template <class M>
struct managed_traits;

/// The legacy struct: no version, no flags.
template <>
struct managed_traits<DLManagedTensor> {
  /// False: the struct has neither `version` nor `flags`.
  static constexpr bool versioned = false;
  /// The C name, for messages.
  static constexpr const char* name = "DLManagedTensor";
};
#if DLPACKPP_HAS_VERSIONED
/// The DLPack >= 1.0 struct, with `version` and `flags`.
template <>
struct managed_traits<DLManagedTensorVersioned> {
  /// True: `version` and `flags` are there to read.
  static constexpr bool versioned = true;
  /// The C name, for messages.
  static constexpr const char* name = "DLManagedTensorVersioned";
};
#endif

/// Errc::version_mismatch for a struct of another DLPack major: `field` names the
/// `version.major` that was read, `hint` is appended. One wording for tensors and tables.
DLPACKPP_COLD inline Error version_mismatch_error(const char* field, std::uint32_t major,
                                                  std::uint32_t minor, const char* hint = "") {
  return make_error(Errc::version_mismatch, field, " is ", major, " (version ", major, '.', minor,
                    "), this build reads DLPack major ", DLPACKPP_DLPACK_MAJOR, " only", hint);
}

/// Hands a tensor back to its producer: the deleter, when there is one, exactly once.
template <class M>
void release_to_producer(M* p) noexcept {
  if (p != nullptr && p->deleter != nullptr) p->deleter(p);
}

}  // namespace detail
DLPACKPP_END_NAMESPACE
