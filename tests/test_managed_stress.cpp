// SPDX-License-Identifier: Apache-2.0
// Tensors made on one thread and destroyed on others: every deleter and owner runs exactly once.
#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
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

// A C-style producer: the deleter counts and frees the whole block.
template <class M>
struct HandMade {
  M managed{};
  std::int64_t shape[1] = {4};
  float values[4] = {1, 2, 3, 4};

  static M* make() {
    auto* h = new HandMade{};
    M& m = h->managed;
    m.dl_tensor.data = h->values;
    m.dl_tensor.device = Device::cpu();
    m.dl_tensor.ndim = 1;
    m.dl_tensor.dtype = DataType::float32();
    m.dl_tensor.shape = h->shape;
    m.manager_ctx = h;
    m.deleter = [](M* self) {
      hand_made_deletes.fetch_add(1, std::memory_order_relaxed);
      delete static_cast<HandMade*>(self->manager_ctx);
    };
    if constexpr (std::is_same<M, DLManagedTensorVersioned>::value) {
      m.version.major = DLPACK_MAJOR_VERSION;
      m.version.minor = DLPACK_MINOR_VERSION;
    }
    return &m;
  }
};

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
      hand_over.push(ManagedTensor::adopt(HandMade<DLManagedTensorVersioned>::make()));
      hand_over.push(LegacyManagedTensor::adopt(HandMade<DLManagedTensor>::make()));
      hand_over.push(dlpackpp::to_legacy(
          dlpackpp::to_versioned(LegacyManagedTensor::adopt(HandMade<DLManagedTensor>::make()))));
      hand_over.push(dlpackpp::from_vector(std::vector<float>(8, 1.0f), {2, 4}));
      hand_over.push(dlpackpp::allocate<LegacyManagedTensor>(DataType::int16(), {3, 3}));
      hand_over.push(dlpackpp::wrap(wrapped, DataType::float32(), {4}, {}, Device::cpu(),
                                    CountingOwner{}));
    }
    hand_over.close();
  });

  maker.join();
  for (std::thread& t : destroyers) t.join();
  EXPECT_EQ(destroyed.load(), 6 * kRounds);
  EXPECT_EQ(hand_made_deletes.load(), 3 * kRounds);
  EXPECT_EQ(owners_destroyed.load(), kRounds);
}

}  // namespace
