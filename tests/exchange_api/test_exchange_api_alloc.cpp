// SPDX-License-Identifier: Apache-2.0
// view_from_object() never heap-allocates (nor does the producer kit's trampoline around a
// non-allocating Impl): counted by replacing global operator new/delete, so a binary of its own.
#include "mock_producer.hpp"
#include "support/counting_new.hpp"

#include <gtest/gtest.h>

namespace {
using counting_new::allocations_during;

TEST(ExchangeApiAlloc, ViewFromObjectDoesNotAllocate) {
  const DLPackExchangeAPI* api = dlpackpp::make_exchange_api<mock::MockImpl>();
  auto object = mock::make_object();
  long seen = 0;
  const long n = allocations_during([&] {
    for (int i = 0; i < 100; ++i) {
      DLTensor storage;
      dlpackpp::Result<dlpackpp::TensorView> v =
          dlpackpp::view_from_object(api, object.get(), storage);
      seen += v ? v->shape(1) : -1000;
    }
  });
  EXPECT_EQ(n, 0);
  EXPECT_EQ(seen, 300);
}

TEST(ExchangeApiAlloc, ViewFromObjectWithNullStridesDoesNotAllocate) {
  const DLPackExchangeAPI* api = dlpackpp::make_exchange_api<mock::MockImpl>();
  auto object = mock::make_object();
  object->strides.clear();
  bool ok = true;
  const long n = allocations_during([&] {
    DLTensor storage;
    dlpackpp::Result<dlpackpp::TensorView> v =
        dlpackpp::view_from_object(api, object.get(), storage);
    ok = v && v->stride(0) == 3;
  });
  EXPECT_EQ(n, 0);
  EXPECT_TRUE(ok);
}

TEST(ExchangeApiAlloc, CurrentStreamDoesNotAllocate) {
  const DLPackExchangeAPI* api = dlpackpp::make_exchange_api<mock::MockImpl>();
  void* stream = nullptr;
  const long n = allocations_during([&] {
    dlpackpp::Result<void*> s = dlpackpp::current_stream(api, dlpackpp::Device::cuda(2));
    stream = s ? *s : nullptr;
  });
  EXPECT_EQ(n, 0);
  EXPECT_NE(stream, nullptr);
}

// The counter sees allocations at all: a failure builds its message on the heap.
TEST(ExchangeApiAlloc, CounterSeesTheColdPath) {
  const DLPackExchangeAPI* api = dlpackpp::make_exchange_api<mock::MockImpl>();
  const long n = allocations_during([&] {
    DLTensor storage;
    dlpackpp::Result<dlpackpp::TensorView> v = dlpackpp::view_from_object(api, nullptr, storage);
    EXPECT_FALSE(v);
  });
  EXPECT_GT(n, 0);
}

}  // namespace
