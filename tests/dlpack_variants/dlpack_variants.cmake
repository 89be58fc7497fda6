# SPDX-License-Identifier: Apache-2.0
# The dlpack.h copies the tests build against, every one inside this build tree.
#
# Written by the project: dlpackpp_dlpack_variant(<variant> <out_var>) derives a DLPack version
# the library must support from include/dlpackpp/bundled/dlpack.h by deleting or renaming what
# that version lacks or spells differently, so the variants share the bundled header's ABI
# facts (which tests/abi checks) and cannot drift from it quietly: an edit that no longer
# applies stops the configure step. The variants, in DLPACKPP_DLPACK_VARIANTS:
#   v0.8                 DLPACK_VERSION 80: no DLPackVersion, no versioned struct, no flags,
#                        devices up to kDLHexagon, dtype codes up to kDLBool
#   v0.8-const           the same, with `const int64_t*` shape and strides
#   v1.1                 DLPACK_MINOR_VERSION 1: no exchange API
#   v1.1-draft-exchange  1.1 with a draft exchange table whose link is `prev_version_api`
#   v1.3                 the bundled header without the mark that makes it "bundled"
#   v1.3-const           v1.3 with `const int64_t*` shape and strides
#
# Found on the machine: dlpackpp_find_dlpack_headers() lists the real dlpack.h copies a user's
# machine can have (see its comment). Each is reached through dlpackpp_dlpack_shim(): a folder
# in the build tree whose dlpack/dlpack.h includes the real file by absolute path. Putting the
# real folder on the include path instead would, for /usr/include, reorder the system include
# folders (GCC's <cstdlib> then fails on `#include_next <stdlib.h>`).

set(DLPACKPP_DLPACK_VARIANTS v0.8 v0.8-const v1.1 v1.1-draft-exchange v1.3 v1.3-const)
set(_dlpackpp_variants_bundled "${PROJECT_SOURCE_DIR}/include/dlpackpp/bundled/dlpack.h")
set(_dlpackpp_variants_root "${PROJECT_BINARY_DIR}/dlpack_variants")
set(_dlpackpp_variants_dir "${CMAKE_CURRENT_LIST_DIR}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_dlpackpp_variants_bundled}")

# Rewrites a file only when its text changes, so a reconfigure rebuilds nothing.
function(_dlpackpp_write_if_changed path content)
  if(EXISTS "${path}")
    file(READ "${path}" _old)
    if(_old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${content}")
endfunction()

# Replaces the text from the first `begin` through the next `end` (inclusive) with
# `replacement`; either marker missing is an error naming the variant.
function(_dlpackpp_variant_splice content_var variant begin end replacement)
  set(_text "${${content_var}}")
  string(FIND "${_text}" "${begin}" _b)
  if(_b EQUAL -1)
    message(FATAL_ERROR "tests/dlpack_variants (${variant}): the bundled dlpack.h no longer "
      "contains '${begin}'; update the edit in ${_dlpackpp_variants_dir}/dlpack_variants.cmake")
  endif()
  string(SUBSTRING "${_text}" ${_b} -1 _tail)
  string(FIND "${_tail}" "${end}" _e)
  if(_e EQUAL -1)
    message(FATAL_ERROR "tests/dlpack_variants (${variant}): no '${end}' after '${begin}' in "
      "the bundled dlpack.h; update the edit in ${_dlpackpp_variants_dir}/dlpack_variants.cmake")
  endif()
  string(LENGTH "${end}" _end_length)
  math(EXPR _after "${_e} + ${_end_length}")
  string(SUBSTRING "${_text}" 0 ${_b} _head)
  string(SUBSTRING "${_tail}" ${_after} -1 _rest)
  set(${content_var} "${_head}${replacement}${_rest}" PARENT_SCOPE)
endfunction()

# dlpackpp_dlpack_variant(<variant> <out_var>): writes the variant's dlpack/dlpack.h and sets
# <out_var> to the folder holding dlpack/ (for an include path).
function(dlpackpp_dlpack_variant variant out_var)
  if(NOT variant IN_LIST DLPACKPP_DLPACK_VARIANTS)
    message(FATAL_ERROR "unknown dlpack.h variant '${variant}' (known: ${DLPACKPP_DLPACK_VARIANTS})")
  endif()
  file(READ "${_dlpackpp_variants_bundled}" h)
  set(what "")
  # The bundled header's opening comment describes the bundled header; the first line written
  # below describes the variant instead.
  _dlpackpp_variant_splice(h ${variant} "/*\n * SPDX-License-Identifier" " */\n"
    "/* SPDX-License-Identifier: Apache-2.0 */\n")
  # Every variant is an external header as far as dlpackpp can tell.
  _dlpackpp_variant_splice(h ${variant} "/* Lets dlpackpp report" "_H_ 1\n" "")

  if(variant MATCHES "^v0\\.8")
    set(what "DLPack 0.8")
    _dlpackpp_variant_splice(h ${variant} "/* ABI major:" "#define DLPACK_MINOR_VERSION 3\n"
      "/* 0.x headers carry one number, 10 * minor, and an ABI number. */\n#define DLPACK_VERSION 80\n#define DLPACK_ABI_VERSION 1\n")
    _dlpackpp_variant_splice(h ${variant} "/* Version pair" "} DLPackVersion;\n\n" "")
    _dlpackpp_variant_splice(h ${variant} "  kDLMAIA = 17," "kDLTrn = 18,\n" "")
    _dlpackpp_variant_splice(h ${variant} "  kDLFloat8_e3m4 = 7U," "} DLDataTypeCode;"
      "} DLDataTypeCode;")
    _dlpackpp_variant_splice(h ${variant} "/* Flag bits" "} DLManagedTensorVersioned;\n\n" "")
    _dlpackpp_variant_splice(h ${variant} "/*\n * Exchange API" "} DLPackExchangeAPI;\n\n" "")
  elseif(variant MATCHES "^v1\\.1")
    set(what "DLPack 1.1")
    _dlpackpp_variant_splice(h ${variant} "#define DLPACK_MINOR_VERSION 3" "3"
      "#define DLPACK_MINOR_VERSION 1")
    if(variant STREQUAL "v1.1-draft-exchange")
      set(what "${what} with a draft exchange table (`prev_version_api`)")
      _dlpackpp_variant_splice(h ${variant} "DLPackExchangeAPIHeader* prev_api;" ";"
        "DLPackExchangeAPIHeader* prev_version_api;")
    else()
      _dlpackpp_variant_splice(h ${variant} "/*\n * Exchange API" "} DLPackExchangeAPI;\n\n" "")
    endif()
  else()
    set(what "DLPack 1.3")
  endif()
  if(variant MATCHES "-const$")
    set(what "${what} with const shape and strides")
    _dlpackpp_variant_splice(h ${variant} "  int64_t* shape;" ";" "  const int64_t* shape;")
    _dlpackpp_variant_splice(h ${variant} "  int64_t* strides;" ";" "  const int64_t* strides;")
  endif()

  set(dir "${_dlpackpp_variants_root}/${variant}")
  string(CONCAT h "/* Generated by tests/dlpack_variants/dlpack_variants.cmake from dlpackpp's "
    "bundled header: ${what}. For dlpackpp's tests only. */\n" "${h}")
  _dlpackpp_write_if_changed("${dir}/dlpack/dlpack.h" "${h}")
  set(${out_var} "${dir}" PARENT_SCOPE)
endfunction()

# dlpackpp_dlpack_shim(<name> <header> <out_var>): a folder holding dlpack/dlpack.h that
# includes <header>; sets <out_var> to that folder. Put it on the include path as SYSTEM: the
# real header then counts as a system header too, so its own warnings stay out of -Werror.
function(dlpackpp_dlpack_shim name header out_var)
  set(dir "${_dlpackpp_variants_root}/found/${name}")
  _dlpackpp_write_if_changed("${dir}/dlpack/dlpack.h"
    "/* Generated by tests/dlpack_variants/dlpack_variants.cmake: the real header, by path. */\n#include \"${header}\"\n")
  set(${out_var} "${dir}" PARENT_SCOPE)
endfunction()

# dlpackpp_dlpack_header_version(<header> <out_var>): the version a dlpack.h declares, as
# "<major>;<minor>": 1.x headers have DLPACK_{MAJOR,MINOR}_VERSION, 0.x ones DLPACK_VERSION
# (60 = 0.6, 80 = 0.8). Empty parts when the header declares neither.
function(dlpackpp_dlpack_header_version header out_var)
  file(STRINGS "${header}" _lines REGEX "^#define DLPACK_(MAJOR_VERSION|MINOR_VERSION|VERSION) ")
  set(_major "")
  set(_minor "")
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "^#define DLPACK_MAJOR_VERSION ([0-9]+)")
      set(_major "${CMAKE_MATCH_1}")
    elseif(_line MATCHES "^#define DLPACK_MINOR_VERSION ([0-9]+)")
      set(_minor "${CMAKE_MATCH_1}")
    elseif(_line MATCHES "^#define DLPACK_VERSION ([0-9]+)" AND _major STREQUAL "")
      set(_major 0)
      math(EXPR _minor "${CMAKE_MATCH_1} / 10")
    endif()
  endforeach()
  set(${out_var} "${_major};${_minor}" PARENT_SCOPE)
endfunction()

# dlpackpp_find_dlpack_headers(): the real dlpack.h copies on this machine. Sets, in the
# caller's scope, DLPACKPP_FOUND_DLPACK (names, in this order), DLPACKPP_FOUND_DLPACK_<name>
# (the header's path) and DLPACKPP_MISSING_DLPACK ("<name>|<how to get it>" for each absent
# one, for skip messages). The names:
#   system-dlpack  <dlpack/dlpack.h> in the system's include folders (Debian: libdlpack-dev, 0.6)
#   libtorch       <ATen/dlpack.h> in the system's include folders (Debian: libtorch-dev)
#   python-<module> the copy inside a Python package that Python3_EXECUTABLE can import: the
#                  PyPI wheels of torch and apache-tvm-ffi (find_wheel_headers.py lists them;
#                  nothing is imported). One that is a link to a header found before (Debian's
#                  python3-torch links libtorch's) is not listed twice.
# Each cached path (DLPACKPP_SYSTEM_DLPACK_H, DLPACKPP_LIBTORCH_DLPACK_H) can be set by hand.
# Also sets DLPACKPP_REFERENCE_DLPACK (a header's path, or empty) and its name
# DLPACKPP_REFERENCE_DLPACK_NAME: the real DLPack 1.3-or-later header that tests/abi compares
# the bundled one with and tests/exchange_api builds its suite against.
macro(dlpackpp_find_dlpack_headers)
  set(DLPACKPP_FOUND_DLPACK "")
  set(DLPACKPP_MISSING_DLPACK "")
  set(_found_real "")
  find_file(DLPACKPP_SYSTEM_DLPACK_H dlpack/dlpack.h
    DOC "A system dlpack.h for the compatibility matrix (Debian: libdlpack-dev)")
  find_file(DLPACKPP_LIBTORCH_DLPACK_H ATen/dlpack.h
    DOC "libtorch's dlpack.h for the compatibility matrix (Debian: libtorch-dev)")
  foreach(_entry "system-dlpack|DLPACKPP_SYSTEM_DLPACK_H|apt-get install libdlpack-dev"
                 "libtorch|DLPACKPP_LIBTORCH_DLPACK_H|apt-get install libtorch-dev")
    string(REPLACE "|" ";" _entry "${_entry}")
    list(GET _entry 0 _name)
    list(GET _entry 1 _var)
    list(GET _entry 2 _how)
    if(${_var})
      list(APPEND DLPACKPP_FOUND_DLPACK "${_name}")
      set(DLPACKPP_FOUND_DLPACK_${_name} "${${_var}}")
      get_filename_component(_real "${${_var}}" REALPATH)
      list(APPEND _found_real "${_real}")
    else()
      list(APPEND DLPACKPP_MISSING_DLPACK "${_name}|not found (${_how})")
    endif()
  endforeach()

  set(_wheel_output "")
  if(Python3_EXECUTABLE)
    execute_process(
      COMMAND "${Python3_EXECUTABLE}" "${_dlpackpp_variants_dir}/find_wheel_headers.py"
      OUTPUT_VARIABLE _wheel_output RESULT_VARIABLE _wheel_rc ERROR_QUIET
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _wheel_rc EQUAL 0)
      set(_wheel_output "")
    endif()
  endif()
  string(REPLACE "\n" ";" _wheel_lines "${_wheel_output}")
  foreach(_line IN LISTS _wheel_lines)
    if(_line MATCHES "^found ([A-Za-z0-9_]+) (.+)$")
      set(_name "python-${CMAKE_MATCH_1}")
      set(_header "${CMAKE_MATCH_2}")
      get_filename_component(_real "${_header}" REALPATH)
      if(NOT _real IN_LIST _found_real)
        list(APPEND DLPACKPP_FOUND_DLPACK "${_name}")
        set(DLPACKPP_FOUND_DLPACK_${_name} "${_header}")
        list(APPEND _found_real "${_real}")
      endif()
    elseif(_line MATCHES "^missing ([A-Za-z0-9_]+) ([A-Za-z0-9_.-]+)$")
      list(APPEND DLPACKPP_MISSING_DLPACK
        "python-${CMAKE_MATCH_1}|${Python3_EXECUTABLE} has no ${CMAKE_MATCH_1} (pip install ${CMAKE_MATCH_2})")
    endif()
  endforeach()
  if(NOT _wheel_lines)
    list(APPEND DLPACKPP_MISSING_DLPACK
      "python-torch|no Python found to look for wheels (configure with -DPython3_EXECUTABLE=...)")
  endif()

  # The reference: DLPACKPP_REFERENCE_DLPACK_DIR when set, else the first one found whose
  # version is 1.x with x >= 3 (the bundled header's own ABI, perhaps with later additions).
  set(DLPACKPP_REFERENCE_DLPACK "")
  set(DLPACKPP_REFERENCE_DLPACK_NAME "")
  if(DLPACKPP_REFERENCE_DLPACK_DIR)
    set(DLPACKPP_REFERENCE_DLPACK "${DLPACKPP_REFERENCE_DLPACK_DIR}/dlpack/dlpack.h")
    set(DLPACKPP_REFERENCE_DLPACK_NAME "reference")
    if(NOT EXISTS "${DLPACKPP_REFERENCE_DLPACK}")
      message(FATAL_ERROR "DLPACKPP_REFERENCE_DLPACK_DIR: no dlpack/dlpack.h in ${DLPACKPP_REFERENCE_DLPACK_DIR}")
    endif()
  else()
    foreach(_name IN LISTS DLPACKPP_FOUND_DLPACK)
      dlpackpp_dlpack_header_version("${DLPACKPP_FOUND_DLPACK_${_name}}" _version)
      list(GET _version 0 _major)
      list(GET _version 1 _minor)
      if(NOT DLPACKPP_REFERENCE_DLPACK AND _major STREQUAL "1" AND _minor GREATER_EQUAL 3)
        set(DLPACKPP_REFERENCE_DLPACK "${DLPACKPP_FOUND_DLPACK_${_name}}")
        set(DLPACKPP_REFERENCE_DLPACK_NAME "${_name}")
      endif()
    endforeach()
  endif()
endmacro()
