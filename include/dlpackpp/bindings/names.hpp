// SPDX-License-Identifier: Apache-2.0
/// @file
/// What a binding library's signature says each dlpackpp parameter takes, as compile-time
/// text both casters hand to their library's `const_name`: `float32[*, *] writable` for a
/// `TensorAccessor<float, 2>`, `float32[*, *]` for a `TensorAccessor<const float, 2>`.
#pragma once
#ifndef DLPACKPP_BINDINGS_NAMES_HPP_
#define DLPACKPP_BINDINGS_NAMES_HPP_

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <type_traits>

DLPACKPP_BEGIN_NAMESPACE
namespace bindings {
namespace detail {

/// Writes `text` at `out` (when not NULL) and returns how many characters it takes, so one
/// function both measures and fills a name.
constexpr std::size_t put_text(char* out, const char* text) noexcept {
  std::size_t n = 0;
  for (; text[n] != '\0'; ++n) {
    if (out != nullptr) out[n] = text[n];
  }
  return n;
}

/// As put_text, for a number in decimal.
constexpr std::size_t put_number(char* out, unsigned value) noexcept {
  char digits[12] = {};
  std::size_t count = 0;
  do {
    digits[count++] = static_cast<char>('0' + value % 10u);
    value /= 10u;
  } while (value != 0u);
  for (std::size_t i = 0; i < count; ++i) {
    if (out != nullptr) out[i] = digits[count - 1 - i];
  }
  return count;
}

/// The accessor's parameter name: DataType::to_string()'s spelling of `dtype`, one `*` per
/// dimension, and ` writable` when the accessor writes.
constexpr std::size_t put_accessor_name(char* out, DataType dtype, int rank,
                                        bool writable) noexcept {
  std::size_t n = 0;
  auto at = [&out, &n]() { return out != nullptr ? out + n : nullptr; };
  n += put_text(at(), ::dlpackpp::detail::code_name(dtype.code()));
  if (::dlpackpp::detail::width_prefix(dtype.code()) != nullptr) {
    n += put_number(at(), dtype.bits());
  }
  if (dtype.lanes() != 1) {
    n += put_text(at(), "x");
    n += put_number(at(), dtype.lanes());
  }
  n += put_text(at(), "[");
  for (int d = 0; d < rank; ++d) n += put_text(at(), d == 0 ? "*" : ", *");
  n += put_text(at(), "]");
  if (writable) n += put_text(at(), " writable");
  return n;
}

/// A NUL-terminated character array of fixed size, usable as a constant expression.
template <std::size_t Size>
struct FixedText {
  /// The characters and a terminating NUL.
  char data[Size + 1] = {};
};

/// The signature name of `TensorAccessor<T, N>` (T const: read-only).
template <class T, int N>
struct AccessorName {
  /// The element type's DLPack dtype.
  static constexpr DataType dtype = dtype_of<std::remove_const_t<T>>;
  /// Whether the accessor writes (its T is not const).
  static constexpr bool writable = !std::is_const<T>::value;
  /// The name's length, without the terminating NUL.
  static constexpr std::size_t size = put_accessor_name(nullptr, dtype, N, writable);
  /// Fills the name in a constant expression.
  static constexpr FixedText<size> make() noexcept {
    FixedText<size> out;
    put_accessor_name(out.data, dtype, N, writable);
    return out;
  }
  /// `text.data` is the name, e.g. "float32[*, *] writable".
  static constexpr FixedText<size> text = make();
};

/// The signature name of a `TensorView` or owning (`ManagedTensor`) parameter: any object
/// that speaks DLPack.
inline constexpr char tensor_argument_name[] = "tensor";
/// What a returned `ManagedTensor` becomes.
inline constexpr char tensor_result_name[] = "dlpackpp.Tensor";

/// False for every T, so that a static_assert fires only when a template is instantiated.
template <class T>
inline constexpr bool never = false;

}  // namespace detail
}  // namespace bindings
DLPACKPP_END_NAMESPACE

#endif  // DLPACKPP_BINDINGS_NAMES_HPP_
