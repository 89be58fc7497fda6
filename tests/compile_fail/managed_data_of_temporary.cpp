// expect-error: (use of deleted function|call to deleted)
// SPDX-License-Identifier: Apache-2.0
// The elements of a temporary managed tensor are freed at the `;`.
#include <dlpackpp/managed_tensor.hpp>

const float* data_of(DLManagedTensor* p) {
  return dlpackpp::LegacyManagedTensor::adopt(p).data<const float>();
}
