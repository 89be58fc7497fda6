// SPDX-License-Identifier: Apache-2.0
// Uses dlpackpp made available with FetchContent.
#include "../consumer_check.hpp"

int main() {
  return consumer_round_trip("FetchContent", dlpackpp::Device::cuda_host(),
                             dlpackpp::DataType::complex64());
}
