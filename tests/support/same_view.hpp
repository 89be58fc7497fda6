// SPDX-License-Identifier: Apache-2.0
// "These two views describe the same elements": the comparison the conversion and adoption
// tests share. Flags and byte counts are left to the caller, since a conversion may change them.
#pragma once

#include <dlpackpp/tensor_view.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace dlpackpp_test {

/// The memory, element type, device and layout of `got` are those of `want`.
inline void expect_same_view(const dlpackpp::TensorView& got, const dlpackpp::TensorView& want) {
  using Ints = std::vector<std::int64_t>;
  EXPECT_EQ(got.const_data(), want.const_data());
  EXPECT_EQ(got.byte_offset(), want.byte_offset());
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(got.device(), want.device());
  EXPECT_EQ(got.ndim(), want.ndim());
  EXPECT_EQ(Ints(got.shape().begin(), got.shape().end()),
            Ints(want.shape().begin(), want.shape().end()));
  EXPECT_EQ(Ints(got.strides().begin(), got.strides().end()),
            Ints(want.strides().begin(), want.strides().end()));
  EXPECT_EQ(got.numel(), want.numel());
  EXPECT_EQ(got.is_contiguous(), want.is_contiguous());
  EXPECT_EQ(got.is_compact(), want.is_compact());
}

}  // namespace dlpackpp_test
