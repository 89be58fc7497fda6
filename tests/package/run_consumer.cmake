# SPDX-License-Identifier: Apache-2.0
# Configures, builds and runs one consumer project from tests/package (cmake -P).
#
#   cmake -DMODE=find_package|add_subdirectory|fetchcontent|system_dlpack
#         -DCONSUMER_SOURCE_DIR=<tests/package/<name>> [common inputs, see consumer_common.cmake]
#         [-DDLPACKPP_BUILD_DIR=<build tree> -DCONFIG=<cfg>]  (find_package: installs it first)
#         [-DCONSUMER_ARGS=<;-list of extra -D options for the consumer's configure>]
#         -P run_consumer.cmake
#
# Prints "DLPACKPP_TEST_SKIPPED: ..." and succeeds when the consumer says its prerequisite is
# missing; the CTest test maps that marker to "skipped".
cmake_minimum_required(VERSION 3.16)
include("${CMAKE_CURRENT_LIST_DIR}/consumer_common.cmake")

if(NOT CONSUMER_SOURCE_DIR OR NOT MODE)
  message(FATAL_ERROR "-DMODE=... and -DCONSUMER_SOURCE_DIR=... are required")
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(_extra ${CONSUMER_ARGS})
if(MODE STREQUAL "find_package")
  set(_prefix "${WORK_DIR}/prefix")
  dlpackpp_install_into("${_prefix}")
  list(APPEND _extra "-DCMAKE_PREFIX_PATH=${_prefix}" "-DDLPACKPP_EXPECTED_PREFIX=${_prefix}")
endif()

dlpackpp_configure("${CONSUMER_SOURCE_DIR}" "${WORK_DIR}/build" _rc _out ${_extra})
message("${_out}")
if(_out MATCHES "DLPACKPP_TEST_SKIPPED: [^\n]*")
  message("${CMAKE_MATCH_0}")
  return()
endif()
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "configuring the ${MODE} consumer failed")
endif()

dlpackpp_run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build" --config "${BUILD_TYPE}")
set(DLPACKPP_RUN_DIR "${WORK_DIR}/build")
set(_no_tests "")
if(NOT CMAKE_VERSION VERSION_LESS 3.17)
  set(_no_tests --no-tests=error)  # a consumer that registered nothing must not pass
endif()
dlpackpp_run("${CMAKE_CTEST_COMMAND}" -C "${BUILD_TYPE}" --output-on-failure ${_no_tests} -V)
