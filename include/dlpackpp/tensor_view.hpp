// SPDX-License-Identifier: Apache-2.0
/// @file
/// TensorView: a validated, non-owning view of a DLTensor with normalized strides, layout
/// queries, consumer checks and typed access. How a consumer check passes and fails (its one
/// test, its cold error) lives in tensor_view/consumer_checks.hpp, a private base of the view.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/layout.hpp"
#include "dlpackpp/detail/view_storage.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/int_array.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/rules/access.hpp"
#include "dlpackpp/tensor_accessor.hpp"
#include "dlpackpp/tensor_view/consumer_checks.hpp"
#include "dlpackpp/validate.hpp"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

template <class DLManaged>
class BasicManagedTensor;
class TensorView;

/// A borrowed view of a tensor: like std::string_view, cheap to copy and valid only while
/// the viewed memory (and, for a view of a DLTensor, its shape and strides arrays) live.
/// Every check has a throwing form and a `try_` twin returning Result. On a temporary view,
/// shape()/strides() return an IntArray and require_*() a TensorView by value, so nothing
/// handed out of an expression can dangle.
class TensorView : private detail::ConsumerChecks<TensorView> {
 public:
  /// Views a DLTensor after validate(); throws Error with the first problem. A bare DLTensor
  /// carries no flags: pass READ_ONLY in `options.flags` when the tensor has it (a managed
  /// tensor's view() does so itself).
  explicit TensorView(const DLTensor& tensor, const ValidateOptions& options = {})
      : TensorView(try_from(tensor, options).value()) {}
  /// Views raw parts, keeping its own copy of `shape` and `strides` (empty meaning compact
  /// row-major), so a braced list like `{3, 4}` is fine; `data` must outlive it.
  TensorView(void* data, DataType dtype, IntSpan shape, IntSpan strides = {},
             Device device = Device::cpu(), std::uint64_t byte_offset = 0)
      : TensorView(try_from(data, dtype, shape, strides, device, byte_offset).value()) {}

  /// Non-throwing TensorView(const DLTensor&, options).
  static Result<TensorView> try_from(const DLTensor& tensor, const ValidateOptions& options = {}) {
    return checked(tensor, options, false);
  }
  /// As try_from, but the view reads `tensor` itself instead of a copy of its fields, so
  /// `tensor` must outlive the view and every copy of it (a managed tensor's own DLTensor, a
  /// borrow's storage): one copy of the struct fewer. detach_from_dltensor() ends that.
  DLPACKPP_FORCE_INLINE static Result<TensorView> try_in_place(
      const DLTensor& tensor, const ValidateOptions& options = {}) {
    return checked(tensor, options, true);
  }
  /// Makes a view made by try_in_place (or a copy of one) keep its own copy of the DLTensor's
  /// fields, so that the struct may die first; its shape and strides arrays must still
  /// outlive the view. Nothing for any other view.
  void detach_from_dltensor() noexcept { storage_.keep_tensor(); }
  /// Non-throwing TensorView(data, dtype, shape, strides, device, byte_offset).
  static Result<TensorView> try_from(void* data, DataType dtype, IntSpan shape,
                                     IntSpan strides = {}, Device device = Device::cpu(),
                                     std::uint64_t byte_offset = 0) {
    DLTensor t;
    Result<void> parts =
        detail::describe_parts(data, dtype, shape, strides, device, byte_offset, t);
    if (!parts) return parts.error();
    Result<TensorView> view = try_from(t);
    if (view) view->storage_.copy_arrays();
    return view;
  }
  /// A view without validation, for tensors the caller vouches for (validated already, or
  /// trusted); allocates only for NULL strides above DLPACKPP_VIEW_INLINE_NDIM dimensions.
  DLPACKPP_FORCE_INLINE static TensorView unchecked(const DLTensor& tensor,
                                                    std::uint64_t flags = 0) {
    TensorView v(flags);
    v.storage_.view_copy_of(tensor);
    detail::count_layout(tensor, v.facts_.numel, v.facts_.contiguous);
    return v;
  }

  /// Number of dimensions.
  int ndim() const noexcept { return static_cast<int>(storage_.tensor().ndim); }
  /// The extents, ndim() values, borrowed from this view.
  IntSpan shape() const& noexcept DLPACKPP_LIFETIMEBOUND { return {shape_data(), dims()}; }
  /// The extents of a temporary view, by value.
  IntArray shape() const&& { return IntArray(shape()); }
  /// The strides in elements, ndim() values: the producer's, or compact row-major when it
  /// sent NULL. Borrowed from this view.
  IntSpan strides() const& noexcept DLPACKPP_LIFETIMEBOUND { return {strides_data(), dims()}; }
  /// The strides of a temporary view, by value.
  IntArray strides() const&& { return IntArray(strides()); }
  /// Extent of dimension d; negative d counts from the end. Errc::out_of_range otherwise.
  std::int64_t shape(int d) const { return try_shape(d).value(); }
  /// Non-throwing shape(int).
  Result<std::int64_t> try_shape(int d) const { return at(shape_data(), d); }
  /// Stride of dimension d; negative d counts from the end. Errc::out_of_range otherwise.
  std::int64_t stride(int d) const { return try_stride(d).value(); }
  /// Non-throwing stride(int).
  Result<std::int64_t> try_stride(int d) const { return at(strides_data(), d); }
  /// Number of elements (1 for a zero-dim tensor).
  std::int64_t numel() const noexcept { return facts_.numel; }
  /// The elements' bytes (sub-byte packing or padding counted), not a strided view's span.
  std::int64_t nbytes() const noexcept { return detail::nbytes_of_valid(dtype(), numel(), flags_); }
  /// Element type.
  DataType dtype() const noexcept { return storage_.tensor().dtype; }
  /// Where the memory lives.
  Device device() const noexcept { return storage_.tensor().device; }
  /// Offset of the first element from the producer's data pointer.
  std::uint64_t byte_offset() const noexcept { return storage_.tensor().byte_offset; }
  /// The managed tensor's flags (ValidateOptions::flags for a bare DLTensor).
  std::uint64_t flags() const noexcept { return flags_; }
  /// True when the producer forbade writes (READ_ONLY).
  bool read_only() const noexcept { return (flags_ & flag::read_only) != 0; }
  /// True when sub-byte elements are padded to a byte each.
  bool is_subbyte_padded() const noexcept { return (flags_ & flag::is_subbyte_type_padded) != 0; }

  /// The first element (data + byte_offset; NULL when data is), for reading.
  const void* const_data() const noexcept { return first(); }
  /// The first element for writing: Errc::read_only on a READ_ONLY view, Errc::overlapping
  /// where elements share addresses (read through const_data() or a const T instead).
  void* data() const {
    require_writable();
    return first();
  }
  /// The first element as T*: Errc::dtype_mismatch unless dtype_of<T> == dtype(),
  /// Errc::read_only for a non-const T on a READ_ONLY view, Errc::misaligned unless the
  /// address is aligned for T, Errc::overlapping for a non-const T where elements share
  /// addresses (a stride of 0 over an extent above 1). `p[k]` walks memory, which is
  /// row-major index order only when is_contiguous(); otherwise index through strides().
  template <class T>
  T* data() const {
    void* p = first();
    if (DLPACKPP_UNLIKELY(!detail::element_ok<T>(dtype(), flags_, p) || !apart<T>())) {
      throw_error(detail::element_error<T>(storage_.tensor(), flags_, strides_data()));
    }
    return static_cast<T*>(p);
  }
  /// Non-throwing data<T>().
  template <class T>
  Result<T*> try_data() const {
    void* p = first();
    if (DLPACKPP_UNLIKELY(!detail::element_ok<T>(dtype(), flags_, p) || !apart<T>())) {
      return detail::element_error<T>(storage_.tensor(), flags_, strides_data());
    }
    return static_cast<T*>(p);
  }

  /// Errc::dtype_mismatch unless dtype() == expected.
  const TensorView& require_dtype(DataType expected) const& {
    return self_or_throw(dtype() == expected, [&] { return mismatch(expected); });
  }
  /// As above; a temporary view is returned by value so a kept reference cannot dangle.
  TensorView require_dtype(DataType expected) && {
    return self_or_throw(dtype() == expected, [&] { return mismatch(expected); });
  }
  /// Non-throwing require_dtype().
  DLPACKPP_FORCE_INLINE Result<TensorView> try_require_dtype(DataType expected) const {
    return self_or_error(dtype() == expected, [&] { return mismatch(expected); });
  }
  /// Errc::dtype_mismatch unless dtype() == dtype_of<T>.
  template <class T>
  const TensorView& require_dtype() const& {
    return require_dtype(dtype_of<T>);
  }
  /// As above, for a temporary view.
  template <class T>
  TensorView require_dtype() && {
    return std::move(*this).require_dtype(dtype_of<T>);
  }
  /// Non-throwing require_dtype<T>().
  template <class T>
  DLPACKPP_FORCE_INLINE Result<TensorView> try_require_dtype() const {
    return try_require_dtype(dtype_of<T>);
  }
  /// Errc::rank_mismatch unless ndim() == expected.
  const TensorView& require_ndim(int expected) const& {
    return self_or_throw(ndim() == expected, [&] { return mismatch(expected); });
  }
  /// As above, for a temporary view.
  TensorView require_ndim(int expected) && {
    return self_or_throw(ndim() == expected, [&] { return mismatch(expected); });
  }
  /// Non-throwing require_ndim().
  DLPACKPP_FORCE_INLINE Result<TensorView> try_require_ndim(int expected) const {
    return self_or_error(ndim() == expected, [&] { return mismatch(expected); });
  }
  /// Errc::rank_mismatch for another rank, Errc::shape_mismatch naming the first dimension
  /// that differs; -1 in `expected` matches any extent (below -1: Errc::invalid_argument).
  const TensorView& require_shape(IntSpan expected) const& {
    return self_or_throw(shape_fits(expected), [&] { return shape_error(expected); });
  }
  /// As above, for a temporary view.
  TensorView require_shape(IntSpan expected) && {
    return self_or_throw(shape_fits(expected), [&] { return shape_error(expected); });
  }
  /// Non-throwing require_shape().
  DLPACKPP_FORCE_INLINE Result<TensorView> try_require_shape(IntSpan expected) const {
    return self_or_error(shape_fits(expected), [&] { return shape_error(expected); });
  }
  /// Errc::device_mismatch unless device() == expected.
  const TensorView& require_device(Device expected) const& {
    return self_or_throw(device() == expected, [&] { return mismatch(expected); });
  }
  /// As above, for a temporary view.
  TensorView require_device(Device expected) && {
    return self_or_throw(device() == expected, [&] { return mismatch(expected); });
  }
  /// Non-throwing require_device().
  DLPACKPP_FORCE_INLINE Result<TensorView> try_require_device(Device expected) const {
    return self_or_error(device() == expected, [&] { return mismatch(expected); });
  }
  /// Errc::not_contiguous unless is_contiguous().
  const TensorView& require_contiguous() const& {
    return self_or_throw(is_contiguous(), [&] { return not_contiguous_error(); });
  }
  /// As above, for a temporary view.
  TensorView require_contiguous() && {
    return self_or_throw(is_contiguous(), [&] { return not_contiguous_error(); });
  }
  /// Non-throwing require_contiguous().
  DLPACKPP_FORCE_INLINE Result<TensorView> try_require_contiguous() const {
    return self_or_error(is_contiguous(), [&] { return not_contiguous_error(); });
  }
  /// Errc::read_only when the producer forbade writes, Errc::overlapping when elements
  /// share addresses (a stride of 0 over an extent above 1), naming the dimension.
  const TensorView& require_writable() const& {
    return self_or_throw(writable(), [&] { return writable_error(); });
  }
  /// As above, for a temporary view.
  TensorView require_writable() && {
    return self_or_throw(writable(), [&] { return writable_error(); });
  }
  /// Non-throwing require_writable().
  DLPACKPP_FORCE_INLINE Result<TensorView> try_require_writable() const {
    return self_or_error(writable(), [&] { return writable_error(); });
  }

  /// Row-major dense: strides are the running product of the extents to their right.
  /// Size-1 dimensions (any stride) and empty tensors never spoil it.
  bool is_contiguous() const noexcept { return facts_.contiguous; }
  /// Column-major dense (Fortran order), with the same allowances.
  bool is_fortran_contiguous() const noexcept {
    return detail::dense_in_order(shape_data(), strides_data(), ndim(), true);
  }
  /// Dense under some permutation of the dimensions: no gaps, no overlaps, positive strides.
  bool is_compact() const noexcept {
    return facts_.numel == 0 || detail::dense_in_some_order(shape_data(), strides_data(), ndim());
  }

  /// A typed, strided accessor of rank N, checked once: dtype, rank, writability and one
  /// address per element (Errc::overlapping) for a non-const T, alignment, and addressable
  /// elements (packed sub-byte types are not: Errc::unsupported_dtype).
  template <class T, int N>
  TensorAccessor<T, N> accessor() const {
    void* p = first();
    if (DLPACKPP_UNLIKELY(!(detail::accessor_ok<T, N>(dtype(), flags_, ndim(), p)) ||
                          !apart<T>())) {
      throw_error(detail::accessor_error<T, N>(storage_.tensor(), flags_, strides_data()));
    }
    return TensorAccessor<T, N>(static_cast<T*>(p), shape_data(), strides_data());
  }
  /// Non-throwing accessor<T, N>().
  template <class T, int N>
  Result<TensorAccessor<T, N>> try_accessor() const {
    void* p = first();
    if (DLPACKPP_UNLIKELY(!(detail::accessor_ok<T, N>(dtype(), flags_, ndim(), p)) ||
                          !apart<T>())) {
      return detail::accessor_error<T, N>(storage_.tensor(), flags_, strides_data());
    }
    return TensorAccessor<T, N>(static_cast<T*>(p), shape_data(), strides_data());
  }

  /// A DLTensor describing this view with its normalized strides; its shape/strides point
  /// into this view or the producer's arrays. It carries no flags: handing it on is an
  /// explicit escape from READ_ONLY.
  DLTensor to_dltensor() const& noexcept DLPACKPP_LIFETIMEBOUND;
  /// Deleted: the DLTensor could point into the dying view.
  DLTensor to_dltensor() const&& = delete;

  /// "float32[2, 3] strides [3, 1] cpu", plus " byte_offset N" and " read_only" when set.
  std::string to_string() const;
  /// Streams to_string().
  template <class Traits>
  friend std::basic_ostream<char, Traits>& operator<<(std::basic_ostream<char, Traits>& os,
                                                      const TensorView& v) {
    return os << v.to_string();
  }

 private:
  template <class DLManaged>
  friend class BasicManagedTensor;
  friend class detail::ConsumerChecks<TensorView>;

  // Validates `t`, then views it in place (`t` outlives the view) or a copy of it; the view is
  // made inside the Result, never copied into it.
  DLPACKPP_FORCE_INLINE static Result<TensorView> checked(const DLTensor& t,
                                                          const ValidateOptions& options,
                                                          bool in_place) {
    detail::TensorFacts facts;
    Result<void> ok = detail::inspect(t, options, facts);
    if (DLPACKPP_UNLIKELY(!ok)) return ok.error();
    return Result<TensorView>(detail::BuildWith{}, [&] {
      TensorView v(options.flags, facts);
      if (in_place) {
        v.storage_.view_in_place(t);
      } else {
        v.storage_.view_copy_of(t);
      }
      return v;
    });
  }

  // A view reading a managed tensor's own DLTensor in place, which outlives the view.
  DLPACKPP_FORCE_INLINE static TensorView of_managed(const DLTensor& t, std::uint64_t flags) {
    detail::TensorFacts facts;
    detail::count_layout(t, facts.numel, facts.contiguous);
    return of_managed(t, flags, facts);
  }
  // As above, for a tensor whose validation just learned `facts`: nothing is counted again.
  DLPACKPP_FORCE_INLINE static TensorView of_managed(const DLTensor& t, std::uint64_t flags,
                                                     const detail::TensorFacts& facts) {
    TensorView v(flags);
    v.storage_.view_in_place(t);
    v.facts_ = facts;
    return v;
  }
  explicit TensorView(std::uint64_t flags) noexcept : flags_(flags) {}  // then storage_, facts_
  TensorView(std::uint64_t flags, const detail::TensorFacts& facts) noexcept  // then storage_
      : flags_(flags), facts_(facts) {}

  std::size_t dims() const noexcept { return static_cast<std::size_t>(ndim()); }
  const std::int64_t* shape_data() const noexcept { return storage_.shape(); }
  const std::int64_t* strides_data() const noexcept { return storage_.strides(); }
  void* first() const noexcept { return detail::first_element(storage_.tensor()); }
  Result<std::int64_t> at(const std::int64_t* values, int d) const {
    const int n = ndim();
    const int i = d < 0 ? d + n : d;
    if (DLPACKPP_UNLIKELY(i < 0 || i >= n)) return detail::dim_error(d, n);
    return values[i];
  }

  // Writing through T gives each element its own address; a contiguous view (the common
  // case, known from validation) never reads its strides for it, and a const T costs nothing.
  template <class T>
  DLPACKPP_FORCE_INLINE bool apart() const noexcept {
    return detail::one_address_each<T>(facts_.contiguous, shape_data(), strides_data(), ndim());
  }

  detail::ViewStorage storage_;
  std::uint64_t flags_;
  detail::TensorFacts facts_;
};

inline DLTensor TensorView::to_dltensor() const& noexcept {
  DLTensor t = storage_.tensor();
  t.shape = t.ndim == 0 ? nullptr : const_cast<detail::shape_field_t>(shape_data());
  t.strides = t.ndim == 0 ? nullptr : const_cast<detail::shape_field_t>(strides_data());
  return t;
}

inline std::string TensorView::to_string() const {
  detail::TextBuilder s;
  s << dtype().to_string();
  s.list(shape_data(), dims()) << " strides ";
  s.list(strides_data(), dims()) << ' ' << device().to_string();
  if (byte_offset() != 0) s << " byte_offset " << byte_offset();
  if (read_only()) s << " read_only";
  return s.take();
}

DLPACKPP_END_NAMESPACE
