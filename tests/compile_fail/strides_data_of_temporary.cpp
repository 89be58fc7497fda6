// expect-error: (use of deleted function|call to deleted)
// SPDX-License-Identifier: Apache-2.0
// The values of a temporary Strides die with it: its data() is refused.
#include <dlpackpp/managed_tensor.hpp>

const std::int64_t* strides_data(const dlpackpp::LegacyManagedTensor& t) {
  return t.strides().data();
}
