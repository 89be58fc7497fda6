# SPDX-License-Identifier: Apache-2.0
# dlpackpp_python_test_env(<out>): the environment a Python test runs its extension in. A
# sanitized extension loaded into an unsanitized python needs the ASan runtime preloaded, and
# the C++ runtime too: python is not linked with it, and ASan must find the real __cxa_throw
# when it starts, or the first C++ throw aborts. Shared by tests/python and tests/bindings.
function(dlpackpp_python_test_env out)
  set(_env "ASAN_OPTIONS=detect_leaks=0" "PYTHONDONTWRITEBYTECODE=1")
  if(DLPACKPP_SANITIZE)
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      set(_asan_name "libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so")
    else()
      set(_asan_name "libasan.so")
    endif()
    execute_process(COMMAND "${CMAKE_CXX_COMPILER}" "-print-file-name=${_asan_name}"
      OUTPUT_VARIABLE _asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
    execute_process(COMMAND "${CMAKE_CXX_COMPILER}" "-print-file-name=libstdc++.so"
      OUTPUT_VARIABLE _cxx_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT EXISTS "${_asan_runtime}" OR NOT EXISTS "${_cxx_runtime}")
      message(FATAL_ERROR "DLPACKPP_SANITIZE: cannot find ${_asan_name} and libstdc++.so for the Python tests")
    endif()
    get_filename_component(_cxx_runtime "${_cxx_runtime}" REALPATH)
    list(APPEND _env "LD_PRELOAD=${_asan_runtime}:${_cxx_runtime}")
  endif()
  set(${out} "${_env}" PARENT_SCOPE)
endfunction()
