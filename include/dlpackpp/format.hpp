// SPDX-License-Identifier: Apache-2.0
/// @file
/// std::format support: `std::formatter` specializations for Device, DataType and TensorView
/// printing exactly what their operator<< prints, and accepting a string's format spec
/// (fill, alignment, width: `std::format("{:>10}", device)`). Opt-in (not in the umbrella
/// header). Where the standard library lacks `<format>` (`__cpp_lib_format`, e.g. before GCC
/// 13) DLPACKPP_HAS_STD_FORMAT is 0 and only the shared adaptor that <dlpackpp/fmt.hpp>
/// uses is defined.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/tensor_view.hpp"

#if __has_include(<version>)
#include <version>
#endif
#if defined(__cpp_lib_format)
#include <format>
#include <string_view>
/// 1 when this header specializes std::formatter (the standard library has `<format>`).
#define DLPACKPP_HAS_STD_FORMAT 1
#else
/// 0: the standard library has no `<format>`, so no std::formatter is specialized.
#define DLPACKPP_HAS_STD_FORMAT 0
#endif

DLPACKPP_BEGIN_NAMESPACE
namespace detail {
/// A formatter for any type with to_string() (what its operator<< prints), built on `Base`,
/// a string formatter (std:: or fmt::) whose parse() takes the spec and whose format() pads.
/// One definition for both libraries, so their output cannot drift apart.
template <class Base>
struct ToStringFormatter : Base {
  /// Formats `value.to_string()` under the parsed spec.
  template <class T, class Context>
  auto format(const T& value, Context& ctx) const -> decltype(ctx.out()) {
    return Base::format(value.to_string(), ctx);
  }
};
}  // namespace detail
DLPACKPP_END_NAMESPACE

#if DLPACKPP_HAS_STD_FORMAT
/// @cond specializations
namespace std {
template <>
struct formatter<::dlpackpp::Device, char>
    : ::dlpackpp::detail::ToStringFormatter<formatter<string_view, char>> {};
template <>
struct formatter<::dlpackpp::DataType, char>
    : ::dlpackpp::detail::ToStringFormatter<formatter<string_view, char>> {};
template <>
struct formatter<::dlpackpp::TensorView, char>
    : ::dlpackpp::detail::ToStringFormatter<formatter<string_view, char>> {};
}  // namespace std
/// @endcond
#endif
