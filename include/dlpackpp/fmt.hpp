// SPDX-License-Identifier: Apache-2.0
/// @file
/// {fmt} support: `fmt::formatter` specializations for Device, DataType and TensorView
/// printing exactly what their operator<< prints, with a string's format spec (fill,
/// alignment, width: `fmt::format("{:<12}|", dtype)`). Opt-in (not in the umbrella header);
/// link {fmt} (`fmt::fmt`). Where <fmt/format.h> is not on the include path
/// DLPACKPP_HAS_FMT is 0 and nothing else is defined.
#pragma once

#include "dlpackpp/detail/config.hpp"

#ifndef DLPACKPP_HAS_FMT
#if __has_include(<fmt/format.h>)
/// 1 when this header specializes fmt::formatter (`<fmt/format.h>` is on the include path).
#define DLPACKPP_HAS_FMT 1
#else
/// 0: `<fmt/format.h>` was not found, so nothing is defined.
#define DLPACKPP_HAS_FMT 0
#endif
#endif

#if DLPACKPP_HAS_FMT
#include "dlpackpp/format.hpp"

#include <fmt/format.h>

/// @cond specializations
namespace fmt {
template <>
struct formatter<::dlpackpp::Device, char>
    : ::dlpackpp::detail::ToStringFormatter<formatter<string_view, char>> {};
template <>
struct formatter<::dlpackpp::DataType, char>
    : ::dlpackpp::detail::ToStringFormatter<formatter<string_view, char>> {};
template <>
struct formatter<::dlpackpp::TensorView, char>
    : ::dlpackpp::detail::ToStringFormatter<formatter<string_view, char>> {};
}  // namespace fmt
/// @endcond
#endif  // DLPACKPP_HAS_FMT
