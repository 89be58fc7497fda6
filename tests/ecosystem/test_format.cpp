// SPDX-License-Identifier: Apache-2.0
// std::formatter for Device, DataType and TensorView (<dlpackpp/format.hpp>) against
// operator<<. Built as C++20 where the standard library has <format>.
#include <gtest/gtest.h>

#include <dlpackpp/format.hpp>

#include "format_cases.hpp"

#if !DLPACKPP_HAS_STD_FORMAT
#error "test_format is only built where <format> is available (CMake checks that first)"
#endif

#include <format>
#include <iterator>
#include <string>

namespace {

TEST(StdFormat, FormatsAsOperatorStreamPrints) {
  dlpackpp_test::check_formatters([](const auto& x) { return std::format("{}", x); },
                                  [](const auto& x) { return std::format("{:>30}", x); },
                                  [](const auto& x) { return std::format("[{:*^9}]", x); });
}

TEST(StdFormat, WorksThroughFormatTo) {
  std::string out;
  std::format_to(std::back_inserter(out), "{} on {}", dlpackpp::DataType::float64(),
                 dlpackpp::Device::cuda(2));
  EXPECT_EQ(out, "float64 on cuda:2");
}

}  // namespace
