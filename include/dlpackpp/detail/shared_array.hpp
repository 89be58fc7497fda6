// SPDX-License-Identifier: Apache-2.0
/// @file
/// SharedArray<T>: a reference-counted array of trivial T in a single allocation, for Error
/// messages and the rare large view. Cheaper to compile than std::shared_ptr, and copying it
/// never allocates or throws.
#pragma once

#include "dlpackpp/detail/config.hpp"

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#if !(defined(__GNUC__) || defined(__clang__))
#include <atomic>
#endif

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

template <class T>
class SharedArray {
  static_assert(std::is_trivially_copyable<T>::value && std::is_trivially_destructible<T>::value,
                "SharedArray holds plain data only");

 public:
  /// Empty: data() is NULL.
  SharedArray() noexcept = default;
  /// `size` value-initialized elements (throws std::bad_alloc).
  explicit SharedArray(std::size_t size)
      : header_(static_cast<Header*>(::operator new(sizeof(Header) + size * sizeof(T)))) {
    ::new (static_cast<void*>(header_)) Header{};
    T* elements = data();
    for (std::size_t i = 0; i < size; ++i) ::new (static_cast<void*>(elements + i)) T();
  }
  SharedArray(const SharedArray& other) noexcept : header_(other.header_) { retain(); }
  SharedArray(SharedArray&& other) noexcept : header_(other.header_) { other.header_ = nullptr; }
  SharedArray& operator=(SharedArray other) noexcept {
    Header* const mine = header_;  // not std::swap: its constraints cost every TU
    header_ = other.header_;
    other.header_ = mine;
    return *this;
  }
  ~SharedArray() { release(); }

  /// The elements (NULL when empty); shared by every copy.
  T* data() const noexcept {
    return header_ == nullptr
               ? nullptr
               : reinterpret_cast<T*>(reinterpret_cast<char*>(header_) + sizeof(Header));
  }
  /// True when it holds an array.
  explicit operator bool() const noexcept { return header_ != nullptr; }

 private:
  struct alignas(alignof(T) > alignof(long) ? alignof(T) : alignof(long)) Header {
#if defined(__GNUC__) || defined(__clang__)
    long refs = 1;
#else
    std::atomic<long> refs{1};
#endif
  };

  // The count is touched out of line (rare: errors and views above the inline rank), taking
  // only the block: the object holding it never escapes, so a compiler can still forward and
  // drop stores to a copy that dies unused (a checked view tested and discarded).
  void retain() const noexcept {
    if (header_ != nullptr) add_ref(header_);
  }
  void release() noexcept {
    if (header_ != nullptr) drop_ref(header_);
    header_ = nullptr;
  }
  DLPACKPP_COLD static void add_ref(Header* header) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __atomic_fetch_add(&header->refs, 1, __ATOMIC_RELAXED);
#else
    header->refs.fetch_add(1, std::memory_order_relaxed);
#endif
  }
  DLPACKPP_COLD static void drop_ref(Header* header) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    const long before = __atomic_fetch_sub(&header->refs, 1, __ATOMIC_ACQ_REL);
#else
    const long before = header->refs.fetch_sub(1, std::memory_order_acq_rel);
#endif
    if (before == 1) {
      header->~Header();
      ::operator delete(header);
    }
  }

  Header* header_ = nullptr;
};

}  // namespace detail
DLPACKPP_END_NAMESPACE
