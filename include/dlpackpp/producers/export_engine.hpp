// SPDX-License-Identifier: Apache-2.0
/// @file
/// The export engine behind every producer (producers.hpp, cuda.hpp, mdspan.hpp): one heap
/// block per export holding the C struct, the owner, shape and strides; the quick one-pass
/// build for the common export, and the catalogue path that builds or refuses the rest with
/// validate()'s own error. Consumes the owner only on success.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/int_span.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/validate.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

namespace detail {

template <class Handle>
struct is_managed_handle : std::false_type {};
template <class M>
struct is_managed_handle<BasicManagedTensor<M>> : std::true_type {};

/// DLPackVersion for a versioned struct, for sizing fill_managed()'s check.
template <class M, class = void>
struct version_field {
  using type = char;
};
template <class M>
struct version_field<M, std::void_t<decltype(M{}.version)>> {
  using type = decltype(M{}.version);
};
template <class M>
using DLPackVersionOrNothing = typename version_field<M>::type;

/// The struct a handle owns.
template <class Handle>
using managed_of = typename Handle::managed_type;

/// One heap block per export: the C struct, the owner, then shape and strides.
template <class M, class Owner>
struct ExportBlock {
  M managed;  // left uninitialized here: make_export() writes every field
  Owner owner;

  // Constrained so it never stands in for the (unused) copy and move constructors.
  template <class O, class = std::enable_if_t<!std::is_same<std::decay_t<O>, ExportBlock>::value>>
  explicit ExportBlock(O&& o) : owner(std::forward<O>(o)) {}

  static constexpr std::size_t alignment = alignof(ExportBlock) > alignof(std::int64_t)
                                               ? alignof(ExportBlock)
                                               : alignof(std::int64_t);
  // Shape and strides start at the first int64-aligned byte after the block.
  static constexpr std::size_t arrays_offset = (sizeof(ExportBlock) + alignof(std::int64_t) - 1) /
                                               alignof(std::int64_t) * alignof(std::int64_t);
  static constexpr bool over_aligned = alignment > __STDCPP_DEFAULT_NEW_ALIGNMENT__;

  static void* allocate(std::size_t bytes) {
    if constexpr (over_aligned) {
      return ::operator new (bytes, std::align_val_t{alignment});
    } else {
      return ::operator new(bytes);
    }
  }
  static void deallocate(void* raw) noexcept {
    if constexpr (over_aligned) {
      ::operator delete (raw, std::align_val_t{alignment});
    } else {
      ::operator delete(raw);
    }
  }

  static void deleter(M* self) noexcept {
    auto* block = static_cast<ExportBlock*>(self->manager_ctx);
    block->~ExportBlock();  // destroys the owner, which frees the buffer
    deallocate(block);
  }

  /// Room for the block and `ndim` extents and strides, uninitialized.
  static void* allocate_for(std::size_t ndim) {
    return allocate(arrays_offset + 2 * ndim * sizeof(std::int64_t));
  }
  /// Where allocate_for() put the extents (the strides follow them).
  static std::int64_t* arrays_of(void* raw) noexcept {
    return reinterpret_cast<std::int64_t*>(static_cast<char*>(raw) + arrays_offset);
  }
};

/// A shape with more elements than the memory behind it holds.
DLPACKPP_COLD inline Error capacity_error(std::int64_t numel, std::int64_t capacity) {
  return make_error(Errc::invalid_argument, "shape has ", numel, " elements but the memory holds ",
                    capacity);
}

/// Every field of `m`, written one by one (the block is not zero-filled first). A header
/// whose struct has fields beyond DLPack's (none does) gets the rest zeroed.
template <class M>
DLPACKPP_FORCE_INLINE void fill_managed(M& m, const DLTensor& t, void* ctx, void (*deleter)(M*),
                                        std::uint64_t flags) noexcept {
  constexpr bool versioned =
      is_managed_handle<BasicManagedTensor<M>>::value && BasicManagedTensor<M>::is_versioned;
  constexpr std::size_t known_fields =
      sizeof(DLTensor) + sizeof(void*) + sizeof(deleter) +
      (versioned ? sizeof(DLPackVersionOrNothing<M>) + sizeof(std::uint64_t) : 0);
  if constexpr (sizeof(M) != known_fields) std::memset(static_cast<void*>(&m), 0, sizeof(M));
  m.dl_tensor = t;
  m.manager_ctx = ctx;
  m.deleter = deleter;
  if constexpr (versioned) {
    m.version.major = DLPACKPP_DLPACK_MAJOR;
    m.version.minor = DLPACKPP_DLPACK_MINOR;
    m.flags = flags;
  } else {
    static_cast<void>(flags);
  }
}

/// Moves `owner` into the block at `raw` (freeing it if that throws) and completes the
/// struct around `t`, whose shape and strides already point into the block.
template <class Block, class Owner>
DLPACKPP_FORCE_INLINE auto* finish_export(void* raw, const DLTensor& t, Owner&& owner,
                                          std::uint64_t flags) {
  struct FreeOnThrow {
    void* raw;
    ~FreeOnThrow() {
      if (raw != nullptr) Block::deallocate(raw);
    }
  } guard{raw};
  auto* block = ::new (raw) Block(std::forward<Owner>(owner));
  guard.raw = nullptr;
  fill_managed(block->managed, t, block, &Block::deleter, flags);
  return &block->managed;
}

/// The common export built and checked in one pass over the shape: compact strides (none
/// given), a whole-byte dtype, a known device, no extent zero or negative, nothing
/// overflowing. Checks what it can before allocating, so constant dtypes and devices cost
/// nothing. Returns the finished struct, or NULL with nothing allocated and `owner`
/// untouched for anything else, valid or not, which make_export() then builds or refuses
/// with the catalogue's error.
template <class M, class Owner>
DLPACKPP_FORCE_INLINE M* quick_export(void* data, DataType dtype, IntSpan shape, IntSpan strides,
                                      Device device, Owner&& owner, std::uint64_t flags,
                                      std::int64_t capacity, std::uint64_t byte_offset) {
  using Block = ExportBlock<M, std::decay_t<Owner>>;
  constexpr bool versioned = BasicManagedTensor<M>::is_versioned;
  const std::size_t n = shape.size();
  if (DLPACKPP_UNLIKELY(n > static_cast<std::size_t>(INT32_MAX)) || !strides.empty() ||
      (!versioned && flags != 0) || DLPACKPP_UNLIKELY(!quick_kind(dtype, device, flags)) ||
      DLPACKPP_UNLIKELY(data == nullptr)) {
    return nullptr;
  }
  void* raw = Block::allocate_for(n);
  std::int64_t* arrays = Block::arrays_of(raw);
  const int ndim = static_cast<int>(n);
  const std::int64_t* from = shape.data();
  PositiveCount count;
  // Inside out, each compact stride is the count so far.
  const bool counted = each_dim_inside_out(ndim, [&](int d) DLPACKPP_LAMBDA_FORCE_INLINE {
    arrays[d] = from[d];
    arrays[ndim + d] = count.numel;
    return count.add(from[d]);
  });
  if (DLPACKPP_UNLIKELY(!counted || !count.positive() ||
                        (capacity >= 0 && count.numel > capacity) ||
                        !bytes_fit(data, byte_offset, dtype, count.numel))) {
    Block::deallocate(raw);
    return nullptr;
  }
  DLTensor t;
  t.data = data;
  t.device = device;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = ndim > 0 ? arrays : nullptr;
  t.strides = ndim > 0 ? arrays + ndim : nullptr;
  t.byte_offset = byte_offset;
  return finish_export<Block>(raw, t, std::forward<Owner>(owner), flags);
}

/// Builds and validates any export, consuming `owner` only on success: what quick_export()
/// declined, so it may allocate and fail. `capacity`, when not negative, is how many
/// elements the memory holds: a shape with more is refused.
template <class Handle, class Owner>
Result<Handle> export_slowly(void* data, DataType dtype, IntSpan shape, IntSpan strides,
                             Device device, Owner&& owner, std::uint64_t flags,
                             std::int64_t capacity, std::uint64_t byte_offset) {
  static_assert(is_managed_handle<Handle>::value,
                "the first template argument must be ManagedTensor or LegacyManagedTensor");
  static_assert(std::is_nothrow_destructible<std::decay_t<Owner>>::value,
                "the owner's destructor must not throw");
  using Block = ExportBlock<managed_of<Handle>, std::decay_t<Owner>>;
  if constexpr (!Handle::is_versioned) {
    if (flags != 0) {
      return make_error(flags & flag::read_only ? Errc::read_only : Errc::invalid_flags,
                        "flags is ", flags, ", but a legacy DLManagedTensor carries no flags");
    }
  }
  // Without caller strides this validates exactly what the export will hold: validate()
  // checks that the compact strides derived from the shape fit in int64, and they are then
  // written straight into the block. A temporary array would cost an allocation for
  // ndim > DLPACKPP_VIEW_INLINE_NDIM, breaking "one allocation per export".
  DLTensor t{};  // describe_parts() may stop before writing every field
  Result<void> parts = describe_parts(data, dtype, shape, strides, device, byte_offset, t);
  if (DLPACKPP_UNLIKELY(!parts)) return parts.error();
  ValidateOptions options;
  options.flags = flags;
  // quick_export() declined these parts, or they carry strides it does not take: the
  // catalogue decides, walked once (the quick check would only decline them again or repeat
  // for given strides what the catalogue proves).
  TensorFacts facts;
  Result<void> ok = diagnose(t, options, facts);
  if (DLPACKPP_UNLIKELY(!ok)) return ok.error();
  if (DLPACKPP_UNLIKELY(capacity >= 0 && facts.numel > capacity)) {
    return capacity_error(facts.numel, capacity);
  }

  // From here on the parts are trusted: copied and completed without a second check.
  const auto n = static_cast<int>(shape.size());
  void* raw = Block::allocate_for(shape.size());
  std::int64_t* arrays = Block::arrays_of(raw);
  const std::int64_t* from = shape.data();
  if (strides.empty()) {
    // Exports always carry strides: DLPack >= 1.2 requires them, so consumers need not
    // derive them. Validation proved they fit; they are written as the shape is copied.
    static_cast<void>(compact_strides(from, n, arrays + n, arrays));
  } else {
    const std::int64_t* from_strides = strides.data();
    each_dim_inside_out(n, [&](int d) DLPACKPP_LAMBDA_FORCE_INLINE {
      arrays[d] = from[d];
      arrays[n + d] = from_strides[d];
      return true;
    });
  }
  t.shape = n > 0 ? arrays : nullptr;
  t.strides = n > 0 ? arrays + n : nullptr;
  return Handle::adopt_unchecked(finish_export<Block>(raw, t, std::forward<Owner>(owner), flags));
}

/// Builds and validates the export, consuming `owner` only on success; the arguments are
/// export_slowly()'s.
template <class Handle, class Owner>
DLPACKPP_FORCE_INLINE Result<Handle> make_export(void* data, DataType dtype, IntSpan shape,
                                                 IntSpan strides, Device device, Owner&& owner,
                                                 std::uint64_t flags, std::int64_t capacity = -1,
                                                 std::uint64_t byte_offset = 0) {
  // quick_export() leaves `owner` untouched when it declines, so it can be passed on.
  if (auto* m = quick_export<managed_of<Handle>>(data, dtype, shape, strides, device,
                                                 std::forward<Owner>(owner), flags, capacity,
                                                 byte_offset)) {
    return Handle::adopt_unchecked(m);
  }
  return export_slowly<Handle>(data, dtype, shape, strides, device, std::forward<Owner>(owner),
                               flags, capacity, byte_offset);
}

/// Owns a block from operator new with 256-byte alignment.
struct AlignedBuffer {
  static constexpr std::align_val_t alignment{256};
  void* ptr = nullptr;

  explicit AlignedBuffer(std::size_t bytes)
      : ptr(::operator new(bytes == 0 ? 1 : bytes, alignment)) {}
  AlignedBuffer(AlignedBuffer&& other) noexcept : ptr(other.ptr) { other.ptr = nullptr; }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(AlignedBuffer&&) = delete;
  ~AlignedBuffer() {
    if (ptr != nullptr) ::operator delete(ptr, alignment);
  }
};

/// An element count as make_export's capacity (counts past int64 cap no shape anyway).
constexpr std::int64_t clamp_count(std::size_t count) noexcept {
  const std::uint64_t wide = count;  // a variable: no "always false" warning at 32 bits
  return wide > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(wide);
}

/// READ_ONLY for a const element type, which only a versioned tensor can say.
template <class Handle, class E>
constexpr std::uint64_t export_flags() noexcept {
  static_assert(Handle::is_versioned || !std::is_const<E>::value,
                "dlpackpp: a legacy DLManagedTensor cannot mark itself read-only, so a const "
                "element type cannot be exported as LegacyManagedTensor (the default kind "
                "under a DLPack 0.x header); export a non-const T, or ManagedTensor");
  return std::is_const<E>::value ? flag::read_only : 0;
}
}  // namespace detail

DLPACKPP_END_NAMESPACE
