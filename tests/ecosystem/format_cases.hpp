// SPDX-License-Identifier: Apache-2.0
// The formatter cases std::format (test_format.cpp) and {fmt} (test_fmt.cpp) both pass: each
// value formats exactly as operator<< prints it, and a string's spec pads it.
#pragma once

#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace dlpackpp_test {

template <class T>
std::string streamed(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

/// `plain(x)` formats with "{}", `padded_right(x)` with "{:>30}" and `framed(x)` with
/// "[{:*^9}]"; each is checked against operator<<.
template <class Plain, class PaddedRight, class Framed>
void check_formatters(Plain plain, PaddedRight padded_right, Framed framed) {
  using dlpackpp::DataType;
  using dlpackpp::Device;
  for (Device d : {Device::cpu(), Device::cuda(1), Device::cuda_host(), Device::rocm(3),
                   Device::from_code(99, 2)}) {
    EXPECT_EQ(plain(d), streamed(d));
    EXPECT_EQ(padded_right(d), std::string(30 - streamed(d).size(), ' ') + streamed(d));
  }
  for (DataType t : {DataType::float32(), DataType::bfloat16(), DataType::bool_(),
                     DataType(dlpackpp::dtype_code::int_, 32, 4), DataType(200, 8, 1)}) {
    EXPECT_EQ(plain(t), streamed(t));
  }
  EXPECT_EQ(framed(DataType::int8()), "[**int8***]");

  std::vector<float> values(24);
  const dlpackpp::TensorView plain_view(values.data(), DataType::float32(), {2, 3});
  const dlpackpp::TensorView strided(values.data(), DataType::float32(), {3, 2}, {1, 3},
                                     Device::cpu(), 8);
  dlpackpp::ValidateOptions read_only;
  read_only.flags = dlpackpp::flag::read_only;
  const DLTensor t = plain_view.to_dltensor();
  const dlpackpp::TensorView ro(t, read_only);
  float scalar = 0;
  const dlpackpp::TensorView zero_dim(&scalar, DataType::float32(), {});
  for (const dlpackpp::TensorView* v : {&plain_view, &strided, &ro, &zero_dim}) {
    EXPECT_EQ(plain(*v), streamed(*v));
  }
  EXPECT_EQ(plain(strided), "float32[3, 2] strides [1, 3] cpu byte_offset 8");
}

}  // namespace dlpackpp_test
