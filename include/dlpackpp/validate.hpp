// SPDX-License-Identifier: Apache-2.0
/// @file
/// validate(): the one check every entry point applies to a DLTensor before trusting it, the
/// quick check first and, only for a tensor it declines, the catalogue that names the problem.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/rules/diagnose.hpp"
#include "dlpackpp/rules/quick_checks.hpp"
#include "dlpackpp/validate_options.hpp"

#include <cstddef>
#include <cstdint>

DLPACKPP_BEGIN_NAMESPACE

namespace detail {

/// Fills `out` with a DLTensor over caller-owned parts, after the two checks a DLTensor
/// cannot express: the rank fits in ndim and strides (when given) match the shape. Empty
/// strides become NULL, which validation then treats as compact row-major.
inline Result<void> describe_parts(void* data, DataType dtype, IntSpan shape, IntSpan strides,
                                   Device device, std::uint64_t byte_offset, DLTensor& out) {
  if (shape.size() > static_cast<std::size_t>(INT32_MAX)) {
    return make_error(Errc::invalid_ndim, "shape has ", shape.size(),
                      " dimensions, more than DLTensor::ndim can hold");
  }
  if (!strides.empty() && strides.size() != shape.size()) {
    return make_error(Errc::invalid_argument, "strides has ", strides.size(),
                      " values but shape has ", shape.size());
  }
  out = DLTensor{};
  out.data = data;
  out.device = device;
  out.ndim = static_cast<decltype(out.ndim)>(shape.size());
  out.dtype = dtype;
  out.shape = const_cast<shape_field_t>(shape.data());
  out.strides = strides.empty() ? nullptr : const_cast<shape_field_t>(strides.data());
  out.byte_offset = byte_offset;
  return {};
}

/// Checks `t` and fills `facts`; allocates only to describe a failure.
DLPACKPP_FORCE_INLINE Result<void> inspect(const DLTensor& t, const ValidateOptions& options,
                                           TensorFacts& facts) {
  if (DLPACKPP_UNLIKELY(!quick_accept(t, options, facts))) return diagnose(t, options, facts);
  return {};
}

}  // namespace detail

/// Checks a DLTensor the way every dlpackpp entry point does and returns the first problem:
/// ndim, shape, dtype, device, flags, sizes, strided extents, address wrap, and optionally
/// strides presence and alignment. Never throws for a bad tensor; allocates only on failure.
inline Result<void> validate(const DLTensor& tensor, const ValidateOptions& options = {}) {
  detail::TensorFacts facts;
  return detail::inspect(tensor, options, facts);
}

DLPACKPP_END_NAMESPACE
