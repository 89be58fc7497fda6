// SPDX-License-Identifier: Apache-2.0
/// @file
/// TensorView: a validated, non-owning view of a DLTensor with normalized strides, layout
/// queries, consumer checks and typed access.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/layout.hpp"
#include "dlpackpp/detail/view_arrays.hpp"
#include "dlpackpp/detail/view_errors.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/int_array.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/tensor_accessor.hpp"
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

/// A borrowed view of a tensor: like std::string_view, cheap to copy and valid only while
/// the viewed memory (and, for a view of a DLTensor, its shape and strides arrays) live.
/// Every check has a throwing form and a `try_` twin returning Result. On a temporary view,
/// shape()/strides() return an IntArray and require_*() a TensorView by value, so nothing
/// handed out of an expression can dangle.
class TensorView {
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
    detail::TensorFacts facts;
    Result<void> ok = detail::inspect(tensor, options, facts);
    if (DLPACKPP_UNLIKELY(!ok)) return ok.error();
    return TensorView(tensor, options.flags, facts);
  }
  /// Non-throwing TensorView(data, dtype, shape, strides, device, byte_offset).
  static Result<TensorView> try_from(void* data, DataType dtype, IntSpan shape,
                                     IntSpan strides = {}, Device device = Device::cpu(),
                                     std::uint64_t byte_offset = 0) {
    DLTensor t;
    Result<void> parts = detail::describe_parts(data, dtype, shape, strides, device, byte_offset, t);
    if (!parts) return parts.error();
    Result<TensorView> view = try_from(t);
    if (view) view->arrays_.copy(view->shape_data(), view->strides_data(), view->ndim_);
    return view;
  }
  /// A view without validation, for tensors the caller vouches for (already validated, or
  /// from a trusted producer). Allocates only for NULL strides above
  /// DLPACKPP_VIEW_INLINE_NDIM dimensions.
  static TensorView unchecked(const DLTensor& tensor, std::uint64_t flags = 0) {
    detail::TensorFacts facts;
    detail::count_and_density(tensor.shape, tensor.strides, static_cast<int>(tensor.ndim),
                              facts.numel, facts.contiguous);
    return TensorView(tensor, flags, facts);
  }

  /// Number of dimensions.
  int ndim() const noexcept { return ndim_; }
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
  std::int64_t numel() const noexcept { return numel_; }
  /// Bytes of the elements themselves (packed or padded sub-byte aware), not the span of a
  /// strided view.
  std::int64_t nbytes() const noexcept { return detail::nbytes_of_valid(dtype_, numel_, flags_); }
  /// Element type.
  DataType dtype() const noexcept { return dtype_; }
  /// Where the memory lives.
  Device device() const noexcept { return device_; }
  /// Offset of the first element from the producer's data pointer.
  std::uint64_t byte_offset() const noexcept { return byte_offset_; }
  /// The managed tensor's flags (ValidateOptions::flags for a bare DLTensor).
  std::uint64_t flags() const noexcept { return flags_; }
  /// True when the producer forbade writes (READ_ONLY).
  bool read_only() const noexcept { return (flags_ & flag::read_only) != 0; }
  /// True when sub-byte elements are padded to a byte each.
  bool is_subbyte_padded() const noexcept { return (flags_ & flag::is_subbyte_type_padded) != 0; }

  /// The first element (data + byte_offset; NULL when data is), for reading.
  const void* const_data() const noexcept { return first(); }
  /// The first element for writing: Errc::read_only on a READ_ONLY view (read through
  /// const_data() or a const T instead).
  void* data() const {
    require_writable();
    return first();
  }
  /// The first element as T*: Errc::dtype_mismatch unless dtype_of<T> == dtype(),
  /// Errc::read_only for a non-const T on a READ_ONLY view, Errc::misaligned unless the
  /// address is aligned for T.
  template <class T>
  T* data() const {
    return try_data<T>().value();
  }
  /// Non-throwing data<T>().
  template <class T>
  Result<T*> try_data() const {
    Result<void> ok = element_problem<T>();
    if (DLPACKPP_UNLIKELY(!ok)) return ok.error();
    return static_cast<T*>(first());
  }

  /// Errc::dtype_mismatch unless dtype() == expected.
  const TensorView& require_dtype(DataType expected) const& { return ok(dtype_problem(expected)); }
  /// As above; a temporary view is returned by value so a kept reference cannot dangle.
  TensorView require_dtype(DataType expected) && { return ok(dtype_problem(expected)); }
  /// Non-throwing require_dtype().
  Result<TensorView> try_require_dtype(DataType expected) const { return or_error(dtype_problem(expected)); }
  /// Errc::dtype_mismatch unless dtype() == dtype_of<T>.
  template <class T>
  const TensorView& require_dtype() const& { return require_dtype(dtype_of<T>); }
  /// As above, for a temporary view.
  template <class T>
  TensorView require_dtype() && { return std::move(*this).require_dtype(dtype_of<T>); }
  /// Non-throwing require_dtype<T>().
  template <class T>
  Result<TensorView> try_require_dtype() const { return try_require_dtype(dtype_of<T>); }
  /// Errc::rank_mismatch unless ndim() == expected.
  const TensorView& require_ndim(int expected) const& { return ok(ndim_problem(expected)); }
  /// As above, for a temporary view.
  TensorView require_ndim(int expected) && { return ok(ndim_problem(expected)); }
  /// Non-throwing require_ndim().
  Result<TensorView> try_require_ndim(int expected) const { return or_error(ndim_problem(expected)); }
  /// Errc::rank_mismatch for another rank, Errc::shape_mismatch naming the first dimension
  /// that differs; -1 in `expected` matches any extent (below -1: Errc::invalid_argument).
  const TensorView& require_shape(IntSpan expected) const& { return ok(shape_problem(expected)); }
  /// As above, for a temporary view.
  TensorView require_shape(IntSpan expected) && { return ok(shape_problem(expected)); }
  /// Non-throwing require_shape().
  Result<TensorView> try_require_shape(IntSpan expected) const { return or_error(shape_problem(expected)); }
  /// Errc::device_mismatch unless device() == expected.
  const TensorView& require_device(Device expected) const& { return ok(device_problem(expected)); }
  /// As above, for a temporary view.
  TensorView require_device(Device expected) && { return ok(device_problem(expected)); }
  /// Non-throwing require_device().
  Result<TensorView> try_require_device(Device expected) const { return or_error(device_problem(expected)); }
  /// Errc::not_contiguous unless is_contiguous().
  const TensorView& require_contiguous() const& { return ok(contiguous_problem()); }
  /// As above, for a temporary view.
  TensorView require_contiguous() && { return ok(contiguous_problem()); }
  /// Non-throwing require_contiguous().
  Result<TensorView> try_require_contiguous() const { return or_error(contiguous_problem()); }
  /// Errc::read_only when the producer forbade writes.
  const TensorView& require_writable() const& { return ok(writable_problem()); }
  /// As above, for a temporary view.
  TensorView require_writable() && { return ok(writable_problem()); }
  /// Non-throwing require_writable().
  Result<TensorView> try_require_writable() const { return or_error(writable_problem()); }

  /// Row-major dense: strides are the running product of the extents to their right.
  /// Size-1 dimensions (any stride) and empty tensors never spoil it.
  bool is_contiguous() const noexcept { return contiguous_; }
  /// Column-major dense (Fortran order), with the same allowances.
  bool is_fortran_contiguous() const noexcept {
    return detail::dense_in_order(shape_data(), strides_data(), ndim_, true);
  }
  /// Dense under some permutation of the dimensions: no gaps, no overlaps, positive strides.
  bool is_compact() const noexcept;

  /// A typed, strided accessor of rank N, checked once: dtype, rank, writability for a
  /// non-const T, alignment, and addressable elements (packed sub-byte types are not:
  /// Errc::unsupported_dtype).
  template <class T, int N>
  TensorAccessor<T, N> accessor() const {
    return try_accessor<T, N>().value();
  }
  /// Non-throwing accessor<T, N>().
  template <class T, int N>
  Result<TensorAccessor<T, N>> try_accessor() const {
    Result<void> ok = detail::accessor_problem<T, N>(dtype_, flags_, ndim_, first());
    if (DLPACKPP_UNLIKELY(!ok)) return ok.error();
    return TensorAccessor<T, N>(static_cast<T*>(first()), shape_data(), strides_data());
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

  TensorView(const DLTensor& t, std::uint64_t flags, const detail::TensorFacts& facts)
      : data_(t.data),
        byte_offset_(t.byte_offset), flags_(flags), numel_(facts.numel),
        ndim_(static_cast<int>(t.ndim)), dtype_(t.dtype), device_(t.device),
        contiguous_(facts.contiguous) {
    arrays_.borrow(t.shape, t.strides, ndim_);
  }

  std::size_t dims() const noexcept { return static_cast<std::size_t>(ndim_); }
  const std::int64_t* shape_data() const noexcept { return arrays_.shape(); }
  const std::int64_t* strides_data() const noexcept { return arrays_.strides(); }
  void* first() const noexcept {
    return data_ == nullptr ? nullptr : static_cast<char*>(data_) + byte_offset_;
  }
  Result<std::int64_t> at(const std::int64_t* values, int d) const {
    const int i = d < 0 ? d + ndim_ : d;
    if (DLPACKPP_UNLIKELY(i < 0 || i >= ndim_)) return detail::dim_error(d, ndim_);
    return values[i];
  }

  // Each require_* is one *_problem() check, then ok() (throw or pass) or or_error().
  const TensorView& ok(Result<void>&& problem) const& {
    problem.value();
    return *this;
  }
  TensorView ok(Result<void>&& problem) && {
    problem.value();
    return std::move(*this);
  }
  Result<TensorView> or_error(Result<void>&& problem) const {
    if (DLPACKPP_UNLIKELY(!problem)) return problem.error();
    return *this;
  }
  Result<void> dtype_problem(DataType expected) const {
    if (DLPACKPP_UNLIKELY(dtype_ != expected)) return detail::dtype_error(dtype_, expected, "required ");
    return {};
  }
  Result<void> ndim_problem(int expected) const {
    if (DLPACKPP_UNLIKELY(ndim_ != expected)) return detail::rank_error(ndim_, expected, "required ");
    return {};
  }
  Result<void> shape_problem(IntSpan expected) const {
    return detail::shape_problem(shape(), expected);
  }
  Result<void> device_problem(Device expected) const {
    if (DLPACKPP_UNLIKELY(device_ != expected)) return detail::device_error(device_, expected);
    return {};
  }
  Result<void> contiguous_problem() const {
    if (DLPACKPP_UNLIKELY(!contiguous_)) {
      return detail::make_error(Errc::not_contiguous, "tensor ", to_string(),
                                " is not row-major contiguous");
    }
    return {};
  }
  Result<void> writable_problem() const {
    if (DLPACKPP_UNLIKELY(read_only())) return detail::read_only_error();
    return {};
  }
  template <class T>
  Result<void> element_problem() const {
    return detail::element_problem<T>(dtype_, flags_, first());
  }

  void* data_;
  detail::ViewArrays arrays_;
  std::uint64_t byte_offset_;
  std::uint64_t flags_;
  std::int64_t numel_;
  int ndim_;
  DataType dtype_;
  Device device_;
  bool contiguous_;
};

inline bool TensorView::is_compact() const noexcept {
  const std::int64_t* shape = shape_data();
  const std::int64_t* strides = strides_data();
  if (numel_ == 0) return true;
  int remaining = 0;
  for (int d = 0; d < ndim_; ++d) remaining += shape[d] != 1 ? 1 : 0;
  // In a dense layout each stride is the product of the smaller ones' extents, so strides
  // grow strictly and can be matched in increasing order without sorting (or allocating).
  std::int64_t expected = 1;
  for (; remaining > 0; --remaining) {
    int match = -1;
    for (int d = 0; d < ndim_; ++d) {
      if (shape[d] != 1 && strides[d] == expected) {
        if (match != -1) return false;  // two dimensions share a stride: overlap
        match = d;
      }
    }
    if (match == -1) return false;
    expected *= shape[match];
  }
  return true;
}

inline DLTensor TensorView::to_dltensor() const& noexcept {
  DLTensor t{};
  t.data = data_;
  t.device = device_;
  t.ndim = static_cast<decltype(t.ndim)>(ndim_);
  t.dtype = dtype_;
  t.shape = ndim_ == 0 ? nullptr : const_cast<detail::shape_field_t>(shape_data());
  t.strides = ndim_ == 0 ? nullptr : const_cast<detail::shape_field_t>(strides_data());
  t.byte_offset = byte_offset_;
  return t;
}

inline std::string TensorView::to_string() const {
  detail::TextBuilder s;
  const auto list = [&s](IntSpan values) {
    s << '[';
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i != 0) s << ", ";
      s << values[i];
    }
    s << ']';
  };
  s << dtype_.to_string();
  list(shape());
  s << " strides ";
  list(strides());
  s << ' ' << device_.to_string();
  if (byte_offset_ != 0) s << " byte_offset " << byte_offset_;
  if (read_only()) s << " read_only";
  return s.take();
}

DLPACKPP_END_NAMESPACE
