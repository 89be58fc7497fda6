// SPDX-License-Identifier: Apache-2.0
/// @file
/// ValidateOptions: how strict validation is beyond what DLPack always requires.
#pragma once

#include "dlpackpp/detail/config.hpp"

#include <cstddef>
#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE

/// How strict validate() is beyond what DLPack always requires.
struct ValidateOptions {
  /// Refuse NULL strides when ndim > 0, as DLPack >= 1.2 requires of producers. Off by
  /// default because 0.x/1.0/1.1 producers (and some current ones) still send NULL.
  bool require_strides = false;
  /// Bytes that data + byte_offset must be aligned to (a power of two); 0 checks nothing.
  std::size_t alignment = 0;
  /// The managed tensor's flags: IS_SUBBYTE_TYPE_PADDED changes byte sizes and is refused
  /// on types of 8 bits or more.
  std::uint64_t flags = 0;
};

DLPACKPP_END_NAMESPACE
