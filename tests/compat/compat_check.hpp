// SPDX-License-Identifier: Apache-2.0
// Shared by the compatibility-matrix sources: a failure counter and the check macros. The
// matrix cannot use GoogleTest because it is rebuilt against every dlpack.h in the matrix
// and must stay a plain program with nothing but dlpackpp and the standard library.
#pragma once

#include <dlpackpp/dlpackpp.hpp>

#include <cstdio>

namespace dlpackpp_compat {

inline int failures = 0;

inline void check(bool ok, const char* what, const char* file, int line) {
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
  }
}

// Each section lives in its own file so later work can add one without touching the others.
void check_device();
void check_dtype();
void check_tensor();
void check_tensor_view();
void check_managed_tensor();

}  // namespace dlpackpp_compat

#define DLPACKPP_COMPAT_CHECK(...) \
  ::dlpackpp_compat::check(static_cast<bool>(__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__)

// A Result (from a try_* function) that must hold an error with this Errc.
#define DLPACKPP_COMPAT_CHECK_ERRC(result, errc)                                         \
  do {                                                                                   \
    const auto& dlpackpp_compat_r = (result);                                            \
    DLPACKPP_COMPAT_CHECK(!dlpackpp_compat_r);                                           \
    if (!dlpackpp_compat_r) {                                                            \
      DLPACKPP_COMPAT_CHECK(dlpackpp_compat_r.error().code() == ::dlpackpp::Errc::errc); \
    }                                                                                    \
  } while (false)
