// SPDX-License-Identifier: Apache-2.0
// Fuzzes the import path: raw bytes become every field of a DLManagedTensorVersioned or a
// legacy DLManagedTensor, which is then adopted, viewed, queried, checked, converted to the
// other kind and read. Properties: the deleter runs exactly once whatever happens; a tensor
// is accepted exactly when its raw DLTensor validates (and, versioned, its major matches);
// every accepted tensor's numel, nbytes, strides and layout agree with an independent
// recomputation, and its elements lie inside the address space.
#include "fuzz_support.hpp"

#include <dlpackpp/dlpackpp.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DLPACKPP_FUZZ_ASAN 1
#endif
#endif
#if !defined(DLPACKPP_FUZZ_ASAN) && defined(__SANITIZE_ADDRESS__)
#define DLPACKPP_FUZZ_ASAN 1
#endif
#ifdef DLPACKPP_FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp::IntSpan;
using dlpackpp::LegacyManagedTensor;
using dlpackpp::ManagedTensor;
using dlpackpp::TensorView;
using dlpackpp::ValidateOptions;
using dlpackpp_fuzz::Oracle;
using dlpackpp_fuzz::Reader;

alignas(256) unsigned char buffer[dlpackpp_fuzz::kBufferBytes];
int deleter_calls = 0;

template <class M>
void count_delete(M* /*self*/) noexcept {
  ++deleter_calls;
}

// Valid types first (so most inputs get past the dtype check), then anything.
DLDataType pick_dtype(Reader& r) {
  static constexpr DataType valid[] = {DataType::float32(),
                                       DataType::float64(),
                                       DataType::int8(),
                                       DataType::int16(),
                                       DataType::int32(),
                                       DataType::int64(),
                                       DataType::uint8(),
                                       DataType::uint16(),
                                       DataType::uint32(),
                                       DataType::uint64(),
                                       DataType::bool_(),
                                       DataType::float16(),
                                       DataType::bfloat16(),
                                       DataType::complex64(),
                                       DataType::complex128(),
                                       DataType::float8_e4m3fn(),
                                       DataType::float6_e2m3fn(),
                                       DataType::float4_e2m1fn(),
                                       DataType(dlpackpp::dtype_code::int_, 4),
                                       DataType(dlpackpp::dtype_code::uint, 4)};
  constexpr std::size_t n = sizeof(valid) / sizeof(valid[0]);
  const std::uint8_t mode = r.byte();
  DLDataType d = valid[r.byte() % n];
  if (mode % 8 == 6) d.lanes = static_cast<std::uint16_t>(r.byte() % 5);  // vectors, 0 lanes
  if (mode % 8 == 7) {
    d.code = r.byte();
    d.bits = r.byte();
    d.lanes = r.u16();
  }
  return d;
}

// The address data points to: NULL, inside the buffer, or anywhere (never dereferenced then).
void* pick_data(Reader& r) {
  switch (r.byte() % 5) {
    case 0:
      return nullptr;
    case 4:
      return reinterpret_cast<void*>(static_cast<std::uintptr_t>(r.edgy_i64()));
    default:
      return buffer + r.u16() % dlpackpp_fuzz::kBufferBytes;
  }
}

std::uint64_t pick_byte_offset(Reader& r) {
  switch (r.byte() % 4) {
    case 0:
      return 0;
    case 3:
      return static_cast<std::uint64_t>(r.edgy_i64());
    default:
      return r.u16() % dlpackpp_fuzz::kBufferBytes;
  }
}

/// A fuzzed tensor plus the arrays it points into.
struct Fields {
  DLTensor t{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  std::uint64_t flags = 0;
  DLPackVersion version{};
  bool versioned = true;
  bool null_deleter = false;
};

Fields read_fields(Reader& r) {
  Fields f;
  const std::uint8_t kind = r.byte();
  f.versioned = (kind & 1U) == 0;
  f.null_deleter = kind % 32 == 31;
  f.version.major = r.byte() % 8 == 0 ? r.u32() : DLPACKPP_DLPACK_MAJOR;
  f.version.minor = r.byte() % 4 == 0 ? r.u32() : DLPACKPP_DLPACK_MINOR;
  const std::uint8_t flag_mode = r.byte();
  f.flags = flag_mode < 200 ? (flag_mode & 7U) : r.u64();  // known bits, else unknown ones too

  std::int32_t ndim = 0;
  const std::uint8_t ndim_mode = r.byte();
  if (ndim_mode < 200) {
    ndim = ndim_mode % 9;
  } else if (ndim_mode < 240) {
    ndim = ndim_mode % 40;  // past the view's inline capacity
  } else {
    ndim = r.i32();  // negative or huge
  }
  f.t.ndim = ndim;
  f.t.dtype = pick_dtype(r);
  if (r.byte() % 8 == 7) {
    f.t.device.device_type = static_cast<DLDeviceType>(r.i32() % 32);
    f.t.device.device_id = r.i32();
  } else {
    f.t.device = Device::cpu();
  }
  f.t.data = pick_data(r);
  f.t.byte_offset = pick_byte_offset(r);
  // Larger ranks get a NULL shape (refused: null_shape); every rank up to here is spelled
  // out, and per-dimension work would only slow the search down.
  constexpr std::int32_t kMaxRank = 300;
  const bool null_shape = r.byte() % 32 == 0 || ndim > kMaxRank;
  const bool null_strides = r.flag();
  if (ndim > 0 && !null_shape) {
    const auto n = static_cast<std::size_t>(ndim);
    f.shape.resize(n, 1);
    for (std::size_t d = 0; d < n && d < 64; ++d) f.shape[d] = r.edgy_i64();
    if (!null_strides) {
      f.strides.resize(n, 1);
      for (std::size_t d = 0; d < n && d < 64; ++d) f.strides[d] = r.edgy_i64();
    }
  }
  f.t.shape = f.shape.empty() ? nullptr : f.shape.data();
  f.t.strides = f.strides.empty() ? nullptr : f.strides.data();
  return f;
}

bool inside_buffer(std::uintptr_t address, std::size_t bytes) {
  const auto begin = reinterpret_cast<std::uintptr_t>(buffer);
  return address >= begin && bytes <= dlpackpp_fuzz::kBufferBytes &&
         address - begin <= dlpackpp_fuzz::kBufferBytes - bytes;
}

template <class R>
void expect_code(const R& result, Errc code) {
  FUZZ_CHECK(!result);
  FUZZ_CHECK(result.error().code() == code);
}

template <class F>
void expect_throws(F&& f, Errc code) {
  try {
    f();
  } catch (const dlpackpp::Error& e) {
    FUZZ_CHECK(e.code() == code);
    return;
  }
  dlpackpp_fuzz::check_failed("no dlpackpp::Error thrown", __FILE__, __LINE__);
}

// Writing needs one address per element, the library's model written out here: a stride of
// 0 over an extent above 1 shares memory, unless the tensor is empty (nothing to share).
bool shares_addresses(const TensorView& v) {
  bool overlaps = false;
  for (int d = 0; d < v.ndim(); ++d) {
    if (v.shape(d) == 0) return false;
    if (v.strides()[static_cast<std::size_t>(d)] == 0 && v.shape(d) > 1) overlaps = true;
  }
  return overlaps;
}

// Reads the first and the last element through data<T>() and accessor<T, N>() when both lie
// inside the buffer, and checks the typed checks' verdicts.
template <class T, class Handle>
void typed_reads(const Handle& handle, const TensorView& v, const Oracle& o) {
  const auto first = reinterpret_cast<std::uintptr_t>(v.const_data());
  const bool aligned = first % alignof(T) == 0;
  const auto nbytes = sizeof(T);
  {
    auto p = v.template try_data<const T>();
    if (!aligned) {
      expect_code(p, Errc::misaligned);
      return;
    }
    FUZZ_CHECK(p.has_value());
    FUZZ_CHECK(reinterpret_cast<std::uintptr_t>(*p) == first);
    auto w = v.template try_data<T>();
    if (v.read_only()) {
      expect_code(w, Errc::read_only);
    } else if (shares_addresses(v)) {
      expect_code(w, Errc::overlapping);
    } else {
      FUZZ_CHECK(w.has_value());
    }
  }
  if (o.numel == 0) return;
  std::int64_t last = 0;  // offset of the element at (shape - 1, ...), fits: inside [low, high]
  for (int d = 0; d < v.ndim(); ++d) {
    last += (v.shape(d) - 1) * o.strides[static_cast<std::size_t>(d)];
  }
  // The farthest byte either way must be in the buffer before anything is read.
  constexpr auto limit = static_cast<std::int64_t>(dlpackpp_fuzz::kBufferBytes);
  if (o.low < -limit || o.high > limit) return;
  const std::int64_t lowest = o.low * static_cast<std::int64_t>(nbytes);
  const std::int64_t highest = o.high * static_cast<std::int64_t>(nbytes);
  if (!inside_buffer(first + static_cast<std::uintptr_t>(lowest), nbytes) ||
      !inside_buffer(first + static_cast<std::uintptr_t>(highest), nbytes)) {
    return;
  }
  const T* base = v.template data<const T>();
  const T head = base[0];
  const T tail = base[last];
  auto compare = [&](T a, T b) { FUZZ_CHECK(std::memcmp(&a, &b, sizeof(T)) == 0); };
  const int ndim = v.ndim();
  if (ndim == 1) {
    auto a = v.template accessor<const T, 1>();
    compare(a(0), head);
    compare(a(v.shape(0) - 1), tail);
    auto h = handle.template try_accessor<const T, 1>();
    FUZZ_CHECK(h.has_value());
    compare((*h)(v.shape(0) - 1), tail);
  } else if (ndim == 2) {
    auto a = v.template accessor<const T, 2>();
    compare(a(0, 0), head);
    compare(a(v.shape(0) - 1, v.shape(1) - 1), tail);
    compare(a[v.shape(0) - 1][v.shape(1) - 1], tail);
    auto h = handle.template try_accessor<const T, 2>();
    FUZZ_CHECK(h.has_value());
    compare((*h)(v.shape(0) - 1, v.shape(1) - 1), tail);
  } else if (ndim == 3) {
    auto a = v.template accessor<const T, 3>();
    compare(a(0, 0, 0), head);
    compare(a(v.shape(0) - 1, v.shape(1) - 1, v.shape(2) - 1), tail);
    auto h = handle.template try_accessor<const T, 3>();
    FUZZ_CHECK(h.has_value());
    compare((*h)(v.shape(0) - 1, v.shape(1) - 1, v.shape(2) - 1), tail);
  } else if (ndim == 0) {
    auto a = v.template accessor<const T, 0>();
    compare(a(), head);
  }
  if (ndim != 2) expect_code(v.template try_accessor<const T, 2>(), Errc::rank_mismatch);
  if (v.read_only()) expect_code(v.template try_accessor<T, 1>(), Errc::read_only);
}

// Every query and check of an accepted handle against the oracle.
template <class Handle>
void exercise(const Handle& h, Reader& r) {
  const DLTensor& t = h.get()->dl_tensor;
  const int ndim = static_cast<int>(t.ndim);
  const std::uint64_t flags = h.flags();
  const bool padded = (flags & dlpackpp::flag::is_subbyte_type_padded) != 0;
  const Oracle o = dlpackpp_fuzz::recompute(t.shape, t.strides, ndim, t.dtype, padded);
  FUZZ_CHECK(o.ok);  // accepted tensors' counts fit in int64
  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  FUZZ_CHECK(t.data != nullptr || o.numel == 0);
  FUZZ_CHECK(t.byte_offset <= UINTPTR_MAX - base);
  FUZZ_CHECK(t.byte_offset <= static_cast<std::uint64_t>(PTRDIFF_MAX));
  const std::uintptr_t first = base + static_cast<std::uintptr_t>(t.byte_offset);
  if (t.data != nullptr)
    FUZZ_CHECK(dlpackpp_fuzz::span_fits_address_space(first, o, t.dtype, padded));
  FUZZ_CHECK(Device(t.device).is_known() && t.device.device_id >= 0);
  FUZZ_CHECK(DataType(t.dtype).is_valid());

  const TensorView v = h.view();
  FUZZ_CHECK(v.ndim() == ndim && h.ndim() == ndim);
  FUZZ_CHECK(v.numel() == o.numel && h.numel() == o.numel);
  FUZZ_CHECK(v.nbytes() == o.nbytes && h.nbytes() == o.nbytes);
  FUZZ_CHECK(v.is_contiguous() == o.contiguous);
  FUZZ_CHECK(v.is_fortran_contiguous() == o.fortran);
  FUZZ_CHECK(v.is_compact() == o.compact);
  FUZZ_CHECK(v.dtype() == DataType(t.dtype) && h.dtype() == DataType(t.dtype));
  FUZZ_CHECK(v.device() == Device(t.device) && h.device() == Device(t.device));
  FUZZ_CHECK(v.byte_offset() == t.byte_offset && h.byte_offset() == t.byte_offset);
  FUZZ_CHECK(v.flags() == flags);
  FUZZ_CHECK(v.read_only() == ((flags & dlpackpp::flag::read_only) != 0));
  FUZZ_CHECK(v.read_only() == h.read_only());
  FUZZ_CHECK(v.is_subbyte_padded() == padded && h.is_subbyte_padded() == padded);
  FUZZ_CHECK(reinterpret_cast<std::uintptr_t>(v.const_data()) == (t.data == nullptr ? 0 : first));
  const IntSpan shape = v.shape();
  const IntSpan strides = v.strides();
  const dlpackpp::Strides handle_strides = h.strides();
  FUZZ_CHECK(shape.size() == static_cast<std::size_t>(ndim));
  FUZZ_CHECK(strides.size() == static_cast<std::size_t>(ndim));
  FUZZ_CHECK(handle_strides.size() == static_cast<std::size_t>(ndim));
  for (int d = 0; d < ndim; ++d) {
    const auto i = static_cast<std::size_t>(d);
    FUZZ_CHECK(shape[i] == t.shape[i] && h.shape()[i] == t.shape[i]);
    FUZZ_CHECK(strides[i] == o.strides[i] && handle_strides[i] == o.strides[i]);
    FUZZ_CHECK(v.shape(d) == t.shape[i] && v.shape(d - ndim) == t.shape[i]);
    FUZZ_CHECK(v.stride(d) == o.strides[i] && v.stride(d - ndim) == o.strides[i]);
  }
  expect_code(v.try_shape(ndim), Errc::out_of_range);
  expect_code(v.try_stride(-ndim - 1), Errc::out_of_range);
  const bool throwing = r.byte() % 4 == 0;  // exceptions are costly under ASan: 1 input in 4
  if (throwing) expect_throws([&] { static_cast<void>(v.stride(ndim)); }, Errc::out_of_range);
  FUZZ_CHECK(!v.to_string().empty());

  // The view described again as a DLTensor validates, under the same flags.
  const DLTensor again = v.to_dltensor();
  ValidateOptions options;
  options.flags = flags;
  FUZZ_CHECK(dlpackpp::validate(again, options).has_value());
  auto copy = TensorView::try_from(again, options);
  FUZZ_CHECK(copy.has_value() && copy->numel() == o.numel && copy->is_contiguous() == o.contiguous);
  // Stricter options: strides presence and alignment.
  ValidateOptions strict = options;
  strict.require_strides = true;
  const auto strict_result = dlpackpp::validate(t, strict);
  if (t.strides == nullptr && ndim > 0) {
    expect_code(strict_result, Errc::null_strides);
  } else {
    FUZZ_CHECK(strict_result.has_value());
  }
  ValidateOptions aligned = options;
  aligned.alignment = std::size_t{1} << (r.byte() % 9);
  const auto aligned_result = dlpackpp::validate(t, aligned);
  if (t.data != nullptr && first % aligned.alignment != 0) {
    expect_code(aligned_result, Errc::misaligned);
  } else {
    FUZZ_CHECK(aligned_result.has_value());
  }
  aligned.alignment = 3;
  expect_code(dlpackpp::validate(t, aligned), Errc::invalid_argument);

  // Consumer checks, passing and failing.
  FUZZ_CHECK(v.try_require_dtype(t.dtype).has_value());
  const DataType other =
      DataType(t.dtype) == DataType::int8() ? DataType::uint8() : DataType::int8();
  expect_code(v.try_require_dtype(other), Errc::dtype_mismatch);
  if (throwing)
    expect_throws([&] { static_cast<void>(v.require_dtype(other)); }, Errc::dtype_mismatch);
  FUZZ_CHECK(v.try_require_ndim(ndim).has_value());
  expect_code(v.try_require_ndim(ndim + 1), Errc::rank_mismatch);
  FUZZ_CHECK(v.try_require_shape(shape).has_value());
  std::vector<std::int64_t> wanted(shape.begin(), shape.end());
  if (ndim > 0) {
    const auto d = static_cast<std::size_t>(r.byte() % ndim);
    wanted[d] = -1;
    FUZZ_CHECK(v.try_require_shape(wanted).has_value());
    wanted[d] = shape[d] == 0 ? 1 : shape[d] - 1;
    expect_code(v.try_require_shape(wanted), Errc::shape_mismatch);
    wanted[d] = -2;
    expect_code(v.try_require_shape(wanted), Errc::invalid_argument);
  }
  wanted.push_back(1);
  expect_code(v.try_require_shape(wanted), Errc::rank_mismatch);
  FUZZ_CHECK(v.try_require_device(t.device).has_value());
  expect_code(v.try_require_device(Device::cuda(t.device.device_id == 7 ? 8 : 7)),
              Errc::device_mismatch);
  const auto contiguous = v.try_require_contiguous();
  if (o.contiguous) {
    FUZZ_CHECK(contiguous.has_value());
  } else {
    expect_code(contiguous, Errc::not_contiguous);
  }
  const bool overlaps = shares_addresses(v);
  const auto writable = v.try_require_writable();
  if (v.read_only()) {
    expect_code(writable, Errc::read_only);
    if (throwing) {
      expect_throws([&] { static_cast<void>(v.data()); }, Errc::read_only);
      expect_throws([&] { static_cast<void>(h.data()); }, Errc::read_only);
    }
  } else if (overlaps) {
    expect_code(writable, Errc::overlapping);
    if (throwing) expect_throws([&] { static_cast<void>(v.data()); }, Errc::overlapping);
  } else {
    FUZZ_CHECK(writable.has_value());
    FUZZ_CHECK(reinterpret_cast<std::uintptr_t>(v.data()) == (t.data == nullptr ? 0 : first));
  }

  // Typed reads when the element type has a C++ counterpart.
  if (t.data != nullptr && Device(t.device).is_host_accessible()) {
    dlpackpp_fuzz::with_cpp_type(t.dtype, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      typed_reads<T>(h, v, o);
    });
  }
  if (DataType(t.dtype) != DataType::float32()) {
    expect_code(v.try_data<const float>(), Errc::dtype_mismatch);
  }
}

template <class M>
M* make_managed(const Fields& f, std::unique_ptr<M>& storage) {
  storage = std::make_unique<M>();
  M* m = storage.get();
  m->dl_tensor = f.t;
  m->manager_ctx = m;
  m->deleter = f.null_deleter ? nullptr : &count_delete<M>;
  if constexpr (std::is_same<M, DLManagedTensorVersioned>::value) {
    m->version = f.version;
    m->flags = f.flags;
  }
  return m;
}

// Converts to the other kind (and maybe back), checking each refusal leaves the handle intact.
void convert(ManagedTensor&& h, Reader& r, int depth);
void convert(LegacyManagedTensor&& h, Reader& r, int depth) {
  const std::uint64_t flags = r.byte() < 200 ? r.byte() & 7U : r.u64();
  const DLTensor before = h.get()->dl_tensor;
  auto versioned = dlpackpp::try_to_versioned(std::move(h), flags);
  if (!versioned) {
    // Only new flags that contradict the tensor can refuse it (it was valid before).
    FUZZ_CHECK(static_cast<bool>(h));
    FUZZ_CHECK(versioned.error().code() == Errc::invalid_flags ||
               versioned.error().code() == Errc::offset_overflow ||
               versioned.error().code() == Errc::size_overflow);
    return;
  }
  FUZZ_CHECK(!h);
  FUZZ_CHECK(versioned->flags() == flags);
  FUZZ_CHECK(versioned->get()->dl_tensor.data == before.data);
  FUZZ_CHECK(versioned->get()->dl_tensor.shape == before.shape);
  exercise(*versioned, r);
  if (depth < 2 && r.flag()) convert(std::move(*versioned), r, depth + 1);
}
void convert(ManagedTensor&& h, Reader& r, int depth) {
  const bool drop = r.flag();
  const bool read_only = h.read_only();
  const bool padded = h.is_subbyte_padded();
  auto legacy = dlpackpp::try_to_legacy(std::move(h), drop);
  if (read_only && !drop) {
    expect_code(legacy, Errc::read_only);
    FUZZ_CHECK(static_cast<bool>(h));
    return;
  }
  if (padded) {
    expect_code(legacy, Errc::invalid_flags);
    FUZZ_CHECK(static_cast<bool>(h));
    return;
  }
  FUZZ_CHECK(legacy.has_value() && !h);
  FUZZ_CHECK(legacy->flags() == 0);
  exercise(*legacy, r);
  if (depth < 2 && r.flag()) convert(std::move(*legacy), r, depth + 1);
}

template <class M>
void run(const Fields& f, Reader& r) {
  using Handle = dlpackpp::BasicManagedTensor<M>;
  constexpr bool versioned = std::is_same<M, DLManagedTensorVersioned>::value;
  // What the library must decide, judged from the raw DLTensor alone.
  ValidateOptions options;
  if (versioned) options.flags = f.flags;
  const bool major_ok = !versioned || f.version.major == DLPACKPP_DLPACK_MAJOR;
  const auto raw = TensorView::try_from(f.t, options);
  FUZZ_CHECK(raw.has_value() == dlpackpp::validate(f.t, options).has_value());
  if (!raw) FUZZ_CHECK(raw.error().code() == dlpackpp::validate(f.t, options).error().code());

  std::unique_ptr<M> storage;
  M* m = make_managed(f, storage);
  deleter_calls = 0;
  const int expected_calls = f.null_deleter ? 0 : 1;
#ifdef DLPACKPP_FUZZ_ASAN
  // A tensor of another major may have any layout after `flags`: reading it is a bug.
  if (!major_ok) ASAN_POISON_MEMORY_REGION(&m->dl_tensor, sizeof(m->dl_tensor));
#endif
  {
    const bool throwing = r.flag();
    Handle h;
    bool accepted = false;
    if (throwing) {
      try {
        h = Handle::adopt(m);
        accepted = true;
      } catch (const dlpackpp::Error& e) {
        if (!major_ok)
          FUZZ_CHECK(e.code() == Errc::version_mismatch);
        else
          FUZZ_CHECK(!raw && e.code() == raw.error().code());
      }
    } else {
      auto result = Handle::try_adopt(m);
      if (result) {
        h = std::move(*result);
        accepted = true;
      } else if (!major_ok) {
        FUZZ_CHECK(result.error().code() == Errc::version_mismatch);
      } else {
        FUZZ_CHECK(!raw && result.error().code() == raw.error().code());
      }
    }
#ifdef DLPACKPP_FUZZ_ASAN
    if (!major_ok) ASAN_UNPOISON_MEMORY_REGION(&m->dl_tensor, sizeof(m->dl_tensor));
#endif
    FUZZ_CHECK(accepted == (major_ok && raw.has_value()));
    if (!accepted) {
      FUZZ_CHECK(deleter_calls == expected_calls);  // released on refusal
      return;
    }
    FUZZ_CHECK(deleter_calls == 0);
    exercise(h, r);
    if (r.flag()) {
      convert(std::move(h), r, 0);
    } else if (r.flag()) {
      h.reset();
      FUZZ_CHECK(deleter_calls == expected_calls);
    }
  }
  FUZZ_CHECK(deleter_calls == expected_calls);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader r(data, size);
  const Fields f = read_fields(r);
  if (f.versioned) {
    run<DLManagedTensorVersioned>(f, r);
  } else {
    run<DLManagedTensor>(f, r);
  }
  return 0;
}
