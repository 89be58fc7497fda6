// SPDX-License-Identifier: Apache-2.0
/// @file
/// IntArray: IntSpan's owning sibling, a small array of int64_t held by value. It is what
/// shape() and strides() return when the object they would borrow from is about to die.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/shared_array.hpp"
#include "dlpackpp/int_span.hpp"

#include <cstddef>
#include <cstdint>
#include <iosfwd>

DLPACKPP_BEGIN_NAMESPACE

/// Up to DLPACKPP_VIEW_INLINE_NDIM values stored inline (more on a shared heap block), so it
/// outlives whatever it was copied from. Spans and pointers into it borrow from it: a
/// temporary IntArray hands out values, never addresses (`t.view().strides()[0]` and
/// `for (auto s : t.strides())` work; `IntSpan s = t.strides();` does not compile).
class IntArray {
 public:
  /// Empty.
  IntArray() noexcept = default;
  /// A copy of `values` (allocates above DLPACKPP_VIEW_INLINE_NDIM values).
  explicit IntArray(IntSpan values) : size_(values.size()) {
    std::int64_t* out = inline_;
    if (size_ > static_cast<std::size_t>(DLPACKPP_VIEW_INLINE_NDIM)) {
      heap_ = detail::SharedArray<std::int64_t>(size_);
      out = heap_.data();
    }
    for (std::size_t i = 0; i < size_; ++i) out[i] = values[i];
  }

  /// Number of values.
  std::size_t size() const noexcept { return size_; }
  /// True when there are no values.
  bool empty() const noexcept { return size_ == 0; }
  /// The i-th value (i < size()); by value, so it is safe on a temporary.
  std::int64_t operator[](std::size_t i) const noexcept { return data()[i]; }
  /// First value; valid while this object lives.
  const std::int64_t* data() const& noexcept DLPACKPP_LIFETIMEBOUND {
    return heap_ ? heap_.data() : inline_;
  }
  /// Deleted: the address would die with the temporary.
  const std::int64_t* data() const&& = delete;
  /// Start of the values; valid while this object lives.
  const std::int64_t* begin() const& noexcept DLPACKPP_LIFETIMEBOUND { return data(); }
  /// Deleted: the iterator would die with the temporary.
  const std::int64_t* begin() const&& = delete;
  /// End of the values; valid while this object lives.
  const std::int64_t* end() const& noexcept DLPACKPP_LIFETIMEBOUND { return data() + size_; }
  /// Deleted: the iterator would die with the temporary.
  const std::int64_t* end() const&& = delete;
  /// The values as a span, valid while this object lives.
  IntSpan span() const& noexcept DLPACKPP_LIFETIMEBOUND { return {data(), size_}; }
  /// Deleted: a span of a temporary would dangle; keep the IntArray (`auto s = ...`).
  IntSpan span() const&& = delete;
  /// As span().
  operator IntSpan() const& noexcept DLPACKPP_LIFETIMEBOUND { return span(); }
  /// Deleted: `IntSpan s = t.strides();` would dangle; keep the IntArray (`auto s = ...`).
  operator IntSpan() const&& = delete;

  /// Same values as `b` (works on temporaries, unlike the conversion to IntSpan).
  friend bool operator==(const IntArray& a, IntSpan b) noexcept { return a.span() == b; }
  /// Different values from `b`.
  friend bool operator!=(const IntArray& a, IntSpan b) noexcept { return !(a == b); }
  /// Same values.
  friend bool operator==(const IntArray& a, const IntArray& b) noexcept { return a == b.span(); }
  /// Different values.
  friend bool operator!=(const IntArray& a, const IntArray& b) noexcept { return !(a == b); }
  /// Streams as "[3, 1]".
  template <class Traits>
  friend std::basic_ostream<char, Traits>& operator<<(std::basic_ostream<char, Traits>& os,
                                                      const IntArray& a) {
    return os << a.span();
  }

 private:
  std::size_t size_ = 0;
  detail::SharedArray<std::int64_t> heap_;
  std::int64_t inline_[DLPACKPP_VIEW_INLINE_NDIM] = {};
};

/// What ManagedTensor::strides() returns; the name predates IntArray.
using Strides = IntArray;

DLPACKPP_END_NAMESPACE
