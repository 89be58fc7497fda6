// expect-error: (use of deleted function|call to deleted)
// SPDX-License-Identifier: Apache-2.0
// A view of a temporary managed tensor outlives the tensor: its deleter runs at the `;`.
#include <dlpackpp/managed_tensor.hpp>

dlpackpp::TensorView view_of(DLManagedTensor* p) {
  dlpackpp::TensorView v = dlpackpp::LegacyManagedTensor::adopt(p).view();
  return v;
}
