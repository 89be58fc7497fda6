# SPDX-License-Identifier: Apache-2.0
# Compiles CALLER with CALLER_FLAGS and CALLEE with the defaults, then links them; passes only
# when the link fails on an undefined reference (cmake -P, with -DCXX -DINCLUDE_DIR -DWORK_DIR).
separate_arguments(_caller_flags UNIX_COMMAND "${CALLER_FLAGS}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(ENV{LC_ALL} C)
foreach(_part caller callee)
  string(TOUPPER "${_part}" _var)
  set(_flags -std=c++17 "-I${INCLUDE_DIR}")
  if(_part STREQUAL "caller")
    list(APPEND _flags ${_caller_flags})
  endif()
  execute_process(COMMAND "${CXX}" ${_flags} -c "${${_var}}" -o "${WORK_DIR}/${_part}.o"
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "compiling ${${_var}} failed:\n${_out}")
  endif()
endforeach()
execute_process(COMMAND "${CXX}" "${WORK_DIR}/caller.o" "${WORK_DIR}/callee.o" -o "${WORK_DIR}/linked"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0)
  message(FATAL_ERROR "the two translation units linked although their knobs differ")
endif()
if(NOT _out MATCHES "undefined reference|Undefined symbols|unresolved external")
  message(FATAL_ERROR "the link failed, but not on an undefined reference:\n${_out}")
endif()
message(STATUS "mismatched knobs fail to link, as they should")
