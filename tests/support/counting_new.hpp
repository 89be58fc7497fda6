// SPDX-License-Identifier: Apache-2.0
// Counts heap allocations by replacing the global operator new/delete (the non-aligned forms,
// so that no allocation escapes the count and every block is freed by the allocator that made
// it). The replacements are definitions: include this from exactly one translation unit of a
// test binary, which is then a binary of its own.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace counting_new {
inline std::atomic<bool> counting{false};
inline std::atomic<long> allocations{0};

inline void* counted_malloc(std::size_t size) noexcept {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}

inline void* counted_new(std::size_t size) {
  if (void* p = counted_malloc(size)) return p;
  throw std::bad_alloc();
}

// Heap allocations made while `f` runs; GoogleTest's own allocations stay outside.
template <class F>
long allocations_during(F&& f) {
  allocations.store(0);
  counting.store(true);
  f();
  counting.store(false);
  return allocations.load();
}

// Under valgrind (or any tool that interposes the allocator) the replacements below never
// run, so nothing can be counted: such runs skip rather than fail. .ci/memcheck.sh keeps them
// with --soname-synonyms=somalloc=nouserintercepts, so there the counts are taken as usual.
inline bool replacements_in_effect() {
  return allocations_during([] { ::operator delete(::operator new(1)); }) == 1;
}
}  // namespace counting_new

#define DLPACKPP_SKIP_UNLESS_COUNTING()                                                      \
  if (!counting_new::replacements_in_effect())                                               \
  GTEST_SKIP() << "DLPACKPP_TEST_SKIPPED: this test's operator new never ran (an allocator " \
                  "interposer such as valgrind replaced it; with valgrind, pass "            \
                  "--soname-synonyms=somalloc=nouserintercepts), so allocations cannot be "  \
                  "counted"

void* operator new(std::size_t size) { return counting_new::counted_new(size); }
void* operator new[](std::size_t size) { return counting_new::counted_new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return counting_new::counted_malloc(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return counting_new::counted_malloc(size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
