// SPDX-License-Identifier: Apache-2.0
/// @file
/// Which Python exception an Errc becomes: the one table that the producer kit's SetError
/// kinds and python/errors.hpp's exceptions share. Needs no Python.h and no exchange API, so
/// it is defined whatever dlpack.h is in force.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/error.hpp"

DLPACKPP_BEGIN_NAMESPACE
namespace detail {
/// The Python exception class an Errc maps to.
enum class PythonErrorClass { buffer_error, type_error, value_error };

/// BufferError for what cannot be exchanged (version, device, flags, writability, overlap),
/// TypeError for a wrong or unsupported dtype or rank, ValueError for the rest.
constexpr PythonErrorClass python_error_class(Errc code) noexcept {
  switch (code) {
    case Errc::version_mismatch:
    case Errc::unsupported_device:
    case Errc::device_mismatch:
    case Errc::invalid_flags:
    case Errc::read_only:
    case Errc::overlapping:
      return PythonErrorClass::buffer_error;
    case Errc::unsupported_dtype:
    case Errc::dtype_mismatch:
    case Errc::rank_mismatch:
      return PythonErrorClass::type_error;
    default:
      return PythonErrorClass::value_error;
  }
}

/// The Python name of the class: "BufferError", "TypeError" or "ValueError".
constexpr const char* python_error_name(PythonErrorClass c) noexcept {
  switch (c) {
    case PythonErrorClass::buffer_error:
      return "BufferError";
    case PythonErrorClass::type_error:
      return "TypeError";
    case PythonErrorClass::value_error:
      break;
  }
  return "ValueError";
}
}  // namespace detail
DLPACKPP_END_NAMESPACE
