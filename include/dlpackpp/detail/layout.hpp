// SPDX-License-Identifier: Apache-2.0
/// @file
/// The layout rules every part of dlpackpp shares: compact row-major strides, element counts
/// and density, each written once.
#pragma once

#include "dlpackpp/detail/checked.hpp"
#include "dlpackpp/detail/config.hpp"

#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// Advances `running` from the compact stride of one dimension to that of the dimension to
/// its left. A zero extent counts as one, so an empty tensor keeps meaningful strides; false
/// when the stride no longer fits in int64.
constexpr bool grow_compact_stride(std::int64_t& running, std::int64_t extent) noexcept {
  return !mul_overflows(running, extent == 0 ? 1 : extent, running);
}

/// Writes the compact row-major strides of `shape` to `out`. The caller has proven that they
/// fit (validation does); shape[0] never enters a stride, so an empty tensor's unbounded
/// leading extent is never multiplied.
inline void write_compact_strides(const std::int64_t* shape, int ndim, std::int64_t* out) noexcept {
  std::int64_t running = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    out[d] = running;
    if (d > 0) static_cast<void>(grow_compact_stride(running, shape[d]));
  }
}

/// The element count of an accepted shape. Wrapping unsigned arithmetic gives the right
/// answer for every valid tensor (an empty one has a zero factor, which wins whatever wrapped
/// before it) and no undefined behaviour for tensors nobody checked.
constexpr std::int64_t numel_unchecked(const std::int64_t* shape, int ndim) noexcept {
  std::uint64_t numel = 1;
  for (int d = 0; d < ndim; ++d) numel *= static_cast<std::uint64_t>(shape[d]);
  return static_cast<std::int64_t>(numel);
}

/// Element count and row-major density of a tensor nobody checked, in one pass from the
/// innermost dimension out (the row-major stride of a dimension is the count inside it). As
/// numel_unchecked(), wrapping arithmetic keeps untrusted input free of undefined behaviour.
inline void count_and_density(const std::int64_t* shape, const std::int64_t* strides, int ndim,
                              std::int64_t& numel, bool& contiguous) noexcept {
  std::uint64_t count = 1;
  bool dense = true;
  if (strides == nullptr) {
    for (int d = 0; d < ndim; ++d) count *= static_cast<std::uint64_t>(shape[d]);
  } else {
    for (int d = ndim - 1; d >= 0; --d) {
      const auto extent = static_cast<std::uint64_t>(shape[d]);
      if (extent != 1 && static_cast<std::uint64_t>(strides[d]) != count) dense = false;
      count *= extent;
    }
  }
  numel = static_cast<std::int64_t>(count);
  contiguous = dense || count == 0;
}

/// Dense in row-major (or, with `fortran`, column-major) order: each stride is the product of
/// the extents inside it. Size-1 dimensions (any stride) and empty tensors never spoil it.
constexpr bool dense_in_order(const std::int64_t* shape, const std::int64_t* strides, int ndim,
                              bool fortran) noexcept {
  std::uint64_t expected = 1;
  bool dense = true;
  for (int k = 0; k < ndim; ++k) {
    const int d = fortran ? k : ndim - 1 - k;
    if (shape[d] == 0) return true;
    if (shape[d] != 1 && static_cast<std::uint64_t>(strides[d]) != expected) dense = false;
    expected *= static_cast<std::uint64_t>(shape[d]);
  }
  return dense;
}

}  // namespace detail
DLPACKPP_END_NAMESPACE
