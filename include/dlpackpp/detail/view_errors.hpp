// SPDX-License-Identifier: Apache-2.0
/// @file
/// The messages of TensorView's consumer checks, built out of line and laid out cold so that
/// the checks themselves inline to a compare and a branch.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/int_span.hpp"

#include <cstddef>
#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// "dtype is float64, <what>float32".
DLPACKPP_COLD inline Error dtype_error(DataType actual, DataType wanted, const char* what) {
  return make_error(Errc::dtype_mismatch, "dtype is ", actual.to_string(), ", ", what,
                    wanted.to_string());
}

/// "ndim is 3, <what>2".
DLPACKPP_COLD inline Error rank_error(int actual, int wanted, const char* what) {
  return make_error(Errc::rank_mismatch, "ndim is ", actual, ", ", what, wanted);
}

/// "device is cuda:0, required cpu".
DLPACKPP_COLD inline Error device_error(Device actual, Device wanted) {
  return make_error(Errc::device_mismatch, "device is ", actual.to_string(), ", required ",
                    wanted.to_string());
}

/// A mutable access to a READ_ONLY tensor.
DLPACKPP_COLD inline Error read_only_error() {
  return make_error(Errc::read_only,
                    "tensor is READ_ONLY; read it through a const type or const_data()");
}

/// Typed access to elements packed below one byte.
DLPACKPP_COLD inline Error packed_error(DataType dtype) {
  return make_error(Errc::unsupported_dtype, "dtype ", dtype.to_string(),
                    " is packed below one byte per element; elements are not addressable");
}

/// Typed access whose first element is not aligned for the C++ type.
DLPACKPP_COLD inline Error misaligned_error(std::uintptr_t address, std::size_t alignment,
                                            DataType dtype) {
  return make_error(Errc::misaligned, "data + byte_offset is ", address, ", not aligned to ",
                    alignment, " bytes as ", dtype.to_string(), " access requires");
}

/// A dimension index outside [-ndim, ndim).
DLPACKPP_COLD inline Error dim_error(int d, int ndim) {
  return make_error(Errc::out_of_range, "dimension ", d, " is out of range for ndim ", ndim);
}

/// require_shape(): rank, then the wildcard's range, then the first differing extent.
inline Result<void> shape_problem(IntSpan actual, IntSpan expected) {
  if (DLPACKPP_UNLIKELY(expected.size() != actual.size())) {
    return make_error(Errc::rank_mismatch, "ndim is ", actual.size(), ", required shape has ",
                      expected.size(), " dimensions");
  }
  for (std::size_t d = 0; d < actual.size(); ++d) {
    const std::int64_t want = expected[d];
    if (DLPACKPP_UNLIKELY(want < -1)) {
      return make_error(Errc::invalid_argument, "required shape[", d, "] is ", want,
                        ", must be >= 0 or -1 (any)");
    }
    if (DLPACKPP_UNLIKELY(want != -1 && want != actual[d])) {
      return make_error(Errc::shape_mismatch, "shape[", d, "] is ", actual[d], ", required ",
                        want);
    }
  }
  return {};
}

}  // namespace detail
DLPACKPP_END_NAMESPACE
