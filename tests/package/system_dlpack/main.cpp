// SPDX-License-Identifier: Apache-2.0
// Uses dlpackpp with DLPACKPP_USE_SYSTEM_DLPACK=ON: the system's dlpack.h, never the bundled one.
#include <dlpackpp/dlpackpp.hpp>

#include <cstdio>

static_assert(DLPACKPP_DLPACK_IS_BUNDLED == 0, "the bundled dlpack.h was used");
static_assert(DLPACKPP_DLPACK_MAJOR == CONSUMER_EXPECT_DLPACK_MAJOR &&
                  DLPACKPP_DLPACK_MINOR == CONSUMER_EXPECT_DLPACK_MINOR,
              "the dlpack.h in force is not the one dlpack::dlpack provides");

int main() {
  // Devices that DLPack 0.6 has no enumerator for still work through their codes.
  constexpr dlpackpp::Device device = dlpackpp::Device::oneapi(3);
  constexpr dlpackpp::DataType dtype = dlpackpp::DataType::float8_e4m3fn();
  const auto device_back = dlpackpp::Device::try_parse(device.to_string());
  const auto dtype_back = dlpackpp::DataType::try_parse(dtype.to_string());
  std::printf("system dlpack consumer: dlpackpp %d.%d.%d on dlpack.h %d.%d: %s %s\n",
              DLPACKPP_VERSION_MAJOR, DLPACKPP_VERSION_MINOR, DLPACKPP_VERSION_PATCH,
              static_cast<int>(DLPACKPP_DLPACK_MAJOR), static_cast<int>(DLPACKPP_DLPACK_MINOR),
              dtype.to_string().c_str(), device.to_string().c_str());
  const bool ok = device_back && *device_back == device && dtype_back && *dtype_back == dtype;
  return ok ? 0 : 1;
}
