// SPDX-License-Identifier: Apache-2.0
// The callee of abi_mismatch_caller.cpp, built with the default knobs.
#include <dlpackpp/tensor_view.hpp>

long count(const dlpackpp::TensorView& v) { return static_cast<long>(v.numel()); }
