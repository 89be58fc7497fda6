// SPDX-License-Identifier: Apache-2.0
// Tensors made on one thread and destroyed on others: every deleter and owner runs exactly once.
// .ci/tsan.sh runs this under ThreadSanitizer with DLPACKPP_STRESS_CYCLES=100000 (cycles per
// thread of the ring test); the default keeps the ASan/valgrind runs short.
#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include "support/hand_made.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::LegacyManagedTensor;
using dlpackpp::ManagedTensor;

// Shared by every thread; the deleters run wherever the last handle dies.
std::atomic<int> hand_made_deletes{0};
std::atomic<int> owners_destroyed{0};

// A C-style producer (the tests' hand-made one): four floats 1..4; the deleter counts on
// hand_made_deletes and frees the whole block.
template <class M>
M* make_hand_made() {
  static const dlpackpp_test::Layout four{DataType::float32(), {4},         {}, 0, 0,
                                          DLDevice{kDLCPU, 0}, {1, 2, 3, 4}};
  return dlpackpp_test::make_counted<M>(hand_made_deletes, four);
}

struct CountingOwner {
  CountingOwner() = default;
  CountingOwner(CountingOwner&& other) noexcept : live(std::exchange(other.live, false)) {}
  ~CountingOwner() {
    if (live) owners_destroyed.fetch_add(1, std::memory_order_relaxed);
  }
  bool live = true;
};

using AnyTensor = std::variant<ManagedTensor, LegacyManagedTensor>;

// A mutex-protected hand-over point between the making thread and the destroying ones.
class HandOver {
 public:
  void push(AnyTensor t) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(t));
    }
    ready_.notify_one();
  }
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    ready_.notify_all();
  }
  // False once closed and drained.
  bool pop(AnyTensor& out) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [this] { return closed_ || !queue_.empty(); });
    if (queue_.empty()) return false;
    out = std::move(queue_.front());
    queue_.pop_front();
    return true;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<AnyTensor> queue_;
  bool closed_ = false;
};

TEST(ManagedStress, TensorsMadeOnOneThreadDieOnOthersExactlyOnce) {
  constexpr int kRounds = 3000;
  constexpr int kDestroyers = 3;
  hand_made_deletes = 0;
  owners_destroyed = 0;
  static float wrapped[4] = {};

  HandOver hand_over;
  std::atomic<int> destroyed{0};
  std::vector<std::thread> destroyers;
  for (int i = 0; i < kDestroyers; ++i) {
    destroyers.emplace_back([&] {
      AnyTensor t;
      while (hand_over.pop(t)) {
        // Some die by conversion on the destroying thread, the rest by reset or overwrite.
        if (auto* legacy = std::get_if<LegacyManagedTensor>(&t); legacy && (*legacy).ndim() == 1) {
          t = dlpackpp::to_versioned(std::move(*legacy));
        }
        std::visit([](auto& h) { h.reset(); }, t);
        destroyed.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }

  std::thread maker([&] {
    for (int round = 0; round < kRounds; ++round) {
      hand_over.push(ManagedTensor::adopt(make_hand_made<DLManagedTensorVersioned>()));
      hand_over.push(LegacyManagedTensor::adopt(make_hand_made<DLManagedTensor>()));
      hand_over.push(dlpackpp::to_legacy(
          dlpackpp::to_versioned(LegacyManagedTensor::adopt(make_hand_made<DLManagedTensor>()))));
      hand_over.push(dlpackpp::from_vector(std::vector<float>(8, 1.0f), {2, 4}));
      hand_over.push(dlpackpp::allocate<LegacyManagedTensor>(DataType::int16(), {3, 3}));
      hand_over.push(
          dlpackpp::wrap(wrapped, DataType::float32(), {4}, {}, Device::cpu(), CountingOwner{}));
    }
    hand_over.close();
  });

  maker.join();
  for (std::thread& t : destroyers) t.join();
  EXPECT_EQ(destroyed.load(), 6 * kRounds);
  EXPECT_EQ(hand_made_deletes.load(), 3 * kRounds);
  EXPECT_EQ(owners_destroyed.load(), kRounds);
}

// Cycles per thread and thread count from the environment (the TSan leg asks for more).
int from_env(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  const int value = std::atoi(text);
  return value > 0 ? value : fallback;
}

// What one ring cycle makes, by cycle number.
AnyTensor make_tensor(int cycle, const std::shared_ptr<const float[]>& shared, float* wrapped) {
  switch (cycle % 6) {
    case 0:
      return ManagedTensor::adopt(make_hand_made<DLManagedTensorVersioned>());
    case 1:
      return LegacyManagedTensor::adopt(make_hand_made<DLManagedTensor>());
    case 2:
      return dlpackpp::from_vector(std::vector<float>(8, static_cast<float>(cycle)), {2, 4});
    case 3:
      return dlpackpp::allocate<LegacyManagedTensor>(DataType::int16(), {3, 3});
    case 4:
      return dlpackpp::wrap(wrapped, DataType::float32(), {4}, {}, Device::cpu(), CountingOwner{});
    default:
      return dlpackpp::from_shared_ptr(shared, 4, {4});  // a copy of a shared owner
  }
}

// Reads every element on the receiving thread (they were written on the making one), writes
// where allowed, converts to the other kind and back, and lets the result die here.
float consume(AnyTensor& t, const float* shared_by_all) {
  float sum = 0;
  std::visit(
      [&](auto& h) {
        const dlpackpp::TensorView v = h.view();
        if (v.dtype() != DataType::float32()) return;
        const float* values = v.template data<const float>();
        for (std::int64_t i = 0; i < v.numel(); ++i) sum += values[i];
        // Memory only this tensor holds is written too (the wrapped array is every thread's).
        if (!v.read_only() && values != shared_by_all) v.template data<float>()[0] = sum;
      },
      t);
  if (auto* legacy = std::get_if<LegacyManagedTensor>(&t)) {
    ManagedTensor versioned = dlpackpp::to_versioned(std::move(*legacy));
    LegacyManagedTensor back = dlpackpp::to_legacy(std::move(versioned));  // unwraps
    sum += static_cast<float>(back.numel());
  } else if (auto* versioned = std::get_if<ManagedTensor>(&t)) {
    auto legacy_result = dlpackpp::try_to_legacy(std::move(*versioned));
    if (legacy_result) {
      LegacyManagedTensor legacy_handle = std::move(*legacy_result);
      sum += static_cast<float>(legacy_handle.numel());
    }  // a READ_ONLY export is refused and dies below as it is
  }
  t = AnyTensor();
  return sum;
}

// Threads in a ring: each makes a tensor, hands it to its successor and consumes what its
// predecessor made, so every handle is made on one thread and converted and destroyed on
// another, and every deleter runs on a foreign thread. Shared owners are copied everywhere.
TEST(ManagedStress, RingOfThreadsConvertsAndDestroysOnForeignThreads) {
  const int threads = from_env("DLPACKPP_STRESS_THREADS", 4);
  const int cycles = from_env("DLPACKPP_STRESS_CYCLES", 1500);
  hand_made_deletes = 0;
  owners_destroyed = 0;
  static float wrapped[4] = {1, 2, 3, 4};
  const std::shared_ptr<const float[]> shared(new float[4]{1, 1, 1, 1});

  std::vector<HandOver> inboxes(static_cast<std::size_t>(threads));
  std::atomic<long> consumed{0};
  std::vector<std::thread> ring;
  for (int i = 0; i < threads; ++i) {
    ring.emplace_back([&, i] {
      HandOver& next = inboxes[static_cast<std::size_t>((i + 1) % threads)];
      HandOver& mine = inboxes[static_cast<std::size_t>(i)];
      float sum = 0;
      for (int cycle = 0; cycle < cycles; ++cycle) {
        next.push(make_tensor(cycle + i, shared, wrapped));
        AnyTensor t;
        if (!mine.pop(t)) break;
        sum += consume(t, wrapped);
        consumed.fetch_add(1, std::memory_order_relaxed);
      }
      EXPECT_GT(sum, 0.0f);
    });
  }
  for (std::thread& t : ring) t.join();
  for (HandOver& inbox : inboxes) inbox.close();

  // Expected deaths per kind, from the cycle numbers every thread used.
  long hand_made = 0;
  long owned = 0;
  for (int i = 0; i < threads; ++i) {
    for (int cycle = 0; cycle < cycles; ++cycle) {
      const int kind = (cycle + i) % 6;
      hand_made += kind <= 1 ? 1 : 0;
      owned += kind == 4 ? 1 : 0;
    }
  }
  EXPECT_EQ(consumed.load(), static_cast<long>(threads) * cycles);
  EXPECT_EQ(hand_made_deletes.load(), hand_made);
  EXPECT_EQ(owners_destroyed.load(), owned);
  EXPECT_EQ(shared.use_count(), 1) << "every export's copy of the shared owner was released";
}

}  // namespace
