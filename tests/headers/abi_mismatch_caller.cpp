// SPDX-License-Identifier: Apache-2.0
// Compiled with DLPACKPP_VIEW_INLINE_NDIM=4 and linked with abi_mismatch_callee.cpp (default
// knobs): passing a TensorView across must fail to link rather than read the wrong layout.
#include <dlpackpp/tensor_view.hpp>

long count(const dlpackpp::TensorView& v);  // defined in abi_mismatch_callee.cpp

int main() {
  float x[4] = {};
  return static_cast<int>(count(dlpackpp::TensorView(x, dlpackpp::DataType::float32(), {4})));
}
