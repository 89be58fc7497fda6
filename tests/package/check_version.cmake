# SPDX-License-Identifier: Apache-2.0
# Installs dlpackpp and checks that its package version file (SameMajorVersion) answers
# find_package(dlpackpp <version> CONFIG REQUIRED) correctly (cmake -P).
#
#   cmake -DCONSUMER_SOURCE_DIR=<tests/package/find_package> -DVERSION=<major.minor.patch>
#         -DDLPACKPP_BUILD_DIR=<build tree> [common inputs, see consumer_common.cmake]
#         -P check_version.cmake
cmake_minimum_required(VERSION 3.16)
include("${CMAKE_CURRENT_LIST_DIR}/consumer_common.cmake")

if(NOT CONSUMER_SOURCE_DIR OR NOT VERSION MATCHES "^([0-9]+)\\.([0-9]+)")
  message(FATAL_ERROR "-DCONSUMER_SOURCE_DIR=... and -DVERSION=<major.minor...> are required")
endif()
set(_major "${CMAKE_MATCH_1}")
set(_minor "${CMAKE_MATCH_2}")
math(EXPR _next_minor "${_minor} + 1")
math(EXPR _next_major "${_major} + 1")

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_prefix "${WORK_DIR}/prefix")
dlpackpp_install_into("${_prefix}")

# <requested version> <expected: accept|reject>
set(_cases
  "${_major}.${_minor}" accept       # this release
  "${_major}.${_next_minor}" reject  # a newer minor than installed
  "${_next_major}" reject            # another major
  "99" reject)                       # far off
if(_major EQUAL 0)
  # At 0.x a minor release may break the API (SameMinorVersion): only this minor matches.
  list(APPEND _cases "${_major}.${_minor}.0" accept)
  if(_minor GREATER 0)
    math(EXPR _previous_minor "${_minor} - 1")
    list(APPEND _cases "${_major}.${_previous_minor}" reject)
  endif()
else()
  list(APPEND _cases "${_major}" accept)  # any release of this major
endif()
set(_failures 0)
set(_n 0)
while(_cases)
  list(POP_FRONT _cases _requested _expected)
  math(EXPR _n "${_n} + 1")
  dlpackpp_configure("${CONSUMER_SOURCE_DIR}" "${WORK_DIR}/build-${_n}" _rc _out
    "-DCMAKE_PREFIX_PATH=${_prefix}" "-DDLPACKPP_EXPECTED_PREFIX=${_prefix}"
    "-DDLPACKPP_REQUIRED_VERSION=${_requested}")
  if(_expected STREQUAL "accept" AND _rc EQUAL 0)
    message(STATUS "ok: find_package(dlpackpp ${_requested}) accepts ${VERSION}")
  elseif(_expected STREQUAL "reject" AND NOT _rc EQUAL 0
         AND _out MATCHES "dlpackppConfigVersion\\.cmake|version")
    message(STATUS "ok: find_package(dlpackpp ${_requested}) rejects ${VERSION}")
  else()
    message("${_out}")
    message(SEND_ERROR "find_package(dlpackpp ${_requested}) should ${_expected} ${VERSION} (exit code ${_rc})")
    math(EXPR _failures "${_failures} + 1")
  endif()
endwhile()
if(_failures)
  message(FATAL_ERROR "${_failures} version check(s) failed")
endif()
