// expect-ok
// SPDX-License-Identifier: Apache-2.0
// Harness self-test: correct uses of what the other cases misuse, built with the same flags, so
// a harness that cannot compile anything (bad include path, bad flags) fails here.
#include <dlpackpp/dlpackpp.hpp>

int main() {
  constexpr dlpackpp::Device device = dlpackpp::Device(kDLCUDA, 2);
  dlpackpp::Device copy = device;
  copy = dlpackpp::Device::cpu();
  constexpr dlpackpp::DataType dtype = dlpackpp::dtype_of<int>;
  const bool same = dtype == dlpackpp::DataType::int32() && copy != device;
  const bool parsed = static_cast<bool>(dlpackpp::Device::try_parse("cpu"));
  return same && parsed ? 0 : 1;
}
