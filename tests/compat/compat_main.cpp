// SPDX-License-Identifier: Apache-2.0
// The compatibility matrix's program: built once per dlpack.h in DLPACKPP_COMPAT_DLPACK_DIRS
// (tests/compat/CMakeLists.txt), it reports which header it saw and exercises the public API
// against that header's own types. Exit status 0 means every check passed.
#include "compat_check.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <type_traits>

// CMake reads the version out of the header it points this build at; a mismatch means
// another dlpack.h (the bundled one, or the system's) won the include search.
#if defined(DLPACKPP_COMPAT_EXPECT_MAJOR) && defined(DLPACKPP_COMPAT_EXPECT_MINOR)
static_assert(DLPACKPP_DLPACK_MAJOR == DLPACKPP_COMPAT_EXPECT_MAJOR &&
                  DLPACKPP_DLPACK_MINOR == DLPACKPP_COMPAT_EXPECT_MINOR,
              "the dlpack.h in force is not the one this matrix entry was configured for");
#endif
#if defined(DLPACKPP_COMPAT_EXPECT_BUNDLED)
static_assert(DLPACKPP_DLPACK_IS_BUNDLED == DLPACKPP_COMPAT_EXPECT_BUNDLED,
              "bundled dlpack.h in force when it should not be, or the other way round");
#endif

int main() {
  using Shape = decltype(DLTensor::shape);
  std::printf(
      "dlpack.h %d.%d%s: DLPACKPP_HAS_VERSIONED=%d DLPACKPP_HAS_EXCHANGE_API=%d, "
      "shape is %sint64_t*, C++ %ld\n",
      static_cast<int>(DLPACKPP_DLPACK_MAJOR), static_cast<int>(DLPACKPP_DLPACK_MINOR),
      DLPACKPP_DLPACK_IS_BUNDLED ? " (bundled)" : "", DLPACKPP_HAS_VERSIONED,
      DLPACKPP_HAS_EXCHANGE_API, std::is_const<std::remove_pointer_t<Shape>>::value ? "const " : "",
      static_cast<long>(__cplusplus));

  // Optional sections compile in as their headers appear; say which ones ran.
  std::printf("sections: device dtype tensor%s%s%s%s\n",
#if __has_include(<dlpackpp/validate.hpp>)
              " validate",
#else
              "",
#endif
#if __has_include(<dlpackpp/tensor_view.hpp>)
              " tensor_view",
#else
              "",
#endif
#if __has_include(<dlpackpp/managed_tensor.hpp>)
              " legacy_managed_tensor",
#else
              "",
#endif
#if __has_include(<dlpackpp/managed_tensor.hpp>) && DLPACKPP_HAS_VERSIONED
              " managed_tensor");
#else
              "");
#endif

  // A throwing entry point that throws is a failed check, not a crash.
  void (*const sections[])() = {
      dlpackpp_compat::check_device,         dlpackpp_compat::check_dtype,
      dlpackpp_compat::check_tensor,         dlpackpp_compat::check_tensor_view,
      dlpackpp_compat::check_managed_tensor,
  };
  for (auto section : sections) {
    try {
      section();
    } catch (const std::exception& e) {
      ++dlpackpp_compat::failures;
      std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    }
  }

  if (dlpackpp_compat::failures != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", dlpackpp_compat::failures);
    return EXIT_FAILURE;
  }
  std::printf("all checks passed\n");
  return EXIT_SUCCESS;
}
