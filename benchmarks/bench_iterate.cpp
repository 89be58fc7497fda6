// SPDX-License-Identifier: Apache-2.0
// for_each_element over a view of run-time rank against the nested loop a programmer writes
// knowing rank and layout at compile time (memory order, raw pointer, contiguous inner loop).
// Each case runs two kernels: a sum (a dependent chain of float adds: loop overhead shows) and
// an in-place x = 2x + 1 (vectorizable: the inner loop's code generation shows).
//   build/<tree>/benchmarks/bench_iterate --benchmark_filter=Iterate
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <dlpackpp/iterate.hpp>
#include <numeric>
#include <vector>

namespace {

using dlpackpp::DataType;
using dlpackpp::TensorView;

// The layouts, all over one buffer of 2^20 float32 (4 MiB).
enum Layout : int {
  contiguous_2d,  // [1024, 1024] row-major
  transposed_2d,  // [1024, 1024] strides [1, 1024]
  padded_2d,      // [1024, 1000] rows of 1024: no two loops fuse
  contiguous_4d,  // [32, 32, 32, 32] row-major
  transposed_4d,  // [32, 32, 32, 32] strides [1, 32, 1024, 32768]
};

const char* name(Layout layout) {
  switch (layout) {
    case contiguous_2d:
      return "contiguous_2d";
    case transposed_2d:
      return "transposed_2d";
    case padded_2d:
      return "padded_2d";
    case contiguous_4d:
      return "contiguous_4d";
    case transposed_4d:
      return "transposed_4d";
  }
  return "?";
}

// One buffer for every case, so that both sides read the same pages (a fresh 4 MiB vector
// per case lands on pages of varying kinds and its first-touch costs skew the comparison).
std::vector<float>& shared_buffer() {
  static std::vector<float> buffer = [] {
    std::vector<float> b(std::size_t{1} << 20);
    std::iota(b.begin(), b.end(), 0.0f);
    return b;
  }();
  return buffer;
}

struct Fixture {
  std::vector<float>& buffer = shared_buffer();

  TensorView view(Layout layout) {
    DataType f32 = DataType::float32();
    switch (layout) {
      case contiguous_2d:
        return TensorView(buffer.data(), f32, {1024, 1024});
      case transposed_2d:
        return TensorView(buffer.data(), f32, {1024, 1024}, {1, 1024});
      case padded_2d:
        return TensorView(buffer.data(), f32, {1024, 1000}, {1024, 1});
      case contiguous_4d:
        return TensorView(buffer.data(), f32, {32, 32, 32, 32});
      case transposed_4d:
        return TensorView(buffer.data(), f32, {32, 32, 32, 32}, {1, 32, 1024, 32768});
    }
    return TensorView(buffer.data(), f32, {0});
  }
};

// The hand-written side: the loop nest in memory order, written for each layout.
template <class Op>
void hand_loop(Layout layout, float* p, Op op) {
  switch (layout) {
    case contiguous_2d:
      for (std::int64_t i = 0; i < 1024; ++i)
        for (std::int64_t j = 0; j < 1024; ++j) op(p[i * 1024 + j]);
      break;
    case transposed_2d:  // element (i, j) at i + 1024 j: j outermost in memory order
      for (std::int64_t j = 0; j < 1024; ++j)
        for (std::int64_t i = 0; i < 1024; ++i) op(p[j * 1024 + i]);
      break;
    case padded_2d:
      for (std::int64_t i = 0; i < 1024; ++i)
        for (std::int64_t j = 0; j < 1000; ++j) op(p[i * 1024 + j]);
      break;
    case contiguous_4d:
      for (std::int64_t a = 0; a < 32; ++a)
        for (std::int64_t b = 0; b < 32; ++b)
          for (std::int64_t c = 0; c < 32; ++c)
            for (std::int64_t d = 0; d < 32; ++d) op(p[((a * 32 + b) * 32 + c) * 32 + d]);
      break;
    case transposed_4d:  // element (a, b, c, d) at a + 32 b + 1024 c + 32768 d
      for (std::int64_t d = 0; d < 32; ++d)
        for (std::int64_t c = 0; c < 32; ++c)
          for (std::int64_t b = 0; b < 32; ++b)
            for (std::int64_t a = 0; a < 32; ++a) op(p[((d * 32 + c) * 32 + b) * 32 + a]);
      break;
  }
}

void BM_SumHand(benchmark::State& state) {
  Fixture f;
  const auto layout = static_cast<Layout>(state.range(0));
  state.SetLabel(name(layout));
  for (auto _ : state) {
    float sum = 0;
    hand_loop(layout, f.buffer.data(), [&](float x) { sum += x; });
    benchmark::DoNotOptimize(sum);
  }
}

void BM_SumIterate(benchmark::State& state) {
  Fixture f;
  const auto layout = static_cast<Layout>(state.range(0));
  state.SetLabel(name(layout));
  const TensorView v = f.view(layout);
  for (auto _ : state) {
    float sum = 0;
    dlpackpp::for_each_element<const float>(v, [&](float x) { sum += x; });
    benchmark::DoNotOptimize(sum);
  }
}

void BM_ScaleHand(benchmark::State& state) {
  Fixture f;
  const auto layout = static_cast<Layout>(state.range(0));
  state.SetLabel(name(layout));
  for (auto _ : state) {
    hand_loop(layout, f.buffer.data(), [](float& x) { x = 2 * x + 1; });
    benchmark::ClobberMemory();
  }
}

void BM_ScaleIterate(benchmark::State& state) {
  Fixture f;
  const auto layout = static_cast<Layout>(state.range(0));
  state.SetLabel(name(layout));
  const TensorView v = f.view(layout);
  for (auto _ : state) {
    dlpackpp::for_each_element<float>(v, [](float& x) { x = 2 * x + 1; });
    benchmark::ClobberMemory();
  }
}

// For reference: the loop written without looking at the layout, in index order through a
// TensorAccessor (what transposed data costs when nobody reorders the loops).
void BM_ScaleIndexOrder(benchmark::State& state) {
  Fixture f;
  const auto layout = static_cast<Layout>(state.range(0));
  state.SetLabel(name(layout));
  const TensorView v = f.view(layout);
  for (auto _ : state) {
    if (v.ndim() == 2) {
      const auto x = v.accessor<float, 2>();
      for (std::int64_t i = 0; i < x.size(0); ++i)
        for (std::int64_t j = 0; j < x.size(1); ++j) x(i, j) = 2 * x(i, j) + 1;
    } else {
      const auto x = v.accessor<float, 4>();
      for (std::int64_t a = 0; a < x.size(0); ++a)
        for (std::int64_t b = 0; b < x.size(1); ++b)
          for (std::int64_t c = 0; c < x.size(2); ++c)
            for (std::int64_t d = 0; d < x.size(3); ++d) x(a, b, c, d) = 2 * x(a, b, c, d) + 1;
    }
    benchmark::ClobberMemory();
  }
}

void layouts(benchmark::internal::Benchmark* b) {
  for (int layout = contiguous_2d; layout <= transposed_4d; ++layout) b->Arg(layout);
}

}  // namespace

BENCHMARK(BM_SumHand)->Apply(layouts);
BENCHMARK(BM_SumIterate)->Apply(layouts);
BENCHMARK(BM_ScaleHand)->Apply(layouts);
BENCHMARK(BM_ScaleIterate)->Apply(layouts);
BENCHMARK(BM_ScaleIndexOrder)->Apply(layouts);
BENCHMARK_MAIN();
