// SPDX-License-Identifier: Apache-2.0
// TensorView never heap-allocates for ndim <= 8: counted by replacing global operator new/delete.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <dlpackpp/tensor_view.hpp>
#include <new>
#include <utility>
#include <vector>

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
// block is freed by the allocator that made it (the sanitizer's runtime has its own forms).
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

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::IntSpan;
using dlpackpp::TensorView;
using Ints = std::vector<std::int64_t>;

// Heap allocations made while `f` runs; GoogleTest's own allocations stay outside.
template <class F>
long allocations_during(F&& f) {
  allocations.store(0);
  counting.store(true);
  f();
  counting.store(false);
  return allocations.load();
}

// Under valgrind (or any tool that interposes the allocator) the replacements above never
// run, so nothing can be counted: such runs skip rather than fail. .ci/memcheck.sh keeps them
// with --soname-synonyms=somalloc=nouserintercepts, so there the counts are taken as usual.
bool replacements_in_effect() {
  return allocations_during([] { ::operator delete(::operator new(1)); }) == 1;
}
#define DLPACKPP_SKIP_UNLESS_COUNTING()                                                         \
  if (!replacements_in_effect())                                                                \
  GTEST_SKIP() << "DLPACKPP_TEST_SKIPPED: this test's operator new never ran (an allocator "    \
                  "interposer such as valgrind replaced it; with valgrind, pass "               \
                  "--soname-synonyms=somalloc=nouserintercepts), so allocations cannot be counted"

// A float tensor of extents 1, 2, 1, 2, ... over `storage`, with NULL or row-major strides.
struct Tensor {
  Ints shape;
  Ints strides;
  std::vector<float> storage;
  DLTensor t{};

  Tensor(int ndim, bool null_strides) {
    std::int64_t numel = 1;
    for (int d = 0; d < ndim; ++d) {
      shape.push_back(1 + d % 2);
      numel *= 1 + d % 2;
    }
    strides.assign(shape.size(), 1);
    for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
    storage.resize(static_cast<std::size_t>(numel));
    t.data = storage.data();
    t.device = Device::cpu();
    t.ndim = ndim;
    t.dtype = DataType::float32();
    t.shape = shape.data();
    t.strides = null_strides ? nullptr : strides.data();
  }
};

// Everything a consumer does with a view of `t`, folded into a number so none of it is
// optimized away.
std::int64_t use_views(const DLTensor& t) {
  std::int64_t sum = 0;
  const TensorView v(t);
  const dlpackpp::Result<TensorView> tried = TensorView::try_from(t);
  const TensorView raw(
      t.data, t.dtype, IntSpan(t.shape, static_cast<std::size_t>(t.ndim)),
      t.strides == nullptr ? IntSpan() : IntSpan(t.strides, static_cast<std::size_t>(t.ndim)));
  const TensorView trusted = TensorView::unchecked(t, 0);
  TensorView copy = v;
  copy = raw;
  const TensorView moved = std::move(copy);
  for (const TensorView* view : {&v, &*tried, &raw, &trusted, &moved}) {
    sum += view->numel() + view->nbytes() + view->ndim();
    for (std::int64_t s : view->strides()) sum += s;
    sum += view->is_contiguous() + view->is_fortran_contiguous() + view->is_compact();
    view->require_dtype<float>()
        .require_ndim(t.ndim)
        .require_device(Device::cpu())
        .require_contiguous();
    sum += view->data<const float>() != nullptr;
    sum += view->to_dltensor().ndim;
  }
  sum += dlpackpp::validate(t).has_value();
  return sum;
}

TEST(TensorViewAllocations, NoneForRanksUpTo8) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  for (int ndim = 0; ndim <= 8; ++ndim) {
    for (const bool null_strides : {false, true}) {
      const Tensor tensor(ndim, null_strides);
      std::int64_t sum = 0;
      EXPECT_EQ(allocations_during([&] { sum = use_views(tensor.t); }), 0)
          << "ndim " << ndim << (null_strides ? " with NULL strides" : " with strides");
      EXPECT_GT(sum, 0);
    }
  }
}

TEST(TensorViewAllocations, NoneForAccessors) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  const Tensor tensor(2, true);
  const TensorView v(tensor.t);
  float total = 0;
  EXPECT_EQ(allocations_during([&] {
              const auto acc = v.accessor<const float, 2>();
              for (std::int64_t i = 0; i < acc.size(0); ++i) {
                for (std::int64_t j = 0; j < acc.size(1); ++j) total += acc(i, j) + acc[i][j];
              }
            }),
            0);
  EXPECT_EQ(total, 0.0f);
}

// Producer strides are borrowed at any rank; only normalizing NULL strides beyond the inline
// capacity needs the heap. This is also what shows the counter counts.
TEST(TensorViewAllocations, Rank9AllocatesOnlyForNullStrides) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  const Tensor strided(9, false);
  EXPECT_EQ(allocations_during([&] { TensorView v(strided.t); }), 0);
  const Tensor null_strides(9, true);
  EXPECT_GT(allocations_during([&] { TensorView v(null_strides.t); }), 0);
  std::int64_t sum = 0;
  EXPECT_GT(allocations_during([&] { sum = use_views(null_strides.t); }), 0);
  EXPECT_GT(sum, 0);
}

// Failures build their message on the heap; only success is promised to be free.
TEST(TensorViewAllocations, FailuresMayAllocate) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  Tensor tensor(2, false);
  tensor.shape[1] = -1;
  bool valid = true;
  EXPECT_GT(allocations_during([&] { valid = dlpackpp::validate(tensor.t).has_value(); }), 0);
  EXPECT_FALSE(valid);
}

}  // namespace
