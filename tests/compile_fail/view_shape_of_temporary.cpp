// expect-error: (use of deleted function|call to deleted|invokes a deleted function)
// SPDX-License-Identifier: Apache-2.0
// A raw-parts view keeps its own copy of the shape: a span of a temporary one would dangle.
#include <dlpackpp/tensor_view.hpp>

dlpackpp::IntSpan shape_of(float* p) {
  dlpackpp::IntSpan s = dlpackpp::TensorView(p, dlpackpp::DataType::float32(), {2, 3}).shape();
  return s;
}
