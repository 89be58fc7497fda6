# SPDX-License-Identifier: Apache-2.0
# dlpackpp_find_python(): find_package(Python3 COMPONENTS Interpreter Development.Module) for the
# Python tests, example and benchmark, all with the same interpreter: Python3_EXECUTABLE when
# given (.ci/python-venv.sh passes its venv's), else the system's /usr/bin/python3 where it
# exists (Debian's python3-numpy and python3-torch live there, not in a python3 that a version
# manager puts earlier on PATH), else FindPython's choice. A macro: the results are the caller's.
macro(dlpackpp_find_python)
  if(NOT Python3_EXECUTABLE)
    find_program(DLPACKPP_SYSTEM_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH
      DOC "The system Python 3 the Python tests, example and benchmark prefer")
    if(DLPACKPP_SYSTEM_PYTHON)
      set(Python3_EXECUTABLE "${DLPACKPP_SYSTEM_PYTHON}" CACHE FILEPATH "Python 3 for dlpackpp's Python parts")
    endif()
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module)
endmacro()
