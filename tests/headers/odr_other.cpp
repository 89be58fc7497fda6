// SPDX-License-Identifier: Apache-2.0
// Second translation unit of the ODR test: instantiates the same templates and inline
// functions as odr_main.cpp, so duplicate non-inline definitions would fail to link.
#include <dlpackpp/dlpackpp.hpp>

#include <cstdint>
#include <vector>

std::int64_t odr_other_numel() {
  auto t = dlpackpp::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  return t.view().accessor<const float, 2>().size(1) * t.numel();
}

dlpackpp::ErrorHandler odr_other_handler() {
  const dlpackpp::ErrorHandler previous = dlpackpp::set_error_handler(nullptr);
  dlpackpp::set_error_handler(previous);
  return previous;
}
