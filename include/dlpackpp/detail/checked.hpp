// SPDX-License-Identifier: Apache-2.0
/// @file
/// Overflow-checked int64 arithmetic for sizes and extents coming from untrusted producers.
#pragma once

#include "dlpackpp/detail/config.hpp"

#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// a * b into out; true (and `out` unspecified) when it does not fit in int64_t.
DLPACKPP_HOST_DEVICE constexpr bool mul_overflows(std::int64_t a, std::int64_t b,
                                                  std::int64_t& out) noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__)
  return __builtin_mul_overflow(a, b, &out);
#else
  if (a == 0 || b == 0) {
    out = 0;
    return false;
  }
  const std::int64_t max = INT64_MAX, min = INT64_MIN;
  if (a > 0 ? (b > 0 ? a > max / b : b < min / a) : (b > 0 ? a < min / b : a != 0 && b < max / a)) {
    return true;
  }
  out = a * b;
  return false;
#endif
}

/// a + b into out; true (and `out` unspecified) when it does not fit in int64_t.
DLPACKPP_HOST_DEVICE constexpr bool add_overflows(std::int64_t a, std::int64_t b,
                                                  std::int64_t& out) noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__)
  return __builtin_add_overflow(a, b, &out);
#else
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return true;
  out = a + b;
  return false;
#endif
}

/// Whether a byte count that fits in int64 also fits the platform's size_t: always where
/// size_t is 64-bit; on 32-bit targets larger tensors are refused instead of having their
/// sizes wrapped.
constexpr bool fits_size_t(std::int64_t bytes) noexcept {
#if SIZE_MAX < INT64_MAX
  return static_cast<std::uint64_t>(bytes) <= SIZE_MAX;
#else
  static_cast<void>(bytes);
  return true;
#endif
}

}  // namespace detail
DLPACKPP_END_NAMESPACE
