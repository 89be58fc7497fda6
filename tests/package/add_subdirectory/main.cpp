// SPDX-License-Identifier: Apache-2.0
// Uses dlpackpp added with add_subdirectory(<dlpackpp source tree>).
#include "../consumer_check.hpp"

int main() {
  return consumer_round_trip("add_subdirectory", dlpackpp::Device::rocm(2),
                             dlpackpp::DataType::bfloat16());
}
