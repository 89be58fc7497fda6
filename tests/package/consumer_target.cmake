# SPDX-License-Identifier: Apache-2.0
# The part every consumer project shares: its program, built warning-free against
# dlpackpp::dlpackpp and registered as its one test. A dlpackpp that is not top level must not
# have added its own tests or examples to the consumer's build.
if(TARGET dlpackpp_warnings OR TARGET demo)
  message(FATAL_ERROR "dlpackpp built its own tests or examples as a subproject")
endif()

enable_testing()
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE dlpackpp::dlpackpp)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(consumer PRIVATE -Wall -Wextra -Wpedantic -Werror)
endif()
add_test(NAME consumer COMMAND consumer)

# The README's quick start itself, through the same route (it needs DLPack >= 1.0, which the
# bundled header gives even where an older dlpack.h is installed).
if(NOT DLPACKPP_USE_SYSTEM_DLPACK)
  add_executable(quick_start "${CMAKE_CURRENT_LIST_DIR}/../../examples/quick_start.cpp")
  target_link_libraries(quick_start PRIVATE dlpackpp::dlpackpp)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(quick_start PRIVATE -Wall -Wextra -Wpedantic -Werror)
  endif()
  add_test(NAME quick_start COMMAND quick_start)
  set_tests_properties(quick_start PROPERTIES
    PASS_REGULAR_EXPRESSION "float32\\[2, 3\\] strides \\[3, 1\\] cpu")
endif()
