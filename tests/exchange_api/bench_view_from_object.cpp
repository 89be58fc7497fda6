// SPDX-License-Identifier: Apache-2.0
// How much view_from_object() adds over calling the table's dltensor_from_py_object_no_sync
// directly: the raw call, the raw call plus the same validation a careful consumer writes by
// hand (TensorView::try_from), and view_from_object(). Also the producer kit's trampoline
// against a bare C function. Built when Google Benchmark is found; not a test.
#include "mock_producer.hpp"

#include <benchmark/benchmark.h>

namespace {

// A hand-written C producer entry, for the trampoline's own cost.
int bare_dltensor_from_py_object(void* py_object, DLTensor* out) {
  mock::MockImpl::dltensor_from_py_object_no_sync(py_object, *out);
  return 0;
}

const DLPackExchangeAPI* kit_table() { return dlpackpp::make_exchange_api<mock::MockImpl>(); }

const DLPackExchangeAPI* bare_table() {
  static DLPackExchangeAPI table = [] {
    DLPackExchangeAPI t = *kit_table();
    t.dltensor_from_py_object_no_sync = &bare_dltensor_from_py_object;
    return t;
  }();
  return &table;
}

void BM_raw_call(benchmark::State& state, const DLPackExchangeAPI* api) {
  auto object = mock::make_object();
  void* obj = object.get();
  for (auto _ : state) {
    benchmark::DoNotOptimize(api);
    DLTensor storage;
    int rc = api->dltensor_from_py_object_no_sync(obj, &storage);
    benchmark::DoNotOptimize(rc);
    benchmark::DoNotOptimize(storage);
  }
}

void BM_raw_call_then_try_from(benchmark::State& state, const DLPackExchangeAPI* api) {
  auto object = mock::make_object();
  void* obj = object.get();
  for (auto _ : state) {
    benchmark::DoNotOptimize(api);
    DLTensor storage;
    if (api->dltensor_from_py_object_no_sync(obj, &storage) != 0) state.SkipWithError("failed");
    dlpackpp::Result<dlpackpp::TensorView> v = dlpackpp::TensorView::try_from(storage);
    benchmark::DoNotOptimize(v);
  }
}

void BM_view_from_object(benchmark::State& state, const DLPackExchangeAPI* api) {
  auto object = mock::make_object();
  void* obj = object.get();
  for (auto _ : state) {
    benchmark::DoNotOptimize(api);
    DLTensor storage;
    dlpackpp::Result<dlpackpp::TensorView> v = dlpackpp::view_from_object(api, obj, storage);
    benchmark::DoNotOptimize(v);
  }
}

BENCHMARK_CAPTURE(BM_raw_call, bare_c_entry, bare_table());
BENCHMARK_CAPTURE(BM_raw_call, kit_trampoline, kit_table());
BENCHMARK_CAPTURE(BM_raw_call_then_try_from, kit_trampoline, kit_table());
BENCHMARK_CAPTURE(BM_view_from_object, kit_trampoline, kit_table());

}  // namespace

BENCHMARK_MAIN();
