// SPDX-License-Identifier: Apache-2.0
/// @file
/// The consumer checks shared by TensorView and the typed fast path of ManagedTensor, with
/// their messages built out of line and laid out cold so each check inlines to a compare
/// and a branch.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/int_span.hpp"

#include <cstddef>
#include <cstdint>
#include <type_traits>

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

/// The first element of a tensor: data + byte_offset in address arithmetic, so an unchecked
/// tensor's wild offset cannot make pointer arithmetic undefined; NULL when data is.
inline void* first_element(const DLTensor& t) noexcept {
  if (t.data == nullptr) return nullptr;
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(t.data) +
                                 static_cast<std::uintptr_t>(t.byte_offset));
}

/// Typed access to the elements at `first` as T: dtype, writability, alignment.
template <class T>
Result<void> element_problem(DataType dtype, std::uint64_t flags, const void* first) {
  static_assert(!std::is_same<std::remove_cv_t<T>, bool>::value,
                "dlpackpp: a DLPack bool is a byte any producer may set to any value, and "
                "reading one that is not 0 or 1 as C++ bool is undefined; access bool "
                "tensors as dlpackpp::BoolByte");
  constexpr DataType wanted = dtype_of<T>;
  if (DLPACKPP_UNLIKELY(dtype != wanted)) return dtype_error(dtype, wanted, "accessed as ");
  if (!std::is_const<T>::value && DLPACKPP_UNLIKELY((flags & flag::read_only) != 0)) {
    return read_only_error();
  }
  const auto address = reinterpret_cast<std::uintptr_t>(first);
  if (DLPACKPP_UNLIKELY((address & (alignof(T) - 1)) != 0)) {
    return misaligned_error(address, alignof(T), wanted);
  }
  return {};
}

/// An accessor of rank N over the elements: element_problem(), the rank, addressability.
template <class T, int N>
Result<void> accessor_problem(DataType dtype, std::uint64_t flags, int ndim, const void* first) {
  Result<void> ok = element_problem<T>(dtype, flags, first);
  if (DLPACKPP_UNLIKELY(!ok)) return ok;
  if (DLPACKPP_UNLIKELY(ndim != N)) return rank_error(ndim, N, "accessor rank is ");
  if (DLPACKPP_UNLIKELY(dtype.is_subbyte() && (flags & flag::is_subbyte_type_padded) == 0)) {
    return packed_error(dtype);
  }
  return {};
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
