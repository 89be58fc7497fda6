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

  void retain() const noexcept {
    if (header_ == nullptr) return;
#if defined(__GNUC__) || defined(__clang__)
    __atomic_fetch_add(&header_->refs, 1, __ATOMIC_RELAXED);
#else
    header_->refs.fetch_add(1, std::memory_order_relaxed);
#endif
  }
  void release() noexcept {
    if (header_ == nullptr) return;
#if defined(__GNUC__) || defined(__clang__)
    const long before = __atomic_fetch_sub(&header_->refs, 1, __ATOMIC_ACQ_REL);
#else
    const long before = header_->refs.fetch_sub(1, std::memory_order_acq_rel);
#endif
    if (before == 1) {
      header_->~Header();
      ::operator delete(header_);
    }
    header_ = nullptr;
  }

  Header* header_ = nullptr;
};

}  // namespace detail
DLPACKPP_END_NAMESPACE
