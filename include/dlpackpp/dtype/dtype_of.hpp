// SPDX-License-Identifier: Apache-2.0
/// @file
/// dtype_of<T>: the DataType of a C++ type, built in for bool, the standard integers, float,
/// double and complex, and for anything else through the dtype_traits extension point;
/// BoolByte, the element type typed access reads a DLPack bool as.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/dtype/data_type.hpp"

#include <cstdint>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

/// How typed access reads a DLPack bool: the byte itself. A producer may store any byte value
/// (NumPy and PyTorch write 0/1, others need not), and reading one other than 0 or 1 as a
/// C++ `bool` is undefined, so `data<bool>()`/`accessor<bool, N>()` do not compile; use
/// BoolByte, whose truth is `byte != 0`. Exporting C++ `bool` arrays is fine.
struct BoolByte {
  /// The stored byte, as the producer wrote it.
  std::uint8_t byte;
  /// True for any non-zero byte.
  DLPACKPP_HOST_DEVICE constexpr explicit operator bool() const noexcept { return byte != 0; }
  /// Stores 1 or 0.
  DLPACKPP_HOST_DEVICE constexpr BoolByte& operator=(bool value) noexcept {
    byte = value ? 1 : 0;
    return *this;
  }
};

/// Extension point: specialize with `static constexpr DLDataType value = {code, bits, lanes};`
/// to give a C++ type (__half, __nv_bfloat16, an fp8 struct, a SIMD vector) a DLPack dtype.
template <class T>
struct dtype_traits {};

/// @cond specializations
template <>
struct dtype_traits<bool> {
  static constexpr DLDataType value = {dtype_code::bool_, 8, 1};
};
template <>
struct dtype_traits<BoolByte> {
  static constexpr DLDataType value = {dtype_code::bool_, 8, 1};
};
template <>
struct dtype_traits<float> {
  static constexpr DLDataType value = {dtype_code::float_, 32, 1};
};
template <>
struct dtype_traits<double> {
  static constexpr DLDataType value = {dtype_code::float_, 64, 1};
};
#if DLPACKPP_HAS_FLOAT16
template <>
struct dtype_traits<_Float16> {
  static constexpr DLDataType value = {dtype_code::float_, 16, 1};
};
#endif
#if DLPACKPP_HAS_BF16
template <>
struct dtype_traits<__bf16> {
  static constexpr DLDataType value = {dtype_code::bfloat, 16, 1};
};
#endif
/// @endcond

namespace detail {
// Every standard integer type by size and signedness, so int64_t works whether the platform
// spells it long or long long. char (signedness varies) and the other character types are
// deliberately absent.
template <class I>
struct integer_dtype {
  static constexpr DLDataType value = {
      std::is_signed<I>::value ? dtype_code::int_ : dtype_code::uint,
      static_cast<std::uint8_t>(sizeof(I) * 8), 1};
};

template <class T, class = void>
struct has_dtype_traits : std::false_type {};
template <class T>
struct has_dtype_traits<T, std::void_t<decltype(dtype_traits<T>::value)>> : std::true_type {};

// std::complex<float|double> and its layout-compatible cousins (thrust::complex,
// cuda::std::complex), recognised by shape so <complex> need not be included.
template <class T, class = void>
struct complex_like : std::false_type {};
template <template <class...> class C, class F>
struct complex_like<
    C<F>, std::enable_if_t<(std::is_same<F, float>::value || std::is_same<F, double>::value) &&
                           sizeof(C<F>) == 2 * sizeof(F) &&
                           std::is_same<decltype(std::declval<const C<F>&>().real()), F>::value &&
                           std::is_same<decltype(std::declval<const C<F>&>().imag()), F>::value>>
    : std::true_type {};

template <class T>
constexpr bool is_character = std::is_same<T, char>::value || std::is_same<T, wchar_t>::value ||
#if defined(__cpp_char8_t)
                              std::is_same<T, char8_t>::value ||
#endif
                              std::is_same<T, char16_t>::value || std::is_same<T, char32_t>::value;

// The size bound keeps out __int128, which is integral under -std=gnu++ but has no DLPack
// dtype; without it dtype_of<__int128> would silently be the invalid pair int128. sizeof is
// taken of char for non-integers so that has_dtype<void> or an incomplete type stays false.
template <class T>
constexpr bool is_standard_integer =
    std::is_integral<T>::value && !std::is_same<T, bool>::value && !is_character<T> &&
    sizeof(std::conditional_t<std::is_integral<T>::value, T, char>) <= 8;

template <class T>
constexpr bool always_false = false;

// Which rule gives T its dtype: the one dispatch both dtype_of and has_dtype read.
enum class DtypeSource { none, traits, integer, complex };
template <class U>
constexpr DtypeSource dtype_source() noexcept {
  if constexpr (has_dtype_traits<U>::value) {
    return DtypeSource::traits;
  } else if constexpr (is_standard_integer<U>) {
    return DtypeSource::integer;
  } else if constexpr (complex_like<U>::value) {
    return DtypeSource::complex;
  } else {
    return DtypeSource::none;
  }
}

template <class T>
constexpr DLDataType dtype_of_impl() noexcept {
  using U = std::remove_cv_t<T>;
  constexpr DtypeSource source = dtype_source<U>();
  if constexpr (source == DtypeSource::traits) {
    return dtype_traits<U>::value;
  } else if constexpr (source == DtypeSource::integer) {
    return integer_dtype<U>::value;
  } else if constexpr (source == DtypeSource::complex) {
    return DLDataType{dtype_code::complex, static_cast<std::uint8_t>(sizeof(U) * 8), 1};
  } else {
    static_assert(always_false<U>,
                  "dlpackpp: this C++ type has no DLPack dtype; specialize "
                  "dlpackpp::dtype_traits<T> with "
                  "`static constexpr DLDataType value = {code, bits, lanes};`");
    return DLDataType{};
  }
}
}  // namespace detail

/// The DataType of T: built in for bool, every standard integer, float, double,
/// std::complex<float|double>; anything else through dtype_traits<T>.
template <class T>
inline constexpr DataType dtype_of = DataType(detail::dtype_of_impl<T>());

/// True when dtype_of<T> is available.
template <class T>
inline constexpr bool has_dtype =
    detail::dtype_source<std::remove_cv_t<T>>() != detail::DtypeSource::none;

template <class T>
constexpr DataType DataType::of() noexcept {
  return dtype_of<T>;
}

DLPACKPP_END_NAMESPACE
