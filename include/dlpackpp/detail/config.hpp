// SPDX-License-Identifier: Apache-2.0
/// @file
/// Compiler and build detection shared by every dlpackpp header (always its first include).
/// Every macro here can be predefined by the user; the value given here is only the default.
#pragma once

#include "dlpackpp/version.hpp"

#include <cstdio>
#include <cstdlib>

// Exceptions: on unless the compiler says they are off (-fno-exceptions, /EHs-c-).
#ifdef DLPACKPP_USE_EXCEPTIONS
// Use the provided definition.
#elif defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define DLPACKPP_USE_EXCEPTIONS 1
#else
#define DLPACKPP_USE_EXCEPTIONS 0
#endif
#if DLPACKPP_USE_EXCEPTIONS && !(defined(__cpp_exceptions) || defined(__EXCEPTIONS) || \
                                 defined(_CPPUNWIND))
#error "DLPACKPP_USE_EXCEPTIONS=1 but the compiler has exceptions disabled"
#endif

// Marks what a CUDA/HIP kernel may call; host-only code stays unannotated.
#ifdef DLPACKPP_HOST_DEVICE
// Use the provided definition.
#elif defined(__CUDACC__) || defined(__HIPCC__)
#define DLPACKPP_HOST_DEVICE __host__ __device__
#else
#define DLPACKPP_HOST_DEVICE
#endif

// Inlining hint for the accessor hot path.
#ifdef DLPACKPP_FORCE_INLINE
// Use the provided definition.
#elif defined(__CUDACC__) || defined(__HIPCC__)
#define DLPACKPP_FORCE_INLINE __forceinline__
#elif defined(__GNUC__) || defined(__clang__)
#define DLPACKPP_FORCE_INLINE inline __attribute__((always_inline))
#else
#define DLPACKPP_FORCE_INLINE inline
#endif

// Branch hint for error paths that are never taken by valid input.
#if defined(__GNUC__) || defined(__clang__)
#define DLPACKPP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define DLPACKPP_UNLIKELY(x) (x)
#endif

// Contract checks (a NULL handle dereferenced, an index out of range in debug code). They
// report file:line and abort; they are not for input validation, which returns Errc codes.
#ifdef DLPACKPP_ASSERT
// Use the provided definition.
#else
#define DLPACKPP_ASSERT(cond, msg) \
  (DLPACKPP_UNLIKELY(!(cond)) ? ::dlpackpp::detail::assert_fail(__FILE__, __LINE__, (msg)) \
                              : static_cast<void>(0))
#endif

// Bounds checks inside TensorAccessor indexing: off by default because kernels index in
// tight loops; turn on while debugging.
#ifndef DLPACKPP_ACCESSOR_BOUNDS_CHECK
#define DLPACKPP_ACCESSOR_BOUNDS_CHECK 0
#endif

// Half-precision builtins, used for dtype_of<> when the compiler has them in C++ mode.
#ifndef DLPACKPP_HAS_FLOAT16
#if defined(__FLT16_MAX__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define DLPACKPP_HAS_FLOAT16 1
#else
#define DLPACKPP_HAS_FLOAT16 0
#endif
#endif
#ifndef DLPACKPP_HAS_BF16
#if defined(__BFLT16_MAX__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define DLPACKPP_HAS_BF16 1
#else
#define DLPACKPP_HAS_BF16 0
#endif
#endif

namespace dlpackpp {
inline namespace v0 {
namespace detail {
/// Reports a broken contract and aborts; out of line so the check costs one branch.
[[noreturn]] inline void assert_fail(const char* file, int line, const char* msg) noexcept {
  std::fprintf(stderr, "%s:%d: dlpackpp contract violated: %s\n", file, line, msg);
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail
}  // namespace v0
}  // namespace dlpackpp
