// SPDX-License-Identifier: Apache-2.0
/// @file
/// Compiler and build detection shared by every dlpackpp header (always its first include).
/// Every macro here can be predefined by the user; the value given here is only the default.
#pragma once

#include "dlpackpp/version.hpp"
// First, so that every header (and the ABI namespace below) sees one choice of dlpack.h.
#include "dlpackpp/dlpack.hpp"

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
#if DLPACKPP_USE_EXCEPTIONS && \
    !(defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND))
#error "DLPACKPP_USE_EXCEPTIONS=1 but the compiler has exceptions disabled"
#endif
// A try block whose handlers vanish without exceptions (nothing can throw then), so a body is
// written once rather than cut by #if: DLPACKPP_DETAIL_TRY { ... } DLPACKPP_DETAIL_CATCH(T) {
// ... }. A handler may not name the exception: without exceptions it is dead code, compiled.
#if DLPACKPP_USE_EXCEPTIONS
#define DLPACKPP_DETAIL_TRY try
#define DLPACKPP_DETAIL_CATCH(x) catch (x)
#else
#define DLPACKPP_DETAIL_TRY if (true)
#define DLPACKPP_DETAIL_CATCH(x) else if (false)
#endif

// Marks what a CUDA/HIP kernel may call; host-only code stays unannotated.
#ifdef DLPACKPP_HOST_DEVICE
// Use the provided definition.
#elif defined(__CUDACC__) || defined(__HIPCC__)
#define DLPACKPP_HOST_DEVICE __host__ __device__
#else
#define DLPACKPP_HOST_DEVICE
#endif

// Forces inlining, in every build type, of the small functions the per-tensor paths are made
// of (accessor indexing, the view and adoption checks, export, the exchange trampolines, the
// Python import and borrow routes), so that what benchmarks/README.md's instruction guard
// counts does not hang on the compiler's inlining heuristics.
#ifdef DLPACKPP_FORCE_INLINE
// Use the provided definition.
#elif defined(__CUDACC__) || defined(__HIPCC__)
#define DLPACKPP_FORCE_INLINE __forceinline__
#elif defined(__GNUC__) || defined(__clang__)
#define DLPACKPP_FORCE_INLINE inline __attribute__((always_inline))
#else
#define DLPACKPP_FORCE_INLINE inline
#endif

// The same for a lambda (written after its parameter list), for the per-dimension steps of
// the unrolled passes over a tensor's shape.
#ifdef DLPACKPP_LAMBDA_FORCE_INLINE
// Use the provided definition.
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define DLPACKPP_LAMBDA_FORCE_INLINE __attribute__((always_inline))
#else
#define DLPACKPP_LAMBDA_FORCE_INLINE
#endif

// Branch hint for error paths that are never taken by valid input.
#ifdef DLPACKPP_UNLIKELY
// Use the provided definition.
#elif defined(__GNUC__) || defined(__clang__)
#define DLPACKPP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define DLPACKPP_UNLIKELY(x) (x)
#endif
// Branch hint for the path valid input takes.
#ifdef DLPACKPP_LIKELY
// Use the provided definition.
#elif defined(__GNUC__) || defined(__clang__)
#define DLPACKPP_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define DLPACKPP_LIKELY(x) (x)
#endif

// Keeps message building out of the hot paths: error builders are outlined and laid out cold.
#ifdef DLPACKPP_COLD
// Use the provided definition.
#elif defined(__GNUC__) || defined(__clang__)
#define DLPACKPP_COLD __attribute__((cold, noinline))
#else
#define DLPACKPP_COLD
#endif

// Marks what a returned pointer, span or reference borrows from, so that clang warns
// (-Wdangling) when the borrowed object dies first. GCC has no equivalent attribute.
#ifdef DLPACKPP_LIFETIMEBOUND
// Use the provided definition.
#elif defined(__has_cpp_attribute)
#if __has_cpp_attribute(clang::lifetimebound)
#define DLPACKPP_LIFETIMEBOUND [[clang::lifetimebound]]
#else
#define DLPACKPP_LIFETIMEBOUND
#endif
#else
#define DLPACKPP_LIFETIMEBOUND
#endif

// Contract checks (a NULL handle dereferenced, an index out of range in debug code). They
// report file:line and abort; they are not for input validation, which returns Errc codes.
#ifdef DLPACKPP_ASSERT
// Use the provided definition.
#else
#define DLPACKPP_ASSERT(cond, msg)                                                         \
  (DLPACKPP_UNLIKELY(!(cond)) ? ::dlpackpp::detail::assert_fail(__FILE__, __LINE__, (msg)) \
                              : static_cast<void>(0))
#endif

// Bounds checks inside TensorAccessor indexing: off by default because kernels index in
// tight loops; turn on while debugging. Part of the ABI namespace below.
#ifndef DLPACKPP_ACCESSOR_BOUNDS_CHECK
#define DLPACKPP_ACCESSOR_BOUNDS_CHECK 0
#endif
#if DLPACKPP_ACCESSOR_BOUNDS_CHECK != 0 && DLPACKPP_ACCESSOR_BOUNDS_CHECK != 1
#error "DLPACKPP_ACCESSOR_BOUNDS_CHECK must be 0 or 1"
#endif

// Ranks up to this get NULL strides normalized (and raw-parts shapes copied) inside the view
// itself, with no allocation. It sets sizeof(TensorView), so it is part of the ABI namespace
// below and must be a plain decimal literal.
#ifndef DLPACKPP_VIEW_INLINE_NDIM
#define DLPACKPP_VIEW_INLINE_NDIM 8
#endif
#if DLPACKPP_VIEW_INLINE_NDIM < 1 || DLPACKPP_VIEW_INLINE_NDIM > 64
#error "DLPACKPP_VIEW_INLINE_NDIM must be a decimal literal from 1 to 64"
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

// The inline ABI namespace encodes the library version and every knob that changes layout or
// behaviour of inline code: the dlpack.h kind (DefaultManagedTensor), the exceptions mode,
// accessor bounds checks and the view's inline rank. Two translation units built with
// different settings then name different entities and cannot silently break the ODR, e.g.
// `dlpackpp::v0_1_dl1_ex1_bc0_in8::TensorView`.
#define DLPACKPP_DETAIL_CAT2(a, b) a##b
#define DLPACKPP_DETAIL_CAT(a, b) DLPACKPP_DETAIL_CAT2(a, b)
#define DLPACKPP_ABI_NAMESPACE                                                                     \
  DLPACKPP_DETAIL_CAT(                                                                             \
      DLPACKPP_DETAIL_CAT(DLPACKPP_DETAIL_CAT(DLPACKPP_DETAIL_CAT(v, DLPACKPP_VERSION_MAJOR),      \
                                              DLPACKPP_DETAIL_CAT(_, DLPACKPP_VERSION_MINOR)),     \
                          DLPACKPP_DETAIL_CAT(DLPACKPP_DETAIL_CAT(_dl, DLPACKPP_HAS_VERSIONED),    \
                                              DLPACKPP_DETAIL_CAT(_ex, DLPACKPP_USE_EXCEPTIONS))), \
      DLPACKPP_DETAIL_CAT(DLPACKPP_DETAIL_CAT(_bc, DLPACKPP_ACCESSOR_BOUNDS_CHECK),                \
                          DLPACKPP_DETAIL_CAT(_in, DLPACKPP_VIEW_INLINE_NDIM)))
/// Opens dlpackpp's namespace and its inline ABI namespace.
#define DLPACKPP_BEGIN_NAMESPACE \
  namespace dlpackpp {           \
  inline namespace DLPACKPP_ABI_NAMESPACE {
/// Closes what DLPACKPP_BEGIN_NAMESPACE opened.
#define DLPACKPP_END_NAMESPACE \
  }                            \
  }

DLPACKPP_BEGIN_NAMESPACE
namespace detail {
/// Reports a broken contract and aborts. A plain inline function: DLPACKPP_ASSERT marks the
/// failing branch unlikely, and [[noreturn]] lets the compiler lay the call out of the way.
[[noreturn]] inline void assert_fail(const char* file, int line, const char* msg) noexcept {
  std::fprintf(stderr, "%s:%d: dlpackpp contract violated: %s\n", file, line, msg);
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail
DLPACKPP_END_NAMESPACE
