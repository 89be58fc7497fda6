// SPDX-License-Identifier: Apache-2.0
// fmt::formatter for Device, DataType and TensorView (<dlpackpp/fmt.hpp>) against operator<<.
#include <gtest/gtest.h>

#include <dlpackpp/fmt.hpp>

#include "format_cases.hpp"

#if !DLPACKPP_HAS_FMT
#error "test_fmt is only built where {fmt} is found (CMake checks that first)"
#endif

#include <iterator>

namespace {

TEST(Fmt, FormatsAsOperatorStreamPrints) {
  dlpackpp_test::check_formatters([](const auto& x) { return fmt::format("{}", x); },
                                  [](const auto& x) { return fmt::format("{:>30}", x); },
                                  [](const auto& x) { return fmt::format("[{:*^9}]", x); });
}

TEST(Fmt, WorksThroughFormatTo) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "{} on {}", dlpackpp::DataType::float64(),
                 dlpackpp::Device::cuda(2));
  EXPECT_EQ(fmt::to_string(out), "float64 on cuda:2");
}

}  // namespace
