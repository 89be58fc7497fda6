// expect-error: access bool tensors as dlpackpp::BoolByte
// SPDX-License-Identifier: Apache-2.0
// Reading a producer's bool byte (any value) as C++ bool is undefined behaviour.
#include <dlpackpp/tensor_view.hpp>

bool first(const dlpackpp::TensorView& v) { return *v.data<const bool>(); }
