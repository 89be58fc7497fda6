// expect-error: (use of deleted function|call to deleted|invokes a deleted function)
// SPDX-License-Identifier: Apache-2.0
// A span taken from the temporary Strides a managed tensor returns would dangle.
#include <dlpackpp/managed_tensor.hpp>

dlpackpp::IntSpan strides_of(const dlpackpp::LegacyManagedTensor& t) {
  dlpackpp::IntSpan s = t.strides();
  return s;
}
