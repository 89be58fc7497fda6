// SPDX-License-Identifier: Apache-2.0
// Uses dlpackpp with DLPACKPP_USE_SYSTEM_DLPACK=ON: the system's dlpack.h, never the bundled one.
#include "../consumer_check.hpp"

static_assert(DLPACKPP_DLPACK_IS_BUNDLED == 0, "the bundled dlpack.h was used");
static_assert(DLPACKPP_DLPACK_MAJOR == CONSUMER_EXPECT_DLPACK_MAJOR &&
                  DLPACKPP_DLPACK_MINOR == CONSUMER_EXPECT_DLPACK_MINOR,
              "the dlpack.h in force is not the one dlpack::dlpack provides");

int main() {
  // Devices that DLPack 0.6 has no enumerator for still work through their codes.
  return consumer_round_trip("system dlpack", dlpackpp::Device::oneapi(3),
                             dlpackpp::DataType::float8_e4m3fn());
}
