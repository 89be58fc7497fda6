# SPDX-License-Identifier: Apache-2.0
# Regenerates the single header into OUTPUT and fails when it differs from COMMITTED.
get_filename_component(_root "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
execute_process(COMMAND ${CMAKE_COMMAND} -DOUTPUT=${OUTPUT} -P ${_root}/cmake/amalgamate.cmake
                RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "cmake/amalgamate.cmake failed (${_rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUTPUT} ${COMMITTED} RESULT_VARIABLE _diff)
if(NOT _diff EQUAL 0)
  message(FATAL_ERROR "single_include/dlpackpp/dlpackpp.hpp is out of date; "
                      "regenerate with: cmake -P cmake/amalgamate.cmake")
endif()
message(STATUS "single_include/dlpackpp/dlpackpp.hpp is in sync with include/")
