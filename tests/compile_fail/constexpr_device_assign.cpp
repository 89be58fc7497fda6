// expect-error: passing 'const dlpackpp::v0[a-z0-9_]*::Device' as 'this' argument discards qualifiers|no viable overloaded '='
// SPDX-License-Identifier: Apache-2.0
// A constexpr Device is a constant: it cannot be reassigned.
#include <dlpackpp/device.hpp>

constexpr dlpackpp::Device kDevice = dlpackpp::Device::cpu();

int main() {
  kDevice = dlpackpp::Device::cuda(1);
  return kDevice.id();
}
