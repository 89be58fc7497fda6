# SPDX-License-Identifier: Apache-2.0
# dlpackpp_warnings: warnings are errors in our own targets only (the tests, the examples' test
# builds, the benchmarks); users' builds never see these flags. Included by tests/ and, in a
# tree without tests (the `bench` preset), by benchmarks/.
if(TARGET dlpackpp_warnings)
  return()
endif()
option(DLPACKPP_WARNINGS_AS_ERRORS
  "Warnings are errors in dlpackpp's own targets (OFF: a compiler newer than CI's still builds)" ON)
add_library(dlpackpp_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  # C sources (the benchmark's hand-written C baseline) get the language-neutral subset.
  target_compile_options(dlpackpp_warnings INTERFACE
    -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Wcast-align -Wundef
    $<$<BOOL:${DLPACKPP_WARNINGS_AS_ERRORS}>:-Werror>
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast>)
endif()
