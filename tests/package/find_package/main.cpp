// SPDX-License-Identifier: Apache-2.0
// Uses an installed dlpackpp found with find_package(dlpackpp CONFIG).
#include "../consumer_check.hpp"

static_assert(DLPACKPP_VERSION_MAJOR == CONSUMER_EXPECT_MAJOR &&
                  DLPACKPP_VERSION_MINOR == CONSUMER_EXPECT_MINOR,
              "dlpackppConfigVersion.cmake and version.hpp disagree");

int main() {
  return consumer_round_trip("find_package", dlpackpp::Device::cuda(1),
                             dlpackpp::DataType::of<float>());
}
