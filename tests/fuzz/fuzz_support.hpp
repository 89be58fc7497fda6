// SPDX-License-Identifier: Apache-2.0
// Shared by the fuzz harnesses: a reader that turns raw bytes into field values (biased toward
// the edge cases that break size arithmetic), a check that aborts with a message (so a failed
// property is a crash under libFuzzer and a failed test under the replay driver), and an
// overflow-checked oracle written independently of the library's own arithmetic.
#pragma once

#include <dlpackpp/dlpackpp.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define FUZZ_CHECK(cond)                                                   \
  do {                                                                     \
    if (!(cond)) ::dlpackpp_fuzz::check_failed(#cond, __FILE__, __LINE__); \
  } while (false)

namespace dlpackpp_fuzz {

[[noreturn]] inline void check_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "fuzz property failed: %s (%s:%d)\n", what, file, line);
  std::abort();
}

/// Consumes the input front to back; once it runs out every read yields zeros, so any input
/// (the empty one included) is a complete test case.
class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : std::uint8_t{0}; }
  bool flag() { return (byte() & 1U) != 0; }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8U) | byte();
    return v;
  }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8U) | byte();
    return v;
  }
  std::uint16_t u16() { return static_cast<std::uint16_t>((byte() << 8U) | byte()); }
  std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }

  /// An int64 that is usually an edge case: 0, +-1, small, powers of two near the limits,
  /// INT64_MIN/MAX; otherwise raw.
  std::int64_t edgy_i64() {
    static constexpr std::int64_t table[] = {0,
                                             1,
                                             2,
                                             3,
                                             4,
                                             5,
                                             7,
                                             8,
                                             16,
                                             -1,
                                             -2,
                                             INT64_MIN,
                                             INT64_MAX,
                                             INT64_MAX - 1,
                                             INT64_MIN + 1,
                                             std::int64_t{1} << 31,
                                             std::int64_t{1} << 32,
                                             (std::int64_t{1} << 32) + 1,
                                             std::int64_t{1} << 61,
                                             std::int64_t{1} << 62,
                                             -(std::int64_t{1} << 62),
                                             std::int64_t{3037000500},
                                             INT32_MAX,
                                             INT32_MIN,
                                             0x7fffffffffffff};
    constexpr std::uint8_t n = sizeof(table) / sizeof(table[0]);
    const std::uint8_t pick = byte();
    if (pick < 128) return static_cast<std::int64_t>(pick % 9);  // small extents and strides
    if (pick < 128 + n) return table[pick - 128];
    if (pick < 240) return -static_cast<std::int64_t>(pick % 5);
    return i64();
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

/// Memory that tensors may point into; reads outside it are the harness's bug, and ASan's
/// redzones around it catch them.
constexpr std::size_t kBufferBytes = 4096;

/// int64 arithmetic that remembers overflow, written with divisions rather than the
/// library's builtins so the two cannot share a mistake (and without __int128, which 32-bit
/// targets lack).
struct Checked {
  std::int64_t v = 0;
  bool bad = false;

  static Checked of(std::int64_t x) { return Checked{x, false}; }
  friend Checked operator*(Checked a, Checked b) {
    if (a.bad || b.bad) return Checked{0, true};
    const std::int64_t x = a.v;
    const std::int64_t y = b.v;
    if (x == 0 || y == 0) return Checked{0, false};
    const bool over = (x > 0) ? (y > 0 ? x > INT64_MAX / y : y < INT64_MIN / x)
                              : (y > 0 ? x < INT64_MIN / y : y < INT64_MAX / x);
    return over ? Checked{0, true} : Checked{x * y, false};
  }
  friend Checked operator+(Checked a, Checked b) {
    if (a.bad || b.bad) return Checked{0, true};
    const bool over = (b.v > 0 && a.v > INT64_MAX - b.v) || (b.v < 0 && a.v < INT64_MIN - b.v);
    return over ? Checked{0, true} : Checked{a.v + b.v, false};
  }
};

/// What a tensor accepted by the library must be, recomputed independently of the
/// library's helpers so that a wrong size or a wrapped offset cannot agree with itself.
struct Oracle {
  bool ok = false;  ///< every count below fits in int64
  std::int64_t numel = 0;
  std::int64_t nbytes = 0;
  std::vector<std::int64_t> strides;  ///< effective strides (compact for NULL)
  std::int64_t low = 0;               ///< offset in elements of the nearest element
  std::int64_t high = 0;              ///< offset in elements of the farthest element
  bool contiguous = true;
  bool fortran = true;
  bool compact = true;
};

/// Bytes holding `count` elements: padded sub-byte lanes take a byte each, packed ones are
/// rounded up as a whole, wider types take whole bytes per element.
inline Checked bytes_for(Checked count, DLDataType dtype, bool padded) {
  const Checked lanes = Checked::of(dtype.lanes);
  if (dtype.bits < 8 && padded) return count * lanes;
  const Checked lane_bits = Checked::of(dtype.bits) * lanes;
  if (dtype.bits < 8) {
    // ceil(count * lane_bits / 8) without the product overflowing first.
    const Checked whole = Checked::of(count.v / 8) * lane_bits;
    const Checked tail = Checked::of(((count.v % 8) * lane_bits.v + 7) / 8);
    return count.bad ? count : whole + tail;
  }
  return count * Checked::of((lane_bits.v + 7) / 8);
}

/// Recomputes the facts of a tensor with `ndim` dims; `ok` is false when a count the library
/// reports (or must bound) does not fit in int64.
inline Oracle recompute(const std::int64_t* shape, const std::int64_t* strides, int ndim,
                        DLDataType dtype, bool padded) {
  Oracle o;
  const auto n = static_cast<std::size_t>(ndim);
  bool empty = false;
  for (std::size_t d = 0; d < n; ++d) {
    if (shape[d] < 0) return o;
    empty = empty || shape[d] == 0;
  }
  Checked count = Checked::of(empty ? 0 : 1);
  for (std::size_t d = 0; d < n && !empty; ++d) count = count * Checked::of(shape[d]);
  const Checked bytes = bytes_for(count, dtype, padded);
  if (count.bad || bytes.bad) return o;
  o.numel = count.v;
  o.nbytes = bytes.v;
  // Compact row-major strides, a zero extent counting as one.
  o.strides.assign(n, 0);
  if (strides != nullptr) {
    std::copy(strides, strides + n, o.strides.begin());
  } else {
    Checked running = Checked::of(1);
    for (std::size_t k = n; k-- > 0;) {
      if (running.bad) return o;
      o.strides[k] = running.v;
      running = running * Checked::of(shape[k] == 0 ? 1 : shape[k]);
    }
  }
  if (count.v > 0) {
    Checked low = Checked::of(0);
    Checked high = Checked::of(0);
    for (std::size_t d = 0; d < n; ++d) {
      const Checked reach = Checked::of(o.strides[d]) * Checked::of(shape[d] - 1);
      if (reach.v > 0) {
        high = high + reach;
      } else {
        low = low + reach;
      }
    }
    if (low.bad || high.bad) return o;
    o.low = low.v;
    o.high = high.v;
    // Layout: row-major, column-major and "dense under some permutation".
    std::int64_t expected = 1;  // cannot overflow: bounded by count
    for (std::size_t k = n; k-- > 0;) {
      if (shape[k] != 1 && o.strides[k] != expected) o.contiguous = false;
      expected *= shape[k];
    }
    expected = 1;
    for (std::size_t k = 0; k < n; ++k) {
      if (shape[k] != 1 && o.strides[k] != expected) o.fortran = false;
      expected *= shape[k];
    }
    std::vector<std::size_t> order;
    for (std::size_t d = 0; d < n; ++d) {
      if (shape[d] != 1) order.push_back(d);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return o.strides[a] < o.strides[b]; });
    expected = 1;
    for (std::size_t d : order) {
      if (o.strides[d] != expected) o.compact = false;
      expected *= shape[d];
    }
  }
  o.ok = true;
  return o;
}

/// Whether bytes [first - below, first + above) lie inside the address space, where
/// below/above are the byte extents of the nearest and farthest elements.
inline bool span_fits_address_space(std::uintptr_t first, const Oracle& o, DLDataType dtype,
                                    bool padded) {
  if (o.numel == 0) return true;
  const Checked nearest = o.low == INT64_MIN ? Checked{0, true} : Checked::of(-o.low);
  const Checked below = bytes_for(nearest, dtype, padded);
  const Checked above = bytes_for(Checked::of(o.high) + Checked::of(1), dtype, padded);
  if (below.bad || above.bad) return false;
  return static_cast<std::uint64_t>(below.v) <= first &&
         static_cast<std::uint64_t>(above.v) <= UINTPTR_MAX - first;
}

/// Calls `f(T*)`-style reads for the C++ type matching `dtype`, when there is one.
template <class F>
bool with_cpp_type(DLDataType dtype, F&& f) {
  const dlpackpp::DataType t(dtype);
  if (t == dlpackpp::dtype_of<float>) return f(static_cast<float*>(nullptr)), true;
  if (t == dlpackpp::dtype_of<double>) return f(static_cast<double*>(nullptr)), true;
  if (t == dlpackpp::dtype_of<std::int8_t>) return f(static_cast<std::int8_t*>(nullptr)), true;
  if (t == dlpackpp::dtype_of<std::int16_t>) return f(static_cast<std::int16_t*>(nullptr)), true;
  if (t == dlpackpp::dtype_of<std::int32_t>) return f(static_cast<std::int32_t*>(nullptr)), true;
  if (t == dlpackpp::dtype_of<std::int64_t>) return f(static_cast<std::int64_t*>(nullptr)), true;
  if (t == dlpackpp::dtype_of<std::uint8_t>) return f(static_cast<std::uint8_t*>(nullptr)), true;
  if (t == dlpackpp::dtype_of<std::uint16_t>) return f(static_cast<std::uint16_t*>(nullptr)), true;
  if (t == dlpackpp::dtype_of<std::uint32_t>) return f(static_cast<std::uint32_t*>(nullptr)), true;
  if (t == dlpackpp::dtype_of<std::uint64_t>) return f(static_cast<std::uint64_t*>(nullptr)), true;
  return false;
}

}  // namespace dlpackpp_fuzz
