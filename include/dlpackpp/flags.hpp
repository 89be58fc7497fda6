// SPDX-License-Identifier: Apache-2.0
/// @file
/// DLManagedTensorVersioned flag bits, available whichever dlpack.h is in force.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/dlpack.hpp"

#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE

/// Bits of DLManagedTensorVersioned::flags. Unknown bits are preserved, never cleared.
namespace flag {
/// The consumer must not write through the tensor.
inline constexpr std::uint64_t read_only = std::uint64_t{1} << 0;
/// The producer made a copy; the consumer may treat the memory as its own.
inline constexpr std::uint64_t is_copied = std::uint64_t{1} << 1;
/// Sub-byte elements (fp4, fp6, int4) occupy one byte each instead of being packed.
inline constexpr std::uint64_t is_subbyte_type_padded = std::uint64_t{1} << 2;
/// Every bit DLPack 1.3 defines.
inline constexpr std::uint64_t known = read_only | is_copied | is_subbyte_type_padded;
}  // namespace flag

#ifdef DLPACK_FLAG_BITMASK_READ_ONLY
static_assert(flag::read_only == DLPACK_FLAG_BITMASK_READ_ONLY,
              "READ_ONLY bit differs from dlpack.h");
#endif
#ifdef DLPACK_FLAG_BITMASK_IS_COPIED
static_assert(flag::is_copied == DLPACK_FLAG_BITMASK_IS_COPIED,
              "IS_COPIED bit differs from dlpack.h");
#endif
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
static_assert(flag::is_subbyte_type_padded == DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED,
              "IS_SUBBYTE_TYPE_PADDED bit differs from dlpack.h");
#endif

DLPACKPP_END_NAMESPACE
