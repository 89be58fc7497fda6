# SPDX-License-Identifier: Apache-2.0
# Helpers shared by run_consumer.cmake and check_version.cmake (both run with cmake -P).
#
# Inputs (-D) both scripts take:
#   DLPACKPP_SOURCE_DIR  the dlpackpp source tree
#   WORK_DIR             a scratch folder of this test's own; wiped first
#   GENERATOR            CMake generator of the outer build, reused for the consumer
#   MAKE_PROGRAM         (optional) make/ninja program of the outer build
#   CXX_COMPILER         C++ compiler of the outer build
#   BUILD_TYPE           (optional) configuration to build the consumer in

foreach(_required DLPACKPP_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${_required} OR "${${_required}}" STREQUAL "")
    message(FATAL_ERROR "${CMAKE_CURRENT_LIST_FILE}: -D${_required}=... is required")
  endif()
endforeach()
if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()

# Runs a command, echoing it and its output; FATAL_ERROR unless it exits 0. Runs in
# DLPACKPP_RUN_DIR when that is set.
function(dlpackpp_run)
  string(REPLACE ";" " " _shown "${ARGN}")
  message(STATUS "running: ${_shown}")
  set(_dir "${CMAKE_CURRENT_BINARY_DIR}")
  if(DLPACKPP_RUN_DIR)
    set(_dir "${DLPACKPP_RUN_DIR}")
  endif()
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${_dir}"
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  message("${_out}")
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "failed (${_rc}): ${_shown}")
  endif()
endfunction()

# Installs the outer build (DLPACKPP_BUILD_DIR) into <prefix>. This is the build under test,
# never an older install, so nothing else needs to have been installed first.
function(dlpackpp_install_into prefix)
  if(NOT DLPACKPP_BUILD_DIR)
    message(FATAL_ERROR "-DDLPACKPP_BUILD_DIR=<the dlpackpp build tree> is required to install")
  endif()
  set(_config "")
  if(CONFIG)
    set(_config --config "${CONFIG}")
  endif()
  dlpackpp_run("${CMAKE_COMMAND}" --install "${DLPACKPP_BUILD_DIR}" --prefix "${prefix}" ${_config})
  # The single-header install (DLPACKPP_SINGLE_HEADER) carries the bundled dlpack.h inlined.
  set(_expected include/dlpackpp/dlpackpp.hpp)
  set(_single "")
  if(EXISTS "${prefix}/include/dlpackpp/dlpackpp.hpp")
    file(STRINGS "${prefix}/include/dlpackpp/dlpackpp.hpp" _single REGEX "DLPACKPP_SINGLE_HEADER_HPP_")
  endif()
  if(NOT _single)
    list(APPEND _expected include/dlpackpp/bundled/dlpack.h)
  endif()
  foreach(_file IN LISTS _expected)
    if(NOT EXISTS "${prefix}/${_file}")
      message(FATAL_ERROR "the install has no ${_file}")
    endif()
  endforeach()
  file(GLOB _configs "${prefix}/*/cmake/dlpackpp/dlpackppConfig.cmake"
                     "${prefix}/*/*/cmake/dlpackpp/dlpackppConfig.cmake")
  if(NOT _configs)
    message(FATAL_ERROR "the install has no dlpackppConfig.cmake")
  endif()
endfunction()

# Configures <source> into <binary> with the outer build's toolchain; extra arguments are
# passed on. Sets <result_var> to the exit code and <output_var> to the output.
function(dlpackpp_configure source binary result_var output_var)
  set(_args -S "${source}" -B "${binary}" -G "${GENERATOR}"
            "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
            "-DDLPACKPP_SOURCE_DIR=${DLPACKPP_SOURCE_DIR}"
            # Only what this test sets up may be found: no user or system package registry.
            -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
  if(MAKE_PROGRAM)
    list(APPEND _args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
  endif()
  list(APPEND _args ${ARGN})
  string(REPLACE ";" " " _shown "${_args}")
  message(STATUS "running: ${CMAKE_COMMAND} ${_shown}")
  execute_process(COMMAND "${CMAKE_COMMAND}" ${_args}
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  set(${result_var} "${_rc}" PARENT_SCOPE)
  set(${output_var} "${_out}" PARENT_SCOPE)
endfunction()
