// SPDX-License-Identifier: Apache-2.0
/// @file
/// Small string helpers shared by the to_string/parse pairs of Device and DataType.
#pragma once

#include "dlpackpp/detail/config.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace dlpackpp {
inline namespace v0 {
namespace detail {

/// Parses a canonical decimal: digits only, no sign, no leading zero (except "0" itself),
/// at most `max`. Canonical form is what makes parse the exact inverse of to_string.
constexpr bool parse_decimal(std::string_view s, std::uint64_t max, std::uint64_t& out) noexcept {
  if (s.empty() || (s.size() > 1 && s[0] == '0')) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (v > (max - digit) / 10) return false;
    v = v * 10 + digit;
  }
  out = v;
  return true;
}

/// True when the NUL-terminated `a` spells exactly `b`.
constexpr bool names_equal(const char* a, std::string_view b) noexcept {
  std::size_t i = 0;
  for (; a[i] != '\0'; ++i) {
    if (i >= b.size() || a[i] != b[i]) return false;
  }
  return i == b.size();
}

/// Quotes user input in error messages so that empty or odd strings stay visible.
inline std::string quoted(std::string_view s) {
  std::string q;
  q.reserve(s.size() + 2);
  q.push_back('"');
  q.append(s.data(), s.size());
  q.push_back('"');
  return q;
}

}  // namespace detail
}  // namespace v0
}  // namespace dlpackpp
