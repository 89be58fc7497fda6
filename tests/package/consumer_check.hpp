// SPDX-License-Identifier: Apache-2.0
// What every consumer project checks once it has dlpackpp: the headers compile as the consumer
// got them, and a device and a dtype survive a to_string/parse round trip.
#pragma once

#include <dlpackpp/dlpackpp.hpp>

#include <cstdio>

inline int consumer_round_trip(const char* how, dlpackpp::Device device, dlpackpp::DataType dtype) {
  const auto device_back = dlpackpp::Device::try_parse(device.to_string());
  const auto dtype_back = dlpackpp::DataType::try_parse(dtype.to_string());
  std::printf("%s consumer: dlpackpp %d.%d.%d on dlpack.h %d.%d: %s %s\n", how,
              DLPACKPP_VERSION_MAJOR, DLPACKPP_VERSION_MINOR, DLPACKPP_VERSION_PATCH,
              static_cast<int>(DLPACKPP_DLPACK_MAJOR), static_cast<int>(DLPACKPP_DLPACK_MINOR),
              dtype.to_string().c_str(), device.to_string().c_str());
  const bool ok = device_back && *device_back == device && dtype_back && *dtype_back == dtype;
  return ok ? 0 : 1;
}
