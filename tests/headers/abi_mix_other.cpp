// SPDX-License-Identifier: Apache-2.0
// The other translation unit of test_abi_mix: different knobs, same program.
#include <dlpackpp/dlpackpp.hpp>

// tests/headers/CMakeLists.txt always hands this TU a DLPack 0.x header; make sure it won.
#if DLPACKPP_HAS_VERSIONED
#error "abi_mix_other.cpp must be built against a DLPack 0.x dlpack.h"
#endif

#include <vector>

long other_side() {
  std::vector<float> values(64, 1.0f);
  const dlpackpp::TensorView v(values.data(), dlpackpp::DataType::float32(), {2, 2, 2, 2, 2, 2});
  auto t = dlpackpp::from_vector(std::vector<float>(6, 1.0f), {2, 3});  // DefaultManagedTensor
  return static_cast<long>(v.strides()[0] + v.numel() + t.numel());
}
