// SPDX-License-Identifier: Apache-2.0
// dlpackpp against a DLPack peer written in Rust (dlpack_peer.rs, which knows only the C ABI):
// the struct layouts agree, a Rust export is adopted and read with the Rust deleter run
// exactly once, and a dlpackpp export is consumed and released by Rust with ours run once.
#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" {
DLManagedTensorVersioned* rust_export_matrix(std::int64_t rows, std::int64_t cols);
std::size_t rust_deletes();
double rust_consume_sum(DLManagedTensorVersioned* tensor);
std::size_t rust_layout(std::uint64_t* out, std::size_t capacity);
}

namespace {

TEST(RustPeer, StructLayoutsAgree) {
  // The same order as rust_layout() writes them.
  const std::uint64_t cpp[] = {
      sizeof(DLPackVersion),
      sizeof(DLDevice),
      sizeof(DLDataType),
      sizeof(DLTensor),
      alignof(DLTensor),
      offsetof(DLTensor, data),
      offsetof(DLTensor, device),
      offsetof(DLTensor, ndim),
      offsetof(DLTensor, dtype),
      offsetof(DLTensor, shape),
      offsetof(DLTensor, strides),
      offsetof(DLTensor, byte_offset),
      sizeof(DLManagedTensorVersioned),
      alignof(DLManagedTensorVersioned),
      offsetof(DLManagedTensorVersioned, version),
      offsetof(DLManagedTensorVersioned, manager_ctx),
      offsetof(DLManagedTensorVersioned, deleter),
      offsetof(DLManagedTensorVersioned, flags),
      offsetof(DLManagedTensorVersioned, dl_tensor),
      sizeof(DLManagedTensor),
      alignof(DLManagedTensor),
      offsetof(DLManagedTensor, dl_tensor),
      offsetof(DLManagedTensor, manager_ctx),
      offsetof(DLManagedTensor, deleter),
  };
  constexpr std::size_t n = sizeof(cpp) / sizeof(cpp[0]);
  std::uint64_t rust[n] = {};
  ASSERT_EQ(rust_layout(rust, n), n);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(rust[i], cpp[i]) << "fact " << i;
}

TEST(RustPeer, AdoptsARustExportAndRunsItsDeleterOnce) {
  const std::size_t before = rust_deletes();
  {
    const dlpackpp::ManagedTensor t = dlpackpp::ManagedTensor::adopt(rust_export_matrix(3, 4));
    const auto x = t.accessor<const float, 2>();
    ASSERT_EQ(x.size(0), 3);
    ASSERT_EQ(x.size(1), 4);
    for (std::int64_t i = 0; i < 3; ++i) {
      for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(x(i, j), static_cast<float>(i * 4 + j));
    }
    EXPECT_TRUE(t.view().is_contiguous());
    EXPECT_EQ(rust_deletes(), before);
  }
  EXPECT_EQ(rust_deletes(), before + 1);
}

// Counts its own destruction: wrap destroys the owner when the export's deleter runs.
struct ReleaseCounter {
  int* released;
  explicit ReleaseCounter(int* counter) noexcept : released(counter) {}
  ReleaseCounter(ReleaseCounter&& other) noexcept : released(other.released) {
    other.released = nullptr;
  }
  ReleaseCounter(const ReleaseCounter&) = delete;
  ReleaseCounter& operator=(const ReleaseCounter&) = delete;
  ReleaseCounter& operator=(ReleaseCounter&&) = delete;
  ~ReleaseCounter() {
    if (released != nullptr) ++*released;
  }
};

TEST(RustPeer, RustConsumesADlpackppExportAndRunsOurDeleterOnce) {
  int released = 0;
  std::vector<float> values{1, 2, 3, 4, 5, 6};
  // Column-major strides: Rust must honour them, not assume row-major.
  auto t = dlpackpp::wrap(values.data(), dlpackpp::DataType::float32(), {2, 3}, {1, 2},
                          dlpackpp::Device::cpu(), ReleaseCounter(&released));
  EXPECT_EQ(released, 0);
  EXPECT_DOUBLE_EQ(rust_consume_sum(t.release()), 21.0);
  EXPECT_EQ(released, 1);
}

}  // namespace
