// SPDX-License-Identifier: Apache-2.0
/// @file
/// How TensorView's consumer checks (require_dtype ... require_writable and their try_ twins)
/// pass and fail: each is one test, and only a failing one builds its Error, cold and out of
/// line. A private base of the view (CRTP, so each hands back the view itself), apart from it
/// so that the view's class body reads as its contract.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/rules/access.hpp"

DLPACKPP_BEGIN_NAMESPACE
namespace detail {

/// The passing and failing halves of `View`'s require_* checks (View: TensorView, which
/// derives from it privately and befriends it for the layout it reads).
template <class View>
class ConsumerChecks {
 protected:
  // No Result<void> stands between a check's test and its branch, so a passing check costs
  // its comparison; `fail` (cold) builds the Error only when it fails. A temporary's check
  // returns the view by value, copied out of the reference (a view's move is its copy).

  /// Returns the view when `ok`, else throws what `fail()` builds.
  template <class Fail>
  DLPACKPP_FORCE_INLINE const View& self_or_throw(bool ok, Fail&& fail) const& {
    if (DLPACKPP_UNLIKELY(!ok)) throw_error(fail());
    return self();
  }
  /// Returns the view when `ok`, else what `fail()` builds.
  template <class Fail>
  DLPACKPP_FORCE_INLINE Result<View> self_or_error(bool ok, Fail&& fail) const {
    if (DLPACKPP_UNLIKELY(!ok)) return fail();
    return self();
  }

  // The mismatch errors take only the view's address and the expectation, so a passing
  // check prepares no arguments for the failing one.

  /// require_dtype()'s Errc::dtype_mismatch.
  DLPACKPP_COLD Error mismatch(DataType expected) const {
    return dtype_error(self().dtype(), expected, "required ");
  }
  /// require_ndim()'s Errc::rank_mismatch.
  DLPACKPP_COLD Error mismatch(int expected) const {
    return rank_error(self().ndim(), expected, "required ");
  }
  /// require_device()'s Errc::device_mismatch.
  DLPACKPP_COLD Error mismatch(Device expected) const {
    return device_error(self().device(), expected);
  }
  /// require_writable()'s test: no READ_ONLY flag, one address per element.
  DLPACKPP_FORCE_INLINE bool writable() const noexcept {
    return !self().read_only() && self().template apart<void>();
  }
  /// require_writable()'s Errc::read_only or Errc::overlapping, naming the dimension.
  DLPACKPP_COLD Error writable_error() const {
    if (self().read_only()) return read_only_error();
    return overlap_problem<void>(self().shape_data(), self().strides_data(), self().ndim()).error();
  }
  /// require_contiguous()'s Errc::not_contiguous, with the view's layout.
  DLPACKPP_COLD Error not_contiguous_error() const {
    return make_error(Errc::not_contiguous, "tensor ", self().to_string(),
                      " is not row-major contiguous");
  }
  /// require_shape()'s test; the shape rule is shape_problem's, its error made again only on
  /// failure.
  bool shape_fits(IntSpan expected) const {
    return shape_problem(self().shape(), expected).has_value();
  }
  /// require_shape()'s Errc::rank_mismatch, shape_mismatch or invalid_argument.
  DLPACKPP_COLD Error shape_error(IntSpan expected) const {
    return shape_problem(self().shape(), expected).error();
  }

 private:
  /// The view these checks belong to.
  DLPACKPP_FORCE_INLINE const View& self() const noexcept {
    return static_cast<const View&>(*this);
  }
};

}  // namespace detail
DLPACKPP_END_NAMESPACE
