// expect-error: (use of deleted function|call to deleted)
// SPDX-License-Identifier: Apache-2.0
// An iterator into a temporary Strides dies with it; `for (auto s : t.strides())` still works.
#include <dlpackpp/managed_tensor.hpp>

const std::int64_t* first_stride(const dlpackpp::LegacyManagedTensor& t) {
  auto it = t.strides().begin();
  return it;
}
