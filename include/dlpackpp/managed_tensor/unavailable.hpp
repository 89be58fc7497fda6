// SPDX-License-Identifier: Apache-2.0
/// @file
/// What `ManagedTensor` names where the dlpack.h in force predates DLManagedTensorVersioned: a
/// stand-in whose every use is one readable compile error. Defines nothing where the header
/// has the versioned struct; apart from BasicManagedTensor because it is no part of it.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/dlpack.hpp"

DLPACKPP_BEGIN_NAMESPACE
#if !DLPACKPP_HAS_VERSIONED
namespace detail {

/// Stands in for ManagedTensor where the dlpack.h in force predates DLManagedTensorVersioned:
/// naming it is one readable error instead of a cascade of undeclared identifiers.
template <bool Available = false>
struct ManagedTensorUnavailable {
  static_assert(Available,
                "dlpackpp: ManagedTensor needs DLManagedTensorVersioned (DLPack >= 1.0), but "
                "the dlpack.h in force is " DLPACKPP_DLPACK_VERSION_STRING
                ". Drop "
                "DLPACKPP_USE_BUNDLED_DLPACK=0 / DLPACKPP_USE_SYSTEM_DLPACK=ON / "
                "DLPACKPP_DLPACK_HEADER to use the bundled DLPack 1.3 header, include a newer "
                "dlpack.h first, or use LegacyManagedTensor");
  /// Refused, as every factory below: ManagedTensor::adopt(p) fails here, readably.
  template <class... A>
  static ManagedTensorUnavailable adopt(A&&...);
  /// Refused.
  template <class... A>
  static ManagedTensorUnavailable try_adopt(A&&...);
  /// Refused.
  template <class... A>
  static ManagedTensorUnavailable adopt_unchecked(A&&...);
  /// Refused.
  template <class... A>
  static ManagedTensorUnavailable adopt_with_view(A&&...);
  /// Refused.
  template <class... A>
  static ManagedTensorUnavailable try_adopt_with_view(A&&...);
  /// Refused.
  template <class T, int N, class... A>
  static ManagedTensorUnavailable adopt_as(A&&...);
  /// Refused.
  template <class T, int N, class... A>
  static ManagedTensorUnavailable try_adopt_as(A&&...);
};

}  // namespace detail
#endif
DLPACKPP_END_NAMESPACE
