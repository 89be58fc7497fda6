// expect-error: (will be destroyed at the end of the full-expression|dangling)
// flags: -Werror=dangling
// SPDX-License-Identifier: Apache-2.0
// A span of a temporary vector dies with it; DLPACKPP_LIFETIMEBOUND lets clang say so.
#include <dlpackpp/int_span.hpp>

#include <vector>

std::int64_t first_extent() {
  dlpackpp::IntSpan shape = std::vector<std::int64_t>{2, 3};
  return shape[0];
}
