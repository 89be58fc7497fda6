# SPDX-License-Identifier: Apache-2.0
# Regenerates the single-header folder next to OUTPUT and fails when any file differs from the
# committed single_include/dlpackpp/ (COMMITTED names its dlpackpp.hpp), or either has a file
# the other lacks.
get_filename_component(_root "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
get_filename_component(_fresh_dir "${OUTPUT}" DIRECTORY)
get_filename_component(_committed_dir "${COMMITTED}" DIRECTORY)
file(REMOVE_RECURSE "${_fresh_dir}")
execute_process(COMMAND ${CMAKE_COMMAND} -DOUTPUT=${OUTPUT} -P ${_root}/cmake/amalgamate.cmake
                RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "cmake/amalgamate.cmake failed (${_rc})")
endif()
file(GLOB _fresh RELATIVE "${_fresh_dir}" "${_fresh_dir}/*")
file(GLOB _committed RELATIVE "${_committed_dir}" "${_committed_dir}/*")
if(NOT _fresh STREQUAL _committed)
  message(FATAL_ERROR "single_include/dlpackpp/ holds [${_committed}] but include/ makes [${_fresh}]; "
                      "regenerate with: cmake -P cmake/amalgamate.cmake")
endif()
foreach(_file IN LISTS _fresh)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${_fresh_dir}/${_file}"
                          "${_committed_dir}/${_file}" RESULT_VARIABLE _diff)
  if(NOT _diff EQUAL 0)
    message(FATAL_ERROR "single_include/dlpackpp/${_file} is out of date; "
                        "regenerate with: cmake -P cmake/amalgamate.cmake")
  endif()
endforeach()
message(STATUS "single_include/dlpackpp/ is in sync with include/: ${_fresh}")
