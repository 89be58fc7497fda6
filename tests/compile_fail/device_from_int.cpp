// expect-error: invalid conversion from 'int' to 'DLDeviceType'|no matching constructor for initialization of '(const )?dlpackpp::Device'
// SPDX-License-Identifier: Apache-2.0
// A bare number does not say which DLDeviceType it means; Device has no Device(int).
#include <dlpackpp/device.hpp>

int main() {
  const dlpackpp::Device device(2);
  return device.id();
}
