// SPDX-License-Identifier: Apache-2.0
/// @file
/// The consumer checks of TensorView (require_dtype, require_ndim, require_shape,
/// require_device, require_contiguous, require_writable), each in its three forms: on a view,
/// on a temporary view (returned by value, so nothing kept can dangle) and non-throwing. One
/// pattern for all eighteen, written once in a base the view derives from (CRTP: each returns
/// the view itself), so the view's own header reads as its data and access.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/rules/access.hpp"

#include <utility>

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// The require_* / try_require_* family of `View` (TensorView, which derives from it and
/// befriends it for the one-address test its typed access shares).
template <class View>
class ConsumerChecks {
 public:
  /// Errc::dtype_mismatch unless dtype() == expected.
  const View& require_dtype(DataType expected) const& {
    return self_or_throw(self().dtype() == expected, [&] { return mismatch(expected); });
  }
  /// As above; a temporary view is returned by value so a kept reference cannot dangle.
  View require_dtype(DataType expected) && {
    return self_or_throw(self().dtype() == expected, [&] { return mismatch(expected); });
  }
  /// Non-throwing require_dtype().
  DLPACKPP_FORCE_INLINE Result<View> try_require_dtype(DataType expected) const {
    return self_or_error(self().dtype() == expected, [&] { return mismatch(expected); });
  }
  /// Errc::dtype_mismatch unless dtype() == dtype_of<T>.
  template <class T>
  const View& require_dtype() const& {
    return require_dtype(dtype_of<T>);
  }
  /// As above, for a temporary view.
  template <class T>
  View require_dtype() && {
    return std::move(*this).require_dtype(dtype_of<T>);
  }
  /// Non-throwing require_dtype<T>().
  template <class T>
  DLPACKPP_FORCE_INLINE Result<View> try_require_dtype() const {
    return try_require_dtype(dtype_of<T>);
  }
  /// Errc::rank_mismatch unless ndim() == expected.
  const View& require_ndim(int expected) const& {
    return self_or_throw(self().ndim() == expected, [&] { return mismatch(expected); });
  }
  /// As above, for a temporary view.
  View require_ndim(int expected) && {
    return self_or_throw(self().ndim() == expected, [&] { return mismatch(expected); });
  }
  /// Non-throwing require_ndim().
  DLPACKPP_FORCE_INLINE Result<View> try_require_ndim(int expected) const {
    return self_or_error(self().ndim() == expected, [&] { return mismatch(expected); });
  }
  /// Errc::rank_mismatch for another rank, Errc::shape_mismatch naming the first dimension
  /// that differs; -1 in `expected` matches any extent (below -1: Errc::invalid_argument).
  const View& require_shape(IntSpan expected) const& {
    return self_or_throw(shape_fits(expected), [&] { return shape_error(expected); });
  }
  /// As above, for a temporary view.
  View require_shape(IntSpan expected) && {
    return self_or_throw(shape_fits(expected), [&] { return shape_error(expected); });
  }
  /// Non-throwing require_shape().
  DLPACKPP_FORCE_INLINE Result<View> try_require_shape(IntSpan expected) const {
    return self_or_error(shape_fits(expected), [&] { return shape_error(expected); });
  }
  /// Errc::device_mismatch unless device() == expected.
  const View& require_device(Device expected) const& {
    return self_or_throw(self().device() == expected, [&] { return mismatch(expected); });
  }
  /// As above, for a temporary view.
  View require_device(Device expected) && {
    return self_or_throw(self().device() == expected, [&] { return mismatch(expected); });
  }
  /// Non-throwing require_device().
  DLPACKPP_FORCE_INLINE Result<View> try_require_device(Device expected) const {
    return self_or_error(self().device() == expected, [&] { return mismatch(expected); });
  }
  /// Errc::not_contiguous unless is_contiguous().
  const View& require_contiguous() const& {
    return self_or_throw(self().is_contiguous(), [&] { return not_contiguous_error(); });
  }
  /// As above, for a temporary view.
  View require_contiguous() && {
    return self_or_throw(self().is_contiguous(), [&] { return not_contiguous_error(); });
  }
  /// Non-throwing require_contiguous().
  DLPACKPP_FORCE_INLINE Result<View> try_require_contiguous() const {
    return self_or_error(self().is_contiguous(), [&] { return not_contiguous_error(); });
  }
  /// Errc::read_only when the producer forbade writes, Errc::overlapping when elements
  /// share addresses (a stride of 0 over an extent above 1), naming the dimension.
  const View& require_writable() const& {
    return self_or_throw(writable(), [&] { return writable_error(); });
  }
  /// As above, for a temporary view.
  View require_writable() && {
    return self_or_throw(writable(), [&] { return writable_error(); });
  }
  /// Non-throwing require_writable().
  DLPACKPP_FORCE_INLINE Result<View> try_require_writable() const {
    return self_or_error(writable(), [&] { return writable_error(); });
  }

 private:
  // The view these checks belong to.
  DLPACKPP_FORCE_INLINE const View& self() const noexcept {
    return static_cast<const View&>(*this);
  }

  // Each require_* is one test; only a failing one builds its Error (`fail`, cold), which
  // self_or_throw() throws and self_or_error() returns. No Result<void> stands between the
  // test and the branch, so a passing check costs its comparison. A temporary's check copies
  // the view out through the first (a view's move is its copy).
  template <class Fail>
  DLPACKPP_FORCE_INLINE const View& self_or_throw(bool ok, Fail&& fail) const& {
    if (DLPACKPP_UNLIKELY(!ok)) throw_error(fail());
    return self();
  }
  template <class Fail>
  DLPACKPP_FORCE_INLINE Result<View> self_or_error(bool ok, Fail&& fail) const {
    if (DLPACKPP_UNLIKELY(!ok)) return fail();
    return self();
  }
  // The mismatch errors take only the view's address and the expectation, so a passing
  // check prepares no arguments for the failing one.
  DLPACKPP_COLD Error mismatch(DataType expected) const {
    return dtype_error(self().dtype(), expected, "required ");
  }
  DLPACKPP_COLD Error mismatch(int expected) const {
    return rank_error(self().ndim(), expected, "required ");
  }
  DLPACKPP_COLD Error mismatch(Device expected) const {
    return device_error(self().device(), expected);
  }
  DLPACKPP_FORCE_INLINE bool writable() const noexcept {
    return !self().read_only() && self().template apart<void>();
  }
  DLPACKPP_COLD Error writable_error() const {
    if (self().read_only()) return read_only_error();
    return overlap_problem<void>(self().shape_data(), self().strides_data(), self().ndim()).error();
  }
  DLPACKPP_COLD Error not_contiguous_error() const {
    return make_error(Errc::not_contiguous, "tensor ", self().to_string(),
                      " is not row-major contiguous");
  }
  // The shape rule is shape_problem's; its error is made again only on failure.
  bool shape_fits(IntSpan expected) const {
    return shape_problem(self().shape(), expected).has_value();
  }
  DLPACKPP_COLD Error shape_error(IntSpan expected) const {
    return shape_problem(self().shape(), expected).error();
  }
};

}  // namespace detail
DLPACKPP_END_NAMESPACE
