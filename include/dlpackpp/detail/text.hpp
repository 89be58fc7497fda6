// SPDX-License-Identifier: Apache-2.0
/// @file
/// Small string helpers shared by the to_string/parse pairs of Device and DataType.
#pragma once

#include "dlpackpp/detail/config.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE
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

/// Builds messages and names through non-template overloads only: std::string's own
/// operator+= and append are templates instantiated once per literal length, which adds up
/// in a header every translation unit includes. A std::string goes in through its conversion
/// to std::string_view: an overload taking `const std::string&` would make every `<<` weigh
/// std::string's constructor templates during overload resolution.
class TextBuilder {
 public:
  /// Appends text.
  TextBuilder& operator<<(std::string_view v) {
    text_.append(v.data(), v.size());
    return *this;
  }
  /// Appends a NUL-terminated string.
  TextBuilder& operator<<(const char* v) { return *this << std::string_view(v); }
  /// Appends one character.
  TextBuilder& operator<<(char c) {
    text_.push_back(c);
    return *this;
  }
  /// Appends a number in decimal (narrower types promote to int).
  TextBuilder& operator<<(int v) { return *this << std::to_string(v); }
  /// Appends a number in decimal.
  TextBuilder& operator<<(long v) { return *this << std::to_string(v); }
  /// Appends a number in decimal.
  TextBuilder& operator<<(long long v) { return *this << std::to_string(v); }
  /// Appends a number in decimal.
  TextBuilder& operator<<(unsigned v) { return *this << std::to_string(v); }
  /// Appends a number in decimal.
  TextBuilder& operator<<(unsigned long v) { return *this << std::to_string(v); }
  /// Appends a number in decimal.
  TextBuilder& operator<<(unsigned long long v) { return *this << std::to_string(v); }
  /// Appends `n` integers as "[2, 3]".
  TextBuilder& list(const std::int64_t* values, std::size_t n) {
    *this << '[';
    for (std::size_t i = 0; i < n; ++i) {
      if (i != 0) *this << ", ";
      *this << values[i];
    }
    return *this << ']';
  }
  /// Appends "true" or "false".
  TextBuilder& operator<<(bool v) { return *this << (v ? "true" : "false"); }
  TextBuilder& operator<<(const void*) = delete;  // would otherwise print as a bool

  /// The text so far.
  std::string_view view() const noexcept { return text_; }
  /// Moves the text out.
  std::string take() noexcept { return std::move(text_); }

 private:
  std::string text_;
};

/// Quotes user input in error messages so that empty or odd strings stay visible.
inline std::string quoted(std::string_view s) {
  TextBuilder q;
  q << '"' << s << '"';
  return q.take();
}

}  // namespace detail
DLPACKPP_END_NAMESPACE
