// SPDX-License-Identifier: Apache-2.0
// Test helper shared by the unit tests: "this call throws dlpackpp::Error with this code".
#pragma once

#include <dlpackpp/error.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>

namespace dlpackpp_test {

/// The Error `f()` threw; a test failure (and an out_of_range placeholder) when it threw none.
template <class F>
dlpackpp::Error thrown_by(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const dlpackpp::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no dlpackpp::Error thrown";
  return dlpackpp::Error(dlpackpp::Errc::out_of_range, "<nothing thrown>");
}

/// Asserts that `f()` throws dlpackpp::Error with `code` and, when `text` is given, that
/// what() mentions it.
template <class F>
void expect_error(F&& f, dlpackpp::Errc code, std::string_view text = {}) {
  const dlpackpp::Error e = thrown_by(std::forward<F>(f));
  EXPECT_EQ(e.code(), code) << e.what() << " (expected " << dlpackpp::to_string(code) << ")";
  EXPECT_NE(std::string_view(e.what()).find(text), std::string_view::npos)
      << "'" << e.what() << "' lacks '" << text << "'";
}

/// expect_error with the code first, which reads better before a multi-line lambda.
template <class F>
void expect_errc(dlpackpp::Errc code, F&& f) {
  expect_error(std::forward<F>(f), code);
}

}  // namespace dlpackpp_test
