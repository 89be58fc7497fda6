// SPDX-License-Identifier: Apache-2.0
/// @file
/// The access rules: what a consumer may do with a validated tensor (typed access by dtype,
/// writability, one address per written element, alignment and addressability; rank, shape
/// and device requirements), shared by TensorView, ManagedTensor's typed fast path,
/// iterate.hpp and mdspan.hpp. Messages are built out of line and laid out cold, so each
/// check inlines to a compare and a branch. Sits above the value types it reads (device,
/// dtype, error, flags, int_span).
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/dtype.hpp"
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

/// A write to a layout where a stride of 0 spans more than one index.
DLPACKPP_COLD inline Error overlapping_error(int d, std::int64_t extent) {
  return make_error(Errc::overlapping, "strides[", d, "] is 0 over extent ", extent,
                    ": elements overlap; a writable access needs one address per element "
                    "(read it through a const type, or copy it)");
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

/// Typed access as T reads a DLPack bool as C++ bool only through BoolByte.
template <class T>
constexpr void assert_not_bool() noexcept {
  static_assert(!std::is_same<std::remove_cv_t<T>, bool>::value,
                "dlpackpp: a DLPack bool is a byte any producer may set to any value, and "
                "reading one that is not 0 or 1 as C++ bool is undefined; access bool "
                "tensors as dlpackpp::BoolByte");
}

// The rules of typed access, one predicate each, shared by the fast checks (*_ok) and the
// diagnoses (*_problem) below.
template <class T>
constexpr bool writable_as(std::uint64_t flags) noexcept {
  return std::is_const<T>::value || (flags & flag::read_only) == 0;
}
template <class T>
inline bool aligned_as(const void* first) noexcept {
  return (reinterpret_cast<std::uintptr_t>(first) & (alignof(T) - 1)) == 0;
}
/// The overlap a write can see cheaply, as PyTorch's in-place operations refuse it: the
/// first dimension whose stride is 0 over an extent above 1, or -1 (also for an empty
/// tensor, which has no element to share, and for NULL strides, which are compact).
/// Other overlaps (two dimensions with one stride, or shape [3, 3] with strides (1, 2)) are
/// not looked for: see docs/errors.md.
inline int zero_stride_dim(const std::int64_t* shape, const std::int64_t* strides,
                           int ndim) noexcept {
  if (strides == nullptr) return -1;
  int found = -1;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 0) return -1;
    if (found < 0 && strides[d] == 0 && shape[d] > 1) found = d;
  }
  return found;
}
/// Writing through T has one address per element: always for a const T (only reads), else
/// unless zero_stride_dim() finds a dimension. `dense` (row-major contiguity a view knows
/// already) settles it without reading the strides.
template <class T>
DLPACKPP_FORCE_INLINE bool one_address_each(bool dense, const std::int64_t* shape,
                                            const std::int64_t* strides, int ndim) noexcept {
  return std::is_const<T>::value || dense || zero_stride_dim(shape, strides, ndim) < 0;
}
/// Why one_address_each() refuses, for a layout it may accept.
template <class T>
Result<void> overlap_problem(const std::int64_t* shape, const std::int64_t* strides, int ndim) {
  if (std::is_const<T>::value) return {};
  const int d = zero_stride_dim(shape, strides, ndim);
  if (DLPACKPP_UNLIKELY(d >= 0)) return overlapping_error(d, shape[d]);
  return {};
}

/// Elements have addresses unless they are packed below one byte.
constexpr bool addressable(DataType dtype, std::uint64_t flags) noexcept {
  return !dtype.is_subbyte() || (flags & flag::is_subbyte_type_padded) != 0;
}

/// Typed access to the elements at `first` as T is allowed: dtype, writability, alignment.
template <class T>
DLPACKPP_FORCE_INLINE bool element_ok(DataType dtype, std::uint64_t flags,
                                      const void* first) noexcept {
  assert_not_bool<T>();
  return dtype == dtype_of<T> && writable_as<T>(flags) && aligned_as<T>(first);
}

/// An accessor of rank N over the elements is allowed: element_ok(), the rank, addresses.
template <class T, int N>
DLPACKPP_FORCE_INLINE bool accessor_ok(DataType dtype, std::uint64_t flags, int ndim,
                                       const void* first) noexcept {
  return element_ok<T>(dtype, flags, first) && ndim == N && addressable(dtype, flags);
}

/// Why element_ok() refuses: the first failing rule as an Error.
template <class T>
Result<void> element_problem(DataType dtype, std::uint64_t flags, const void* first) {
  assert_not_bool<T>();
  constexpr DataType wanted = dtype_of<T>;
  if (DLPACKPP_UNLIKELY(dtype != wanted)) return dtype_error(dtype, wanted, "accessed as ");
  if (DLPACKPP_UNLIKELY(!writable_as<T>(flags))) return read_only_error();
  if (DLPACKPP_UNLIKELY(!aligned_as<T>(first))) {
    return misaligned_error(reinterpret_cast<std::uintptr_t>(first), alignof(T), wanted);
  }
  return {};
}

/// Why accessor_ok() refuses: the first failing rule as an Error.
template <class T, int N>
Result<void> accessor_problem(DataType dtype, std::uint64_t flags, int ndim, const void* first) {
  Result<void> ok = element_problem<T>(dtype, flags, first);
  if (DLPACKPP_UNLIKELY(!ok)) return ok;
  if (DLPACKPP_UNLIKELY(ndim != N)) return rank_error(ndim, N, "accessor rank is ");
  if (DLPACKPP_UNLIKELY(!addressable(dtype, flags))) return packed_error(dtype);
  return {};
}

/// The Error of a refused typed access on `t`: `access`'s where the element rules failed,
/// else the overlap that must then have refused it (`strides` as element_error()'s).
template <class T>
DLPACKPP_COLD Error refusal_of(const Result<void>& access, const DLTensor& t,
                               const std::int64_t* strides) {
  if (!access) return access.error();
  const Result<void> overlap = overlap_problem<T>(t.shape, strides, static_cast<int>(t.ndim));
  return overlap.error();
}
/// The Error of a refused element_ok() or one_address_each() on `t` (with `flags`, and
/// `strides` where they are not t.strides, as a view's normalized ones), built out of line
/// from little more than the tensor's address, so the hot caller prepares next to nothing.
template <class T>
DLPACKPP_COLD Error element_error(const DLTensor& t, std::uint64_t flags,
                                  const std::int64_t* strides) {
  return refusal_of<T>(element_problem<T>(t.dtype, flags, first_element(t)), t, strides);
}
/// As above, with the tensor's own strides.
template <class T>
DLPACKPP_COLD Error element_error(const DLTensor& t, std::uint64_t flags) {
  return element_error<T>(t, flags, t.strides);
}

/// The Error of a refused accessor_ok() or one_address_each() on `t`, built out of line
/// (arguments as element_error()'s).
template <class T, int N>
DLPACKPP_COLD Error accessor_error(const DLTensor& t, std::uint64_t flags,
                                   const std::int64_t* strides) {
  return refusal_of<T>(
      accessor_problem<T, N>(t.dtype, flags, static_cast<int>(t.ndim), first_element(t)), t,
      strides);
}
/// As above, with the tensor's own strides.
template <class T, int N>
DLPACKPP_COLD Error accessor_error(const DLTensor& t, std::uint64_t flags) {
  return accessor_error<T, N>(t, flags, t.strides);
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
      return make_error(Errc::shape_mismatch, "shape[", d, "] is ", actual[d], ", required ", want);
    }
  }
  return {};
}

}  // namespace detail
DLPACKPP_END_NAMESPACE
