// expect-error: (use of deleted function|call to deleted)
// SPDX-License-Identifier: Apache-2.0
// A DLTensor of a temporary view may point at strides stored inside that view.
#include <dlpackpp/tensor_view.hpp>

DLTensor describe(float* p) {
  return dlpackpp::TensorView(p, dlpackpp::DataType::float32(), {2, 3}).to_dltensor();
}
