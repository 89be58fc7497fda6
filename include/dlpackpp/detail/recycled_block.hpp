// SPDX-License-Identifier: Apache-2.0
/// @file
/// RecycledBlock<T>: heap memory for a T with one freed block kept for the next one, for the
/// small structs that a DLPack deleter frees (conversion wrappers, Python exports).
#pragma once

#include "dlpackpp/detail/config.hpp"

#include <cstddef>
#include <new>

// As in shared_array.hpp: GCC's and Clang's atomic builtins, so that the umbrella does not
// parse <atomic> (with it, GCC's compile-cost ratio went from 1.32x to 1.40x, over CI's 1.35x).
#if !(defined(__GNUC__) || defined(__clang__))
#include <atomic>
#endif

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// Memory for one T at a time, with one slot for the block last given back.
///
/// What it buys: where the same kind of block is made and freed in turn (each tensor of a
/// legacy producer wrapped for the versioned handle in an import loop, each export of a
/// Python tensor), the second and later blocks cost one atomic exchange instead of a call
/// into the allocator, and the allocator is not touched from the deleter's thread.
///
/// What it relies on: every block of T has the same size, so any freed block fits the next
/// T; the slot is exchanged atomically (lock-free, one operation each way) because a DLPack
/// deleter may run on any thread, and acquire/release make the block's previous life happen
/// before its next one; the slot is a constant-initialized pointer with no destructor to run,
/// so a deleter that runs during static destruction still finds it. The block left in the
/// slot at exit stays reachable from it and is never freed.
///
/// `KeepOne = false` keeps nothing (plain operator new and delete), for blocks that threads
/// make and free in parallel: there the one slot would be a cache line every thread writes,
/// and the allocator's per-thread caches serve better.
template <class T, bool KeepOne = true>
class RecycledBlock {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "RecycledBlock<T>: T needs more alignment than operator new gives");

 public:
  /// Uninitialized memory for a T: the kept block, else operator new's (which may throw).
  static void* take() {
    void* p = exchange(nullptr);
    return p != nullptr ? p : ::operator new(sizeof(T));
  }
  /// As take(), but NULL instead of throwing when out of memory.
  static void* take(const std::nothrow_t& nothrow) noexcept {
    void* p = exchange(nullptr);
    return p != nullptr ? p : ::operator new(sizeof(T), nothrow);
  }
  /// Memory that held a T, already destroyed: kept for the next take(), and the block it
  /// replaces (if any) freed.
  static void give_back(void* p) noexcept { ::operator delete(exchange(p)); }

 private:
  // Puts `p` in the slot and returns what was there, acquiring the block taken out and
  // releasing the one put in; without a slot, hands `p` straight back.
  static void* exchange(void* p) noexcept {
    if constexpr (!KeepOne) {
      return p;
    } else {
#if defined(__GNUC__) || defined(__clang__)
      static void* slot = nullptr;
      return __atomic_exchange_n(&slot, p, __ATOMIC_ACQ_REL);
#else
      static std::atomic<void*> slot{nullptr};
      return slot.exchange(p, std::memory_order_acq_rel);
#endif
    }
  }
};

}  // namespace detail
DLPACKPP_END_NAMESPACE
