// SPDX-License-Identifier: Apache-2.0
/// @file
/// IntSpan: a read-only view of int64_t values, the currency of shapes and strides.
#pragma once

#include "dlpackpp/detail/config.hpp"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

/// A read-only span of int64_t: from `{2, 3}`, a `std::vector` or `std::array` of int64_t, or a
/// pointer and a size. Like std::string_view it never owns; the values must outlive it.
class IntSpan {
 public:
  /// The element type.
  using value_type = std::int64_t;
  /// Iterators are plain pointers.
  using const_iterator = const std::int64_t*;

  /// Empty.
  constexpr IntSpan() noexcept = default;
  /// `size` values starting at `data` (which may be NULL only when `size` is 0).
  constexpr IntSpan(const std::int64_t* data, std::size_t size) noexcept
      : data_(data), size_(size) {}
// Borrowing a braced list is the point (as std::span does in C++26). GCC's
// -Winit-list-lifetime fires on this definition for every user, not at a dangling use, so it
// is silenced here; clang diagnoses the dangling use itself through DLPACKPP_LIFETIMEBOUND.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  /// A braced list; valid until the end of the full expression, as for any initializer_list,
  /// so pass `{2, 3}` straight to a call, never keep `IntSpan s{2, 3};` (clang: -Wdangling).
  constexpr IntSpan(std::initializer_list<std::int64_t> values DLPACKPP_LIFETIMEBOUND) noexcept
      : data_(values.begin()), size_(values.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  /// A C array.
  template <std::size_t N>
  constexpr IntSpan(const std::int64_t (&values)[N]) noexcept : data_(values), size_(N) {}
  /// Any contiguous container of int64_t with data() and size() (std::vector, std::array).
  template <class C,
            class = std::enable_if_t<
                !std::is_same<std::decay_t<C>, IntSpan>::value &&
                std::is_convertible<decltype(std::declval<const C&>().data()),
                                    const std::int64_t*>::value &&
                std::is_convertible<decltype(std::declval<const C&>().size()), std::size_t>::value>>
  constexpr IntSpan(const C& container DLPACKPP_LIFETIMEBOUND) noexcept
      : data_(container.data()), size_(static_cast<std::size_t>(container.size())) {}

  /// First value (or NULL when empty and built without storage).
  constexpr const std::int64_t* data() const noexcept { return data_; }
  /// Number of values.
  constexpr std::size_t size() const noexcept { return size_; }
  /// True when there are no values.
  constexpr bool empty() const noexcept { return size_ == 0; }
  /// The i-th value; i must be < size().
  constexpr std::int64_t operator[](std::size_t i) const noexcept { return data_[i]; }
  /// Start of the values.
  constexpr const_iterator begin() const noexcept { return data_; }
  /// One past the last value.
  constexpr const_iterator end() const noexcept { return data_ + size_; }

  /// Same length and same values.
  friend constexpr bool operator==(IntSpan a, IntSpan b) noexcept {
    if (a.size_ != b.size_) return false;
    for (std::size_t i = 0; i < a.size_; ++i) {
      if (a.data_[i] != b.data_[i]) return false;
    }
    return true;
  }
  /// Different length or values.
  friend constexpr bool operator!=(IntSpan a, IntSpan b) noexcept { return !(a == b); }

  /// Streams as "[2, 3]".
  template <class Traits>
  friend std::basic_ostream<char, Traits>& operator<<(std::basic_ostream<char, Traits>& os,
                                                      IntSpan s) {
    os << '[';
    for (std::size_t i = 0; i < s.size_; ++i) {
      if (i != 0) os << ", ";
      os << s.data_[i];
    }
    return os << ']';
  }

 private:
  const std::int64_t* data_ = nullptr;
  std::size_t size_ = 0;
};

DLPACKPP_END_NAMESPACE
