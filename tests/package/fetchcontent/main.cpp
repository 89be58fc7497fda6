// SPDX-License-Identifier: Apache-2.0
// Uses dlpackpp made available with FetchContent.
#include <dlpackpp/dlpackpp.hpp>

#include <cstdio>

int main() {
  constexpr dlpackpp::Device device = dlpackpp::Device::cuda_host();
  constexpr dlpackpp::DataType dtype = dlpackpp::DataType::complex64();
  const auto device_back = dlpackpp::Device::try_parse(device.to_string());
  const auto dtype_back = dlpackpp::DataType::try_parse(dtype.to_string());
  std::printf("FetchContent consumer: dlpackpp %d.%d.%d on dlpack.h %d.%d: %s %s\n",
              DLPACKPP_VERSION_MAJOR, DLPACKPP_VERSION_MINOR, DLPACKPP_VERSION_PATCH,
              static_cast<int>(DLPACKPP_DLPACK_MAJOR), static_cast<int>(DLPACKPP_DLPACK_MINOR),
              dtype.to_string().c_str(), device.to_string().c_str());
  const bool ok = device_back && *device_back == device && dtype_back && *dtype_back == dtype;
  return ok ? 0 : 1;
}
