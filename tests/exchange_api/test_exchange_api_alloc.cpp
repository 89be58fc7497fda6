// SPDX-License-Identifier: Apache-2.0
// view_from_object() never heap-allocates (nor does the producer kit's trampoline around a
// non-allocating Impl): counted by replacing global operator new/delete, so a binary of its own.
#include "mock_framework.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* counted_malloc(std::size_t size) noexcept {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}

void* counted_new(std::size_t size) {
  if (void* p = counted_malloc(size)) return p;
  throw std::bad_alloc();
}
}  // namespace

// Every non-aligned form is replaced, so that no allocation escapes the count and every
// block is freed by the allocator that made it.
void* operator new(std::size_t size) { return counted_new(size); }
void* operator new[](std::size_t size) { return counted_new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return counted_malloc(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return counted_malloc(size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

// Heap allocations made while `f` runs; GoogleTest's own allocations stay outside.
template <class F>
long allocations_during(F&& f) {
  allocations.store(0);
  counting.store(true);
  f();
  counting.store(false);
  return allocations.load();
}

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
