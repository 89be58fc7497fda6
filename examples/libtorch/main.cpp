// SPDX-License-Identifier: Apache-2.0
// libtorch and dlpackpp in one program: adopt what at::toDLPack exports, and hand a dlpackpp
// export to at::fromDLPack, with values compared and every deleter counted. libtorch 1.13
// speaks DLPack 0.x, so the exchange uses LegacyManagedTensor.
#include <dlpackpp/dlpackpp.hpp>

#include <cstdio>
#include <numeric>
#include <vector>

#include "torch_bridge.hpp"

namespace {
int g_released = 0;

// Destroyed when the consumer (libtorch here) calls our export's deleter.
struct ReleaseCounter {
  bool armed = true;
  ReleaseCounter() = default;
  ReleaseCounter(ReleaseCounter&& other) noexcept { other.armed = false; }
  ReleaseCounter(const ReleaseCounter&) = delete;
  ReleaseCounter& operator=(const ReleaseCounter&) = delete;
  ReleaseCounter& operator=(ReleaseCounter&&) = delete;
  ~ReleaseCounter() {
    if (armed) ++g_released;
  }
};
}  // namespace

int main() {
  // libtorch -> dlpackpp.
  {
    const auto t = dlpackpp::LegacyManagedTensor::adopt(torch_export_arange(5));
    const auto x = t.accessor<const float, 1>();
    float sum = 0;
    for (std::int64_t i = 0; i < x.size(0); ++i) {
      if (x(i) != static_cast<float>(i)) return 1;
      sum += x(i);
    }
    std::printf("from libtorch: %s, sum %.1f\n", t.view().to_string().c_str(), sum);
    if (torch_deletes() != 0) return 2;
  }
  if (torch_deletes() != 1) return 3;

  // dlpackpp -> libtorch.
  std::vector<float> values(6);
  std::iota(values.begin(), values.end(), 1.0f);
  auto exported = dlpackpp::wrap<dlpackpp::LegacyManagedTensor>(
      values.data(), dlpackpp::DataType::float32(), {2, 3}, {}, dlpackpp::Device::cpu(),
      ReleaseCounter{});
  const double sum = torch_sum_and_release(exported.release());
  std::printf("to libtorch: sum %.1f, dlpackpp deleter ran %d time(s)\n", sum, g_released);
  return sum == 21.0 && g_released == 1 ? 0 : 4;
}
