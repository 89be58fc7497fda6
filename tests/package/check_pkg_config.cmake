# SPDX-License-Identifier: Apache-2.0
# Installs this build, then compiles and runs the README quick start with nothing but the
# compiler and `pkg-config --cflags dlpackpp` (cmake -P; see tests/package/CMakeLists.txt).
cmake_minimum_required(VERSION 3.16)
include("${CMAKE_CURRENT_LIST_DIR}/consumer_common.cmake")

find_program(_pkg_config NAMES pkg-config pkgconf)
if(NOT _pkg_config)
  message("DLPACKPP_TEST_SKIPPED: pkg-config not found (apt-get install pkgconf)")
  return()
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_prefix "${WORK_DIR}/prefix")
dlpackpp_install_into("${_prefix}")
file(GLOB_RECURSE _pc "${_prefix}/*/dlpackpp.pc")
if(NOT _pc)
  message(FATAL_ERROR "the install has no dlpackpp.pc")
endif()
get_filename_component(_pc_dir "${_pc}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${_pc_dir}")
execute_process(COMMAND "${_pkg_config}" --cflags dlpackpp
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _cflags OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _rc EQUAL 0 OR NOT _cflags MATCHES "-I")
  message(FATAL_ERROR "pkg-config --cflags dlpackpp failed (${_rc}): '${_cflags}'")
endif()
separate_arguments(_cflags UNIX_COMMAND "${_cflags}")
dlpackpp_run("${CXX_COMPILER}" -std=c++17 -Wall -Wextra -Werror ${_cflags}
             "${DLPACKPP_SOURCE_DIR}/examples/quick_start.cpp" -o "${WORK_DIR}/quick_start")
execute_process(COMMAND "${WORK_DIR}/quick_start" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out)
if(NOT _rc EQUAL 0 OR NOT _out MATCHES "float32\\[2, 3\\] strides \\[3, 1\\] cpu")
  message(FATAL_ERROR "the quick start built with pkg-config flags failed (${_rc}): ${_out}")
endif()
message(STATUS "pkg-config ${_cflags} builds and runs the quick start")
