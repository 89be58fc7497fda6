// SPDX-License-Identifier: Apache-2.0
// The README's quick start, compiled and run as a test so the README stays true.
#include <dlpackpp/dlpackpp.hpp>

#include <cstdint>
#include <iostream>
#include <vector>

int main() {
  // Producer: export a std::vector as a DLManagedTensorVersioned* without copying it.
  DLManagedTensorVersioned* out =
      dlpackpp::from_vector(std::vector<float>(6, 1.0f), {2, 3}).release();

  // Consumer: adopt and view in one validation pass (version, dtype, device, shape, strides,
  // sizes); `t` owns the tensor, `v` reads it while `t` (or what it moves into) owns it.
  auto [t, v] = dlpackpp::ManagedTensor::adopt_with_view(out);
  v.require_dtype<float>().require_ndim(2);
  auto x = v.accessor<const float, 2>();  // trivially copyable; pass it to a kernel by value
  float sum = 0;
  for (int64_t i = 0; i < x.size(0); ++i)
    for (int64_t j = 0; j < x.size(1); ++j) sum += x(i, j);
  std::cout << v << '\n';  // float32[2, 3] strides [3, 1] cpu
  // `t` calls the producer's deleter exactly once when it goes out of scope.
  return sum == 6.0f && t ? 0 : 1;
}
