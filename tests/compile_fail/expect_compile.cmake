# SPDX-License-Identifier: Apache-2.0
# Compiles one case with -fsyntax-only and checks the outcome the case's first line announces:
#   // expect-error: <regex>   must fail to compile, with a diagnostic matching <regex>
#   // expect-ok               must compile (proves the harness itself can pass)
#
#   cmake -DCXX=<compiler> -DINCLUDE_DIR=<project>/include -DSOURCE=<case.cpp>
#         [-DFLAGS="<space-separated flags>"] [-DEXPECT_REGEX=<regex>] -P expect_compile.cmake
#
# EXPECT_REGEX overrides the file's expectation with "must fail matching <regex>"; the harness
# self-tests use it to show that a wrong expectation is reported as a failure.

foreach(_required CXX INCLUDE_DIR SOURCE)
  if(NOT DEFINED ${_required} OR "${${_required}}" STREQUAL "")
    message(FATAL_ERROR "expect_compile.cmake: -D${_required}=... is required")
  endif()
endforeach()

# file(READ) rather than file(STRINGS): a regex may contain ';', which a list would split.
file(READ "${SOURCE}" _head LIMIT 1024)
string(REGEX MATCH "^[^\r\n]*" _first_line "${_head}")
if(DEFINED EXPECT_REGEX)
  set(_expect_error TRUE)
  set(_regex "${EXPECT_REGEX}")
elseif(_first_line MATCHES "^// expect-error: (.+)$")
  set(_expect_error TRUE)
  set(_regex "${CMAKE_MATCH_1}")
elseif(_first_line STREQUAL "// expect-ok")
  set(_expect_error FALSE)
else()
  message(FATAL_ERROR "${SOURCE}: the first line must be '// expect-error: <regex>' or "
                      "'// expect-ok', not '${_first_line}'")
endif()

# An optional second line `// flags: ...` adds compiler flags for this case (e.g. -Werror).
string(REGEX MATCH "^[^\r\n]*[\r\n]+([^\r\n]*)" _unused "${_head}")
set(_case_flags "")
if(CMAKE_MATCH_1 MATCHES "^// flags: (.+)$")
  set(_case_flags "${CMAKE_MATCH_1}")
endif()
separate_arguments(_flags UNIX_COMMAND "${FLAGS} ${_case_flags}")
# ASCII quotes in diagnostics, whatever the user's locale, so regexes can spell them as '.
set(ENV{LC_ALL} C)
execute_process(
  COMMAND "${CXX}" ${_flags} -fsyntax-only "-I${INCLUDE_DIR}" "${SOURCE}"
  RESULT_VARIABLE _rc
  OUTPUT_VARIABLE _output
  ERROR_VARIABLE _output)

if(NOT _expect_error)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${SOURCE} should compile but did not (exit ${_rc}):\n${_output}")
  endif()
  message(STATUS "${SOURCE} compiles, as expected")
elseif(_rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it should fail with /${_regex}/")
elseif(NOT _output MATCHES "${_regex}")
  message(FATAL_ERROR "${SOURCE} failed to compile as expected, but no diagnostic matches "
                      "/${_regex}/:\n${_output}")
else()
  message(STATUS "${SOURCE} fails to compile with /${_regex}/, as expected")
endif()
