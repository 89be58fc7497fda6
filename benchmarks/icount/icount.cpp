// SPDX-License-Identifier: Apache-2.0
// Instruction counts of dlpackpp's per-tensor path against hand-written C (c_side.c), case by
// case, under valgrind's callgrind: instruction counts are stable where timings are not.
//   cmake --workflow --preset bench && cmake --build --preset bench --target icount
// runs this binary as
//   DLPACKPP_ICOUNT_OUT=<file> valgrind --tool=callgrind --collect-atstart=no
//       --callgrind-out-file=<file> bench_icount
// Each case is timed over `kReps` calls between CALLGRIND_TOGGLE_COLLECT pairs and dumped with
// CALLGRIND_DUMP_STATS_AT; the binary then reads its own dumps back and prints the table.
// Heap allocations per call come from counting operator new in this binary.
#include <dlpackpp/dlpackpp.hpp>

#include <valgrind/callgrind.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "c_side.h"
#include "guard.hpp"
#if DLPACKPP_ICOUNT_TORCH
#include "torch_side.hpp"
#endif

namespace {

std::uint64_t g_allocations = 0;  // operator new calls, counted below main's namespace

constexpr int kReps = 1000;
constexpr std::int64_t kElements = 256;  // float32 elements in every tensor

template <class T>
inline void keep(const T& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

void noop_deleter(DLManagedTensorVersioned*) {}
void noop_legacy_deleter(DLManagedTensor*) {}

// One tensor of each kind per rank, built once; consumers adopt it and release it through a
// deleter that does nothing, so only the consumer's own work is counted.
struct Fixture {
  int ndim = 0;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  std::vector<float> data = std::vector<float>(kElements, 1.0f);
  DLManagedTensorVersioned versioned{};
  DLManagedTensor legacy{};  // NULL strides, as 0.x producers send

  explicit Fixture(int rank) : ndim(rank) {
    const std::int64_t extent = rank == 1 ? 256 : rank == 4 ? 4 : 2;
    shape.assign(static_cast<std::size_t>(rank), extent);
    strides.assign(static_cast<std::size_t>(rank), 1);
    for (int d = rank - 2; d >= 0; --d) {
      strides[static_cast<std::size_t>(d)] = strides[static_cast<std::size_t>(d) + 1] * extent;
    }
    DLTensor t{};
    t.data = data.data();
    t.device = dlpackpp::Device::cpu();
    t.ndim = rank;
    t.dtype = dlpackpp::DataType::float32();
    t.shape = shape.data();
    t.strides = strides.data();
    versioned.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    versioned.dl_tensor = t;
    versioned.deleter = noop_deleter;
    legacy.dl_tensor = t;
    legacy.dl_tensor.strides = nullptr;
    legacy.deleter = noop_legacy_deleter;
  }
};

using Case = void (*)(Fixture&);

// ---- the cases: each does one operation end to end --------------------------------------

[[gnu::noinline]] void noop(Fixture& f) { keep(f); }

[[gnu::noinline]] void c_consume(Fixture& f) {
  CTensorFacts facts;
  const int ok = c_consume_versioned(&f.versioned, f.ndim, &facts);
  keep(ok), keep(facts);
  f.versioned.deleter(&f.versioned);
}

template <class View>
inline void read_facts(const View& v) {
  const float* data = v.template data<const float>();
  const std::int64_t numel = v.numel();
  const bool contiguous = v.is_contiguous();
  const std::int64_t* strides = v.strides().data();
  keep(data), keep(numel), keep(contiguous), keep(strides);
}

[[gnu::noinline]] void cpp_consume(Fixture& f) {
  const auto [t, v] = dlpackpp::ManagedTensor::adopt_with_view(&f.versioned);
  v.require_dtype<float>().require_ndim(f.ndim).require_device(dlpackpp::Device::cpu());
  read_facts(v);
}

[[gnu::noinline]] void cpp_consume_try(Fixture& f) {
  auto r = dlpackpp::ManagedTensor::try_adopt_with_view(&f.versioned);
  if (!r) return;
  const dlpackpp::TensorView& v = r->view;
  if (!v.try_require_dtype<float>() || !v.try_require_ndim(f.ndim)) return;
  read_facts(v);
}

[[gnu::noinline]] void cpp_consume_unchecked(Fixture& f) {
  const auto t = dlpackpp::ManagedTensor::adopt_unchecked(&f.versioned);
  const dlpackpp::TensorView v = t.view();
  v.require_dtype<float>().require_ndim(f.ndim).require_device(dlpackpp::Device::cpu());
  read_facts(v);
}

[[gnu::noinline]] void c_consume_null_strides(Fixture& f) {
  std::int64_t scratch[8];
  CTensorFacts facts;
  const int ok = c_consume_legacy(&f.legacy, f.ndim, scratch, &facts);
  keep(ok), keep(facts);
  f.legacy.deleter(&f.legacy);
}

[[gnu::noinline]] void cpp_consume_null_strides(Fixture& f) {
  const auto [t, v] = dlpackpp::LegacyManagedTensor::adopt_with_view(&f.legacy);
  v.require_dtype<float>().require_ndim(f.ndim).require_device(dlpackpp::Device::cpu());
  read_facts(v);
}

template <int N>
[[gnu::noinline]] void cpp_adopt_accessor(Fixture& f) {
  const auto t = dlpackpp::ManagedTensor::adopt(&f.versioned);
  const auto a = t.accessor<const float, N>();
  keep(a);
}

// The typed one pass: dtype, rank and alignment proved with the tensor, then read.
template <int N>
[[gnu::noinline]] void cpp_adopt_as(Fixture& f) {
  const auto [t, a] = dlpackpp::ManagedTensor::adopt_as<const float, N>(&f.versioned);
  const float* data = a.data();
  const std::int64_t stride = a.stride(0);
  keep(data), keep(stride);
}

[[gnu::noinline]] void c_export_release(Fixture& f) {
  DLManagedTensorVersioned* t = c_export(f.data.data(), f.shape.data(), f.ndim);
  keep(t);
  t->deleter(t);
}

struct NoOwner {};

[[gnu::noinline]] void cpp_export_release(Fixture& f) {
  DLManagedTensorVersioned* t = dlpackpp::wrap(f.data.data(), dlpackpp::DataType::float32(),
                                               f.shape, {}, dlpackpp::Device::cpu(), NoOwner{})
                                    .release();
  keep(t);
  t->deleter(t);
}

// Element loops over the 256 elements: raw pointer arithmetic with the tensor's runtime
// strides (what a consumer of an arbitrary DLPack layout writes) against the accessor.
[[gnu::noinline]] void c_loop(Fixture& f) {
  float s = 0;
  const float* p = f.data.data();
  if (f.ndim == 1) {
    const std::int64_t st = f.strides[0];
    for (std::int64_t i = 0; i < f.shape[0]; ++i) s += p[i * st];
  } else if (f.ndim == 4) {
    const std::int64_t* st = f.strides.data();
    const std::int64_t* n = f.shape.data();
    for (std::int64_t i = 0; i < n[0]; ++i)
      for (std::int64_t j = 0; j < n[1]; ++j)
        for (std::int64_t k = 0; k < n[2]; ++k)
          for (std::int64_t l = 0; l < n[3]; ++l)
            s += p[i * st[0] + j * st[1] + k * st[2] + l * st[3]];
  }
  keep(s);
}

// The accessor is made once, outside the counted loop (the loop is what is compared).
dlpackpp::TensorAccessor<const float, 1> g_rank1;
dlpackpp::TensorAccessor<const float, 4> g_rank4;

[[gnu::noinline]] void cpp_loop(Fixture& f) {
  float s = 0;
  if (f.ndim == 1) {
    const auto a = g_rank1;
    for (std::int64_t i = 0; i < a.size(0); ++i) s += a(i);
  } else if (f.ndim == 4) {
    const auto a = g_rank4;
    for (std::int64_t i = 0; i < a.size(0); ++i)
      for (std::int64_t j = 0; j < a.size(1); ++j)
        for (std::int64_t k = 0; k < a.size(2); ++k)
          for (std::int64_t l = 0; l < a.size(3); ++l) s += a(i, j, k, l);
  }
  keep(s);
}

#if DLPACKPP_ICOUNT_TORCH
[[gnu::noinline]] void torch_consume_null_strides(Fixture& f) { torch_consume(&f.legacy); }
[[gnu::noinline]] void torch_export(Fixture&) { torch_export_release(); }
#endif

// ---- measuring ----------------------------------------------------------------------------

struct Measured {
  std::string name;
  int ndim;
  std::uint64_t allocations;  // over kReps calls
};

std::vector<Measured> g_dumps;

void measure(const char* name, Case run, Fixture& f) {
  run(f);  // warm caches and lazy binding outside the counted region
  const std::uint64_t before = g_allocations;
  Case volatile call = run;  // an opaque call, the same for every case
  CALLGRIND_TOGGLE_COLLECT;
  for (int i = 0; i < kReps; ++i) call(f);
  CALLGRIND_TOGGLE_COLLECT;
  const std::uint64_t allocations = g_allocations - before;
  const std::string label = std::string(name) + "/" + std::to_string(f.ndim);
  CALLGRIND_DUMP_STATS_AT(label.c_str());
  g_dumps.push_back({name, f.ndim, allocations});
}

std::uint64_t totals_of(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("totals:", 0) == 0) return std::strtoull(line.c_str() + 7, nullptr, 10);
  }
  return 0;
}

struct Row {
  const char* label;
  const char* c_case;
  const char* cpp_case;
};

}  // namespace

void* operator new(std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t align) {
  ++g_allocations;
  const auto a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

int main() {
  const struct {
    const char* name;
    Case run;
  } cases[] = {
    {"noop", noop},
    {"c_consume", c_consume},
    {"cpp_consume", cpp_consume},
    {"cpp_consume_try", cpp_consume_try},
    {"cpp_consume_unchecked", cpp_consume_unchecked},
    {"c_consume_null_strides", c_consume_null_strides},
    {"cpp_consume_null_strides", cpp_consume_null_strides},
    {"c_export_release", c_export_release},
    {"cpp_export_release", cpp_export_release},
    {"c_loop", c_loop},
    {"cpp_loop", cpp_loop},
#if DLPACKPP_ICOUNT_TORCH
    {"torch_consume_null_strides", torch_consume_null_strides},
    {"torch_export", torch_export},
#endif
  };
  const int ranks[] = {1, 4, 8};
  for (int rank : ranks) {
    Fixture f(rank);
#if DLPACKPP_ICOUNT_TORCH
    torch_prepare(f.data.data(), f.shape.data(), rank);
#endif
    const dlpackpp::TensorView view = dlpackpp::TensorView::unchecked(f.versioned.dl_tensor);
    if (rank == 1) g_rank1 = view.accessor<const float, 1>();
    if (rank == 4) g_rank4 = view.accessor<const float, 4>();
    for (const auto& c : cases) measure(c.name, c.run, f);
    const Case accessor = rank == 1   ? cpp_adopt_accessor<1>
                          : rank == 4 ? cpp_adopt_accessor<4>
                                      : cpp_adopt_accessor<8>;
    measure("cpp_adopt_accessor", accessor, f);
    const Case adopt_as = rank == 1   ? cpp_adopt_as<1>
                          : rank == 4 ? cpp_adopt_as<4>
                                      : cpp_adopt_as<8>;
    measure("cpp_adopt_as", adopt_as, f);
  }

  const char* out = std::getenv("DLPACKPP_ICOUNT_OUT");
  if (!RUNNING_ON_VALGRIND || out == nullptr) {
    std::printf(
        "Not under callgrind: run `cmake --build --preset bench --target icount`.\n"
        "Heap allocations per call:\n");
    for (const Measured& m : g_dumps) {
      std::printf("  %-26s ndim %d: %.2f\n", m.name.c_str(), m.ndim,
                  static_cast<double>(m.allocations) / kReps);
    }
    return 0;
  }

  // Dump k (1-based) holds case k's instructions; subtract the empty call's.
  std::vector<double> per_call(g_dumps.size());
  for (std::size_t i = 0; i < g_dumps.size(); ++i) {
    per_call[i] =
        static_cast<double>(totals_of(std::string(out) + "." + std::to_string(i + 1))) / kReps;
  }
  const auto find = [&](const char* name, int ndim) {
    double noop_cost = 0;
    for (std::size_t i = 0; i < g_dumps.size(); ++i) {
      if (g_dumps[i].ndim == ndim && g_dumps[i].name == "noop") noop_cost = per_call[i];
    }
    for (std::size_t i = 0; i < g_dumps.size(); ++i) {
      if (g_dumps[i].ndim == ndim && g_dumps[i].name == name) {
        return std::make_pair(per_call[i] - noop_cost,
                              static_cast<double>(g_dumps[i].allocations) / kReps);
      }
    }
    return std::make_pair(-1.0, -1.0);
  };
  const Row rows[] = {
    {"consume versioned: adopt, view, require, read facts", "c_consume", "cpp_consume"},
    {"  the same through try_adopt_with_view / try_require_*", "c_consume", "cpp_consume_try"},
    {"  the same through adopt_unchecked", "c_consume", "cpp_consume_unchecked"},
    {"consume legacy, NULL strides (normalized)", "c_consume_null_strides",
     "cpp_consume_null_strides"},
    {"adopt + accessor<const float, N>", "c_consume", "cpp_adopt_accessor"},
    {"adopt_as<const float, N> (typed, one pass)", "c_consume", "cpp_adopt_as"},
    {"export (wrap, no-op owner) + deleter", "c_export_release", "cpp_export_release"},
    {"element loop, 256 floats, runtime strides (ndim 1, 4)", "c_loop", "cpp_loop"},
#if DLPACKPP_ICOUNT_TORCH
    {"libtorch 1.13 at::fromDLPack (legacy, NULL strides)", "c_consume_null_strides",
     "torch_consume_null_strides"},
    {"libtorch 1.13 at::toDLPack + deleter", "c_export_release", "torch_export"},
#endif
  };
  std::printf("| case | ndim | C instr. | dlpackpp instr. | ratio | dlpackpp allocs |\n");
  // (libtorch rows: the third column is libtorch's, allocations counted the same way.)
  std::printf("| --- | --- | --- | --- | --- | --- |\n");
  std::vector<icount_guard::Figure> figures;
  for (const Row& row : rows) {
    for (int rank : ranks) {
      if (std::string(row.c_case) == "c_loop" && rank == 8) continue;
      const auto c = find(row.c_case, rank);
      const auto cpp = find(row.cpp_case, rank);
      std::printf("| %s | %d | %.0f | %.0f | %.2f | %.2f |\n", row.label, rank, c.first, cpp.first,
                  cpp.first / c.first, cpp.second);
      const std::string label(row.label);
      figures.push_back({label.substr(label.find_first_not_of(' ')), rank, c.first, cpp.first});
    }
  }
  // The guard (the bench_icount_guard test): fails when a guarded path grew past its limit.
  if (const char* readme = std::getenv("DLPACKPP_ICOUNT_LIMITS")) {
    return icount_guard::check(figures, icount_guard::read_limits(readme)) == 0 ? 0 : 1;
  }
  return 0;
}
