// SPDX-License-Identifier: Apache-2.0
// Built with the default knobs and linked with abi_mix_other.cpp, which is built with
// DLPACKPP_VIEW_INLINE_NDIM=4, bounds checks on, and a DLPack 0.x header (the system's or
// the project's v0.8).
// The ABI namespace keeps the two sets of inline functions apart, so both work side by side
// (ASan would report the stack-buffer-overflow a shared TensorView layout used to cause).
#include <dlpackpp/dlpackpp.hpp>

#include <cstdio>
#include <vector>

long other_side();  // abi_mix_other.cpp

int main() {
  std::vector<float> values(64, 1.0f);
  const dlpackpp::TensorView v(values.data(), dlpackpp::DataType::float32(), {2, 2, 2, 2, 2, 2});
  auto t = dlpackpp::from_vector(std::vector<float>(6, 1.0f), {2, 3});  // DefaultManagedTensor
  const long here = static_cast<long>(v.strides()[0] + v.numel() + t.numel());
  const long there = other_side();
  std::printf("this side %ld, other side %ld\n", here, there);
  return here == 32 + 64 + 6 && there == here ? 0 : 1;
}
