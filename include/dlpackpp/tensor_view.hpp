// SPDX-License-Identifier: Apache-2.0
/// @file
/// TensorView: a validated, non-owning view of a DLTensor with normalized strides, layout
/// queries, consumer checks and typed access.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/shared_array.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/tensor_accessor.hpp"
#include "dlpackpp/validate.hpp"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <type_traits>

#ifndef DLPACKPP_VIEW_INLINE_NDIM
/// Ranks up to this get NULL strides normalized inside the view itself, with no allocation.
#define DLPACKPP_VIEW_INLINE_NDIM 8
#endif

namespace dlpackpp {
inline namespace v0 {

namespace detail {
/// Tag for views of tensors that were validated already (by adopt) or are vouched for.
struct trusted_t {
  explicit trusted_t() = default;
};
inline constexpr trusted_t trusted{};
}  // namespace detail

/// A borrowed view of a tensor: like std::string_view, cheap to copy and valid only while
/// the viewed memory (and, for a view of a DLTensor, its shape and strides arrays) live.
class TensorView {
 public:
  /// Views a DLTensor after validate(); throws Error with the first problem.
  explicit TensorView(const DLTensor& tensor, const ValidateOptions& options = {}) {
    detail::TensorFacts facts;
    detail::inspect(tensor, options, facts).value();
    init(tensor, options.flags, facts.numel, facts.nbytes);
  }

  /// Views raw parts. The view keeps its own copy of `shape` and `strides` (empty meaning
  /// compact row-major), so a braced list like `{3, 4}` is fine; `data` must outlive it.
  /// Throws Error when the parts do not form a valid tensor.
  TensorView(void* data, DataType dtype, IntSpan shape, IntSpan strides = {},
             Device device = Device::cpu(), std::uint64_t byte_offset = 0)
      : TensorView(try_from(data, dtype, shape, strides, device, byte_offset).value()) {}

  /// A view of a tensor that was validated already (e.g. by BasicManagedTensor::adopt).
  /// Ranks above DLPACKPP_VIEW_INLINE_NDIM with NULL strides allocate (std::bad_alloc).
  TensorView(detail::trusted_t, const DLTensor& tensor, std::uint64_t flags) {
    init(tensor, flags, detail::numel_of_valid(tensor), detail::nbytes_of_valid(tensor, flags));
  }

  /// Non-throwing TensorView(const DLTensor&, options).
  static Result<TensorView> try_from(const DLTensor& tensor, const ValidateOptions& options = {}) {
    detail::TensorFacts facts;
    Result<void> ok = detail::inspect(tensor, options, facts);
    if (!ok) return ok.error();
    return TensorView(facts, tensor, options.flags);
  }

  /// Non-throwing TensorView(data, dtype, shape, strides, device, byte_offset).
  static Result<TensorView> try_from(void* data, DataType dtype, IntSpan shape,
                                     IntSpan strides = {}, Device device = Device::cpu(),
                                     std::uint64_t byte_offset = 0) {
    DLTensor t;
    Result<void> parts = detail::describe_parts(data, dtype, shape, strides, device, byte_offset, t);
    if (!parts) return parts.error();
    Result<TensorView> view = try_from(t);
    if (view) view->own_arrays();
    return view;
  }

  /// Number of dimensions.
  int ndim() const noexcept { return ndim_; }
  /// The extents, ndim() values.
  IntSpan shape() const noexcept { return {shape_data(), static_cast<std::size_t>(ndim_)}; }
  /// The strides in elements, ndim() values: the producer's, or compact row-major when it
  /// sent NULL.
  IntSpan strides() const noexcept { return {strides_data(), static_cast<std::size_t>(ndim_)}; }
  /// Extent of dimension d; negative d counts from the end. Errc::out_of_range otherwise.
  std::int64_t shape(int d) const { return shape_data()[normalize_dim(d)]; }
  /// Stride of dimension d; negative d counts from the end. Errc::out_of_range otherwise.
  std::int64_t stride(int d) const { return strides_data()[normalize_dim(d)]; }
  /// Number of elements (1 for a zero-dim tensor).
  std::int64_t numel() const noexcept { return numel_; }
  /// Bytes of the elements themselves (packed or padded sub-byte aware), not the span of a
  /// strided view.
  std::int64_t nbytes() const noexcept { return nbytes_; }
  /// Element type.
  DataType dtype() const noexcept { return dtype_; }
  /// Where the memory lives.
  Device device() const noexcept { return device_; }
  /// Offset of the first element from the producer's data pointer.
  std::uint64_t byte_offset() const noexcept { return byte_offset_; }
  /// The managed tensor's flags (0 for a bare DLTensor).
  std::uint64_t flags() const noexcept { return flags_; }
  /// True when the producer forbade writes (READ_ONLY).
  bool read_only() const noexcept { return (flags_ & flag::read_only) != 0; }
  /// True when sub-byte elements are padded to a byte each.
  bool is_subbyte_padded() const noexcept { return (flags_ & flag::is_subbyte_type_padded) != 0; }

  /// The first element: the producer's data pointer plus byte_offset (NULL when data is).
  void* data() const noexcept {
    return data_ == nullptr ? nullptr : static_cast<char*>(data_) + byte_offset_;
  }
  /// The first element as T*: Errc::dtype_mismatch unless dtype_of<T> == dtype(), and
  /// Errc::read_only for a non-const T on a read-only tensor.
  template <class T>
  T* data() const {
    check_element<T>();
    return static_cast<T*>(data());
  }

  /// Errc::dtype_mismatch unless dtype() == expected.
  const TensorView& require_dtype(DataType expected) const {
    if (DLPACKPP_UNLIKELY(dtype_ != expected)) {
      detail::fail(Errc::dtype_mismatch, "dtype is ", dtype_.to_string(), ", required ",
                   expected.to_string());
    }
    return *this;
  }
  /// Errc::dtype_mismatch unless dtype() == dtype_of<T>.
  template <class T>
  const TensorView& require_dtype() const {
    return require_dtype(dtype_of<T>);
  }
  /// Errc::rank_mismatch unless ndim() == expected.
  const TensorView& require_ndim(int expected) const {
    if (DLPACKPP_UNLIKELY(ndim_ != expected)) {
      detail::fail(Errc::rank_mismatch, "ndim is ", ndim_, ", required ", expected);
    }
    return *this;
  }
  /// Errc::rank_mismatch for a different rank, Errc::invalid_argument naming the first
  /// dimension that differs; -1 in `expected` matches any extent.
  const TensorView& require_shape(IntSpan expected) const {
    const std::int64_t* shape = shape_data();
    if (DLPACKPP_UNLIKELY(expected.size() != static_cast<std::size_t>(ndim_))) {
      detail::fail(Errc::rank_mismatch, "ndim is ", ndim_, ", required shape has ",
                   expected.size(), " dimensions");
    }
    for (int d = 0; d < ndim_; ++d) {
      const std::int64_t want = expected[static_cast<std::size_t>(d)];
      if (want < -1) {
        detail::fail(Errc::invalid_argument, "required shape[", d, "] is ", want,
                     ", must be >= 0 or -1 (any)");
      }
      if (DLPACKPP_UNLIKELY(want != -1 && want != shape[d])) {
        detail::fail(Errc::invalid_argument, "shape[", d, "] is ", shape[d], ", required ", want);
      }
    }
    return *this;
  }
  /// Errc::device_mismatch unless device() == expected.
  const TensorView& require_device(Device expected) const {
    if (DLPACKPP_UNLIKELY(device_ != expected)) {
      detail::fail(Errc::device_mismatch, "device is ", device_.to_string(), ", required ",
                   expected.to_string());
    }
    return *this;
  }
  /// Errc::not_contiguous unless is_contiguous().
  const TensorView& require_contiguous() const {
    if (DLPACKPP_UNLIKELY(!is_contiguous())) {
      detail::fail(Errc::not_contiguous, "tensor ", to_string(), " is not row-major contiguous");
    }
    return *this;
  }
  /// Errc::read_only when the producer forbade writes.
  const TensorView& require_writable() const {
    if (DLPACKPP_UNLIKELY(read_only())) {
      detail::fail(Errc::read_only, "tensor is READ_ONLY, a writable one is required");
    }
    return *this;
  }

  /// Row-major dense: strides are the running product of the extents to their right.
  /// Size-1 dimensions (any stride) and empty tensors never spoil it.
  bool is_contiguous() const noexcept { return is_dense_in_order(false); }
  /// Column-major dense (Fortran order), with the same allowances.
  bool is_fortran_contiguous() const noexcept { return is_dense_in_order(true); }
  /// Dense under some permutation of the dimensions: no gaps, no overlaps, positive strides.
  bool is_compact() const noexcept {
    const std::int64_t* shape = shape_data();
    if (numel_ == 0) return true;
    const std::int64_t* strides = strides_data();
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

  /// A typed, strided accessor of rank N. Checks once: dtype (Errc::dtype_mismatch), rank
  /// (Errc::rank_mismatch), writability for non-const T (Errc::read_only), and that elements
  /// are addressable (packed sub-byte types are not: Errc::unsupported_dtype).
  template <class T, int N>
  TensorAccessor<T, N> accessor() const {
    check_element<T>();
    if (DLPACKPP_UNLIKELY(ndim_ != N)) {
      detail::fail(Errc::rank_mismatch, "ndim is ", ndim_, ", accessor rank is ", N);
    }
    if (DLPACKPP_UNLIKELY(dtype_.is_subbyte() && !is_subbyte_padded())) {
      detail::fail(Errc::unsupported_dtype, "dtype ", dtype_.to_string(),
                   " is packed below one byte per element; elements are not addressable");
    }
    return TensorAccessor<T, N>(static_cast<T*>(data()), shape_data(), strides_data());
  }

  /// A DLTensor describing this view with its normalized strides. Its shape/strides point
  /// into this view object or the producer's arrays: valid while both live.
  DLTensor to_dltensor() const noexcept {
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

  /// "float32[2, 3] strides [3, 1] cpu", plus " byte_offset N" and " read_only" when set.
  std::string to_string() const {
    detail::TextBuilder s;
    s << dtype_.to_string();
    append_list(s, shape());
    s << " strides ";
    append_list(s, strides());
    s << ' ' << device_.to_string();
    if (byte_offset_ != 0) s << " byte_offset " << byte_offset_;
    if (read_only()) s << " read_only";
    return s.take();
  }


  /// Streams to_string().
  template <class Traits>
  friend std::basic_ostream<char, Traits>& operator<<(std::basic_ostream<char, Traits>& os,
                                                      const TensorView& v) {
    return os << v.to_string();
  }

 private:
  TensorView(const detail::TensorFacts& facts, const DLTensor& tensor, std::uint64_t flags) {
    init(tensor, flags, facts.numel, facts.nbytes);
  }

  void init(const DLTensor& t, std::uint64_t flags, std::int64_t numel, std::int64_t nbytes) {
    data_ = t.data;
    byte_offset_ = t.byte_offset;
    flags_ = flags;
    numel_ = numel;
    nbytes_ = nbytes;
    ndim_ = static_cast<int>(t.ndim);
    dtype_ = t.dtype;
    device_ = t.device;
    shape_ = t.shape;
    strides_ = t.strides;
    if (strides_ == nullptr && ndim_ > 0) {
      std::int64_t* compact = inline_strides_;
      if (ndim_ > DLPACKPP_VIEW_INLINE_NDIM) {
        // Rare enough to allocate; the block is shared so copies of the view stay valid.
        heap_ = detail::SharedArray<std::int64_t>(static_cast<std::size_t>(ndim_));
        compact = heap_.data();
        strides_ = compact;
      }
      // Validation proved every stride fits; the product through shape[0] need not, so it
      // is never formed.
      compact[ndim_ - 1] = 1;
      for (int d = ndim_ - 1; d > 0; --d) {
        compact[d - 1] = compact[d] * (shape_[d] == 0 ? 1 : shape_[d]);
      }
    }
  }

  // NULL means "kept in the inline array": the view never points into itself, so copies
  // stay valid without a user-defined copy constructor.
  const std::int64_t* shape_data() const noexcept {
    return shape_ != nullptr ? shape_ : inline_shape_;
  }
  const std::int64_t* strides_data() const noexcept {
    return strides_ != nullptr ? strides_ : inline_strides_;
  }

  // Views from raw parts keep their own copies of shape and strides, so a braced list such as
  // TensorView(p, dtype, {3, 4}) cannot leave the view dangling.
  void own_arrays() {
    const auto n = static_cast<std::size_t>(ndim_);
    const std::int64_t* shape = shape_data();
    const std::int64_t* strides = strides_data();
    if (ndim_ <= DLPACKPP_VIEW_INLINE_NDIM) {
      for (std::size_t d = 0; d < n; ++d) {
        inline_shape_[d] = shape[d];
        inline_strides_[d] = strides[d];
      }
      shape_ = nullptr;
      strides_ = nullptr;
      heap_ = detail::SharedArray<std::int64_t>();
    } else {
      detail::SharedArray<std::int64_t> arrays(2 * n);
      std::int64_t* out = arrays.data();
      for (std::size_t d = 0; d < n; ++d) {
        out[d] = shape[d];
        out[n + d] = strides[d];
      }
      shape_ = out;
      strides_ = out + n;
      heap_ = std::move(arrays);
    }
  }

  std::size_t normalize_dim(int d) const {
    const int i = d < 0 ? d + ndim_ : d;
    if (DLPACKPP_UNLIKELY(i < 0 || i >= ndim_)) {
      detail::fail(Errc::out_of_range, "dimension ", d, " is out of range for ndim ", ndim_);
    }
    return static_cast<std::size_t>(i);
  }

  bool is_dense_in_order(bool fortran) const noexcept {
    const std::int64_t* shape = shape_data();
    if (numel_ == 0) return true;
    const std::int64_t* strides = strides_data();
    std::int64_t expected = 1;
    for (int k = 0; k < ndim_; ++k) {
      const int d = fortran ? k : ndim_ - 1 - k;
      if (shape[d] == 1) continue;
      if (strides[d] != expected) return false;
      expected *= shape[d];
    }
    return true;
  }

  template <class T>
  void check_element() const {
    if (DLPACKPP_UNLIKELY(dtype_of<T> != dtype_)) {
      detail::fail(Errc::dtype_mismatch, "dtype is ", dtype_.to_string(), ", accessed as ",
                   dtype_of<T>.to_string());
    }
    if (!std::is_const<T>::value && DLPACKPP_UNLIKELY(read_only())) {
      detail::fail(Errc::read_only, "tensor is READ_ONLY; access it through a const type");
    }
  }

  static void append_list(detail::TextBuilder& s, IntSpan values) {
    s << '[';
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i != 0) s << ", ";
      s << values[i];
    }
    s << ']';
  }


  void* data_ = nullptr;
  const std::int64_t* shape_ = nullptr;
  const std::int64_t* strides_ = nullptr;
  // Shared so copies of the view stay valid: compact strides (or owned shape + strides) for
  // ranks above DLPACKPP_VIEW_INLINE_NDIM.
  detail::SharedArray<std::int64_t> heap_;
  std::uint64_t byte_offset_ = 0;
  std::uint64_t flags_ = 0;
  std::int64_t numel_ = 1;
  std::int64_t nbytes_ = 0;
  int ndim_ = 0;
  DataType dtype_;
  Device device_;
  std::int64_t inline_shape_[DLPACKPP_VIEW_INLINE_NDIM > 0 ? DLPACKPP_VIEW_INLINE_NDIM : 1] = {};
  std::int64_t inline_strides_[DLPACKPP_VIEW_INLINE_NDIM > 0 ? DLPACKPP_VIEW_INLINE_NDIM : 1] = {};
};

}  // namespace v0
}  // namespace dlpackpp
