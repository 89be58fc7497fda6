// expect-error: (cannot convert|no viable conversion from) '[a-z:0-9_]*Result<[a-z:0-9_]*Device>' to 'const bool'
// SPDX-License-Identifier: Apache-2.0
// Result's bool conversion is explicit, so it cannot leak into a bool parameter or variable.
#include <dlpackpp/device.hpp>

int main() {
  const bool ok = dlpackpp::Device::try_parse("cpu");
  return ok ? 0 : 1;
}
