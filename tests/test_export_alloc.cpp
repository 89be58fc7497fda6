// SPDX-License-Identifier: Apache-2.0
// Counts global operator new/delete to prove an export costs one allocation on top of its buffer.
#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace {

// Only the test's own thread counts, and only between begin() and end(): GoogleTest and the
// runtime allocate at other times.
struct Counts {
  int news = 0;
  int deletes = 0;
  int aligned_news = 0;
  int aligned_deletes = 0;
};
thread_local bool counting = false;
thread_local Counts counts;

void* raw_allocate(std::size_t size, std::size_t alignment) {
  if (size == 0) size = 1;
  void* p = nullptr;
  if (alignment <= __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    p = std::malloc(size);
  } else if (posix_memalign(&p, alignment, size) != 0) {
    p = nullptr;
  }
  if (p != nullptr && counting) {
    ++counts.news;
    if (alignment > __STDCPP_DEFAULT_NEW_ALIGNMENT__) ++counts.aligned_news;
  }
  return p;
}
void* allocate_or_throw(std::size_t size, std::size_t alignment) {
  void* p = raw_allocate(size, alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void raw_deallocate(void* p, bool aligned) noexcept {
  if (p == nullptr) return;
  if (counting) {
    ++counts.deletes;
    if (aligned) ++counts.aligned_deletes;
  }
  std::free(p);
}
constexpr std::size_t kPlain = __STDCPP_DEFAULT_NEW_ALIGNMENT__;
std::size_t align_of(std::align_val_t a) { return static_cast<std::size_t>(a); }

}  // namespace

// Every replaceable form, so that no allocation slips past the count.
void* operator new(std::size_t n) { return allocate_or_throw(n, kPlain); }
void* operator new[](std::size_t n) { return allocate_or_throw(n, kPlain); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return raw_allocate(n, kPlain);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return raw_allocate(n, kPlain);
}
void* operator new(std::size_t n, std::align_val_t a) { return allocate_or_throw(n, align_of(a)); }
void* operator new[](std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, align_of(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return raw_allocate(n, align_of(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return raw_allocate(n, align_of(a));
}
void operator delete(void* p) noexcept { raw_deallocate(p, false); }
void operator delete[](void* p) noexcept { raw_deallocate(p, false); }
void operator delete(void* p, std::size_t) noexcept { raw_deallocate(p, false); }
void operator delete[](void* p, std::size_t) noexcept { raw_deallocate(p, false); }
void operator delete(void* p, const std::nothrow_t&) noexcept { raw_deallocate(p, false); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { raw_deallocate(p, false); }
void operator delete(void* p, std::align_val_t) noexcept { raw_deallocate(p, true); }
void operator delete[](void* p, std::align_val_t) noexcept { raw_deallocate(p, true); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { raw_deallocate(p, true); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { raw_deallocate(p, true); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  raw_deallocate(p, true);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  raw_deallocate(p, true);
}

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::LegacyManagedTensor;
using dlpackpp::ManagedTensor;

// Under valgrind (or any tool that interposes the allocator) the replacements above never
// run, so nothing can be counted: such runs skip rather than fail. .ci/memcheck.sh keeps them
// with --soname-synonyms=somalloc=nouserintercepts, so there the counts are taken as usual.
bool replacements_in_effect() {
  counts = {};
  counting = true;
  ::operator delete(::operator new(1));
  counting = false;
  const bool counted = counts.news == 1 && counts.deletes == 1;
  counts = {};
  return counted;
}
#define DLPACKPP_SKIP_UNLESS_COUNTING()                                                      \
  if (!replacements_in_effect())                                                             \
  GTEST_SKIP() << "DLPACKPP_TEST_SKIPPED: this test's operator new never ran (an allocator " \
                  "interposer such as valgrind replaced it; with valgrind, pass "            \
                  "--soname-synonyms=somalloc=nouserintercepts), so allocations cannot be counted"

// The window a case runs in: the case makes its buffer, calls mark() right before the
// export, and returns the export.
class Window {
 public:
  void mark() { before_export_ = counts; }
  const Counts& before_export() const { return before_export_; }

 private:
  Counts before_export_;
};

struct alignas(64) OverAlignedOwner {
  std::unique_ptr<float[]> buffer;
};

using Case = ManagedTensor (*)(Window&);
struct Row {
  const char* name;
  Case make;
  int export_news;  // allocations the export itself may make
};

ManagedTensor vector_export(Window& w) {
  std::vector<float> values(6, 1.0f);
  w.mark();
  return dlpackpp::from_vector(std::move(values), {2, 3});
}
ManagedTensor unique_export(Window& w) {
  std::unique_ptr<float[]> values(new float[6]{});
  w.mark();
  return dlpackpp::from_unique_ptr(std::move(values), {6});
}
ManagedTensor shared_export(Window& w) {
  std::shared_ptr<float[]> values(new float[6]{});
  w.mark();
  return dlpackpp::from_shared_ptr(std::move(values), {3, 2});
}
ManagedTensor shared_copy_export(Window& w) {
  auto value = std::make_shared<double>(1.0);
  w.mark();
  return dlpackpp::from_shared_ptr(value, {});  // a copy: the count goes up, nothing allocates
}
ManagedTensor lambda_export(Window& w) {
  std::unique_ptr<float[]> values(new float[6]{});
  float* data = values.get();
  w.mark();
  return dlpackpp::wrap(data, DataType::float32(), {6}, {}, Device::cpu(),
                        [owned = std::move(values)] { static_cast<void>(owned); });
}
ManagedTensor over_aligned_owner_export(Window& w) {
  OverAlignedOwner owner{std::unique_ptr<float[]>(new float[4]{})};
  float* data = owner.buffer.get();
  w.mark();
  return dlpackpp::wrap(data, DataType::float32(), {2, 2}, {}, Device::cpu(), std::move(owner));
}
ManagedTensor strided_wrap_export(Window& w) {
  static float data[12] = {};
  w.mark();
  return dlpackpp::wrap(data, DataType::float32(), {3, 2}, {1, 6}, Device::cpu(), 0);
}
ManagedTensor allocate_export(Window& w) {
  w.mark();
  return dlpackpp::allocate(DataType::float32(), {2, 3});
}
ManagedTensor allocate_zero_size_export(Window& w) {
  w.mark();
  return dlpackpp::allocate(DataType::float32(), {2, 0});
}
ManagedTensor allocate_zero_dim_export(Window& w) {
  w.mark();
  return dlpackpp::allocate(DataType::int8(), {});
}
ManagedTensor allocate_high_rank_export(Window& w) {
  // More dimensions than any inline buffer holds: the strides must still go in the block.
  std::array<std::int64_t, 20> shape;
  shape.fill(1);
  w.mark();
  return dlpackpp::allocate(DataType::uint8(), shape);
}
void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

class ExportAllocations : public ::testing::TestWithParam<Row> {};

TEST_P(ExportAllocations, OneBlockOnTopOfTheBufferAndAllFreedOnRelease) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  const Row& row = GetParam();
  Window window;
  counts = {};
  counting = true;
  {
    ManagedTensor t = row.make(window);
    const Counts after_export = counts;
    t.reset();
    const Counts after_reset = counts;
    counting = false;
    EXPECT_EQ(after_export.news - window.before_export().news, row.export_news);
    EXPECT_EQ(after_export.deletes, window.before_export().deletes)
        << "the export freed something of the caller's before the consumer was done";
    EXPECT_EQ(after_reset.news, after_export.news) << "releasing allocated";
  }
  EXPECT_EQ(counts.deletes, counts.news) << "releasing the export must free all it holds";
  EXPECT_EQ(counts.aligned_deletes, counts.aligned_news)
      << "aligned allocations must be freed by the aligned operator delete";
}

// The baseline: a handle that owns nothing costs nothing.
ManagedTensor empty_handle(Window& w) {
  w.mark();
  return ManagedTensor();
}

const Row kRows[] = {
    {"from_vector", &vector_export, 1},
    {"from_unique_ptr", &unique_export, 1},
    {"from_shared_ptr", &shared_export, 1},
    {"from_shared_ptr_copy", &shared_copy_export, 1},
    {"wrap_lambda_owner", &lambda_export, 1},
    {"wrap_over_aligned_owner", &over_aligned_owner_export, 1},
    {"wrap_with_strides", &strided_wrap_export, 1},
    {"allocate", &allocate_export, 2},
    {"allocate_zero_size", &allocate_zero_size_export, 2},
    {"allocate_zero_dim", &allocate_zero_dim_export, 2},
    {"allocate_rank_20", &allocate_high_rank_export, 2},
    {"empty_handle", &empty_handle, 0},
};
INSTANTIATE_TEST_SUITE_P(Exports, ExportAllocations, ::testing::ValuesIn(kRows),
                         [](const ::testing::TestParamInfo<Row>& row) {
                           return std::string(row.param.name);
                         });

TEST(ExportAllocations, LegacyExportsCostTheSame) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  std::vector<std::int32_t> values(4);
  counts = {};
  counting = true;
  LegacyManagedTensor t = dlpackpp::from_vector<LegacyManagedTensor>(std::move(values), {4});
  const int export_news = counts.news;
  t.reset();
  counting = false;
  EXPECT_EQ(export_news, 1);
  EXPECT_EQ(counts.deletes, 2);  // the block, then the vector's buffer it had taken over
}

TEST(ExportAllocations, OverAlignedOwnersUseTheAlignedOperators) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  counts = {};
  counting = true;
  {
    Window window;
    ManagedTensor t = over_aligned_owner_export(window);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.get()) % alignof(OverAlignedOwner), 0u);
  }
  counting = false;
  EXPECT_EQ(counts.aligned_news, 1);
  EXPECT_EQ(counts.aligned_deletes, 1);
}

}  // namespace
