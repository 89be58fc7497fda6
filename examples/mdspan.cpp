// SPDX-License-Identifier: Apache-2.0
// A DLPack tensor as an mdspan and back: a consumer views a transposed tensor it adopted as a
// layout_stride mdspan (std::mdspan, or CCCL's cuda::std::mdspan from the CUDA toolkit), and
// a producer exports an mdspan over its own buffer, the buffer's owner riding along.
#include <dlpackpp/dlpackpp.hpp>
#include <dlpackpp/mdspan.hpp>

#include <cstdint>
#include <iostream>
#include <vector>

#if DLPACKPP_HAS_MDSPAN
namespace md = DLPACKPP_MDSPAN_NAMESPACE;

int main() {
  // Producer side: a 3x4 row-major buffer exported as its 4x3 transpose (strides {1, 4}).
  std::vector<float> buffer(12);
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
  float* data = buffer.data();
  md::layout_stride::mapping<md::dextents<std::int64_t, 2>> transpose(
      md::dextents<std::int64_t, 2>(4, 3), md::array<std::int64_t, 2>{1, 4});
  md::mdspan<float, md::dextents<std::int64_t, 2>, md::layout_stride> produced(data, transpose);
  DLManagedTensorVersioned* out = dlpackpp::from_mdspan(produced, std::move(buffer)).release();

  // Consumer side: adopt, check, and index with the strides the producer chose.
  dlpackpp::ManagedTensor t = dlpackpp::ManagedTensor::adopt(out);
  const dlpackpp::TensorView v = t.view();
  const auto m = dlpackpp::to_mdspan<const float, 2>(v);  // rank 2, int64_t extents
  float trace = 0;
  // m[i, i] in C++23 (m(i, i) with CCCL in C++17); an array of indices works in both.
  for (std::int64_t i = 0; i < 3; ++i) trace += m[md::array<std::int64_t, 2>{i, i}];  // 0, 5, 10
  std::cout << v << "\ntrace of the leading 3x3 block: " << trace << '\n';

  // Static extents are checked against the tensor: a wrong one is an Error, not a bad read.
  using Wrong = md::extents<std::int64_t, 3, 4>;
  const auto refused = dlpackpp::try_to_mdspan<const float, Wrong>(v);
  std::cout << "as 3x4: " << (refused ? "accepted" : refused.error().what()) << '\n';
  return trace == 15.0f && !refused ? 0 : 1;
}
#else
int main() {
  std::cout
      << "DLPACKPP_TEST_SKIPPED: no mdspan (needs C++23 <mdspan> or CCCL's <cuda/std/mdspan>)\n";
  return 0;
}
#endif
