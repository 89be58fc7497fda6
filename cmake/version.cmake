# SPDX-License-Identifier: Apache-2.0
# The version's one home is include/dlpackpp/version.hpp; this reads it for CMakeLists.txt and
# amalgamate.cmake alike: dlpackpp_read_version(<header> <out-var>) sets <out-var> to "M.m.p".
function(dlpackpp_read_version header out_var)
  file(STRINGS "${header}" _lines REGEX "^#define DLPACKPP_VERSION_(MAJOR|MINOR|PATCH) [0-9]+$")
  set(_parts "")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*DLPACKPP_VERSION_${_part} ([0-9]+).*" "\\1" _value "${_lines}")
    if(NOT _value MATCHES "^[0-9]+$")
      message(FATAL_ERROR "${header} does not define DLPACKPP_VERSION_${_part}")
    endif()
    list(APPEND _parts "${_value}")
  endforeach()
  list(JOIN _parts "." _version)
  set(${out_var} "${_version}" PARENT_SCOPE)
endfunction()
