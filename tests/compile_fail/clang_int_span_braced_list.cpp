// expect-error: (initializer list|will be destroyed at the end of the full-expression)
// flags: -Werror=dangling
// SPDX-License-Identifier: Apache-2.0
// A braced list's array dies at the end of the declaration: an IntSpan variable made from one
// dangles (pass `{2, 3}` straight to the call instead). clang diagnoses it; GCC cannot.
#include <dlpackpp/int_span.hpp>

std::int64_t first_extent() {
  dlpackpp::IntSpan shape{2, 3};
  return shape[0];
}
