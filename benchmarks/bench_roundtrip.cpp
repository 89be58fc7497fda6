// SPDX-License-Identifier: Apache-2.0
// dlpackpp against hand-written C, side by side in one run: exporting a buffer, adopting and
// validating it, and summing it through a typed accessor.
#include <dlpackpp/dlpackpp.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "c_baseline.h"

namespace {

std::vector<float> make_buffer(std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7);
  return v;
}

struct NoOwner {};

DLManagedTensorVersioned* cpp_export(float* data, std::int64_t rows, std::int64_t cols) {
  const std::int64_t shape[] = {rows, cols};
  return dlpackpp::wrap(data, dlpackpp::dtype_of<float>, shape, {}, dlpackpp::Device::cpu(),
                        NoOwner{})
      .release();
}

double cpp_consume_sum(DLManagedTensorVersioned* raw) {
  const dlpackpp::ManagedTensor t = dlpackpp::ManagedTensor::adopt(raw);
  const auto x = t.view().accessor<const float, 2>();
  double sum = 0.0;
  for (std::int64_t i = 0; i < x.size(0); ++i) {
    for (std::int64_t j = 0; j < x.size(1); ++j) sum += x(i, j);
  }
  return sum;
}

// Export + consume: the whole trip a tensor makes between two libraries.
void BM_RoundTrip_C(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  std::vector<float> buf = make_buffer(n * n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(c_consume_sum(c_export_matrix(buf.data(), n, n)));
  }
  state.SetItemsProcessed(state.iterations() * n * n);
}
void BM_RoundTrip_dlpackpp(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  std::vector<float> buf = make_buffer(n * n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(cpp_consume_sum(cpp_export(buf.data(), n, n)));
  }
  state.SetItemsProcessed(state.iterations() * n * n);
}
BENCHMARK(BM_RoundTrip_C)->Arg(2)->Arg(64)->Arg(1024);
BENCHMARK(BM_RoundTrip_dlpackpp)->Arg(2)->Arg(64)->Arg(1024);

// Consume only (adopt + validate + view + release), on a tensor exported once per iteration
// outside the timed region's noise: the fixed per-tensor overhead a consumer pays.
void BM_AdoptView_C(benchmark::State& state) {
  std::vector<float> buf = make_buffer(4);
  for (auto _ : state) {
    DLManagedTensorVersioned* t = c_export_matrix(buf.data(), 2, 2);
    benchmark::DoNotOptimize(t->dl_tensor.ndim == 2 && t->dl_tensor.dtype.bits == 32);
    t->deleter(t);
  }
}
void BM_AdoptView_dlpackpp(benchmark::State& state) {
  std::vector<float> buf = make_buffer(4);
  for (auto _ : state) {
    DLManagedTensorVersioned* raw = c_export_matrix(buf.data(), 2, 2);
    const dlpackpp::ManagedTensor t = dlpackpp::ManagedTensor::adopt(raw);
    const dlpackpp::TensorView v = t.view();
    benchmark::DoNotOptimize(v.ndim() == 2 && v.dtype() == dlpackpp::DataType::float32());
  }
}
// adopt_unchecked: the same checks as the C baseline (none beyond what the caller does).
void BM_AdoptView_dlpackpp_unchecked(benchmark::State& state) {
  std::vector<float> buf = make_buffer(4);
  for (auto _ : state) {
    DLManagedTensorVersioned* raw = c_export_matrix(buf.data(), 2, 2);
    const dlpackpp::ManagedTensor t = dlpackpp::ManagedTensor::adopt_unchecked(raw);
    const dlpackpp::TensorView v = t.view();
    benchmark::DoNotOptimize(v.ndim() == 2 && v.dtype() == dlpackpp::DataType::float32());
  }
}
BENCHMARK(BM_AdoptView_C);
BENCHMARK(BM_AdoptView_dlpackpp);
BENCHMARK(BM_AdoptView_dlpackpp_unchecked);

}  // namespace

BENCHMARK_MAIN();
