// SPDX-License-Identifier: Apache-2.0
// ODR test: two TUs that include the umbrella header link into one program, and process-wide
// state (the error handler) is one object, not one per TU.
#include <dlpackpp/dlpackpp.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

std::int64_t odr_other_numel();
dlpackpp::ErrorHandler odr_other_handler();

namespace {
void custom_handler(const dlpackpp::Error&) noexcept {}
}  // namespace

int main() {
  auto t = dlpackpp::from_vector(std::vector<double>{1, 2}, {2});
  const bool sizes_ok = t.numel() == 2 && odr_other_numel() == 18;
  const dlpackpp::ErrorHandler original = dlpackpp::set_error_handler(&custom_handler);
  const bool shared_handler = odr_other_handler() == &custom_handler;
  dlpackpp::set_error_handler(original);
  std::printf("sizes %s, error handler shared across TUs: %s\n", sizes_ok ? "ok" : "WRONG",
              shared_handler ? "yes" : "NO");
  return sizes_ok && shared_handler ? 0 : 1;
}
