// SPDX-License-Identifier: Apache-2.0
// Fuzzes the producers: wrap, allocate and from_vector with arbitrary shapes, strides,
// dtypes, devices, flags and data pointers, for both handle kinds. Properties: a refused
// export consumes nothing (the owner is still the caller's); an accepted one re-imports
// through try_adopt, reports what it was given (compact strides where none were), and runs
// its owner exactly once.
#include "fuzz_support.hpp"

#include <dlpackpp/dlpackpp.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp::IntSpan;
using dlpackpp::ValidateOptions;
using dlpackpp_fuzz::Oracle;
using dlpackpp_fuzz::Reader;

alignas(256) unsigned char buffer[dlpackpp_fuzz::kBufferBytes];
// allocate() is tried up to this many bytes (a test cannot afford real huge allocations).
constexpr std::int64_t kMaxAllocate = 1 << 15;
const unsigned char zeros[2 * kMaxAllocate] = {};
int owners_destroyed = 0;

// Counts its own destruction once, however often it is moved.
struct CountingOwner {
  CountingOwner() = default;
  CountingOwner(CountingOwner&& other) noexcept : live(other.live) { other.live = false; }
  CountingOwner(const CountingOwner&) = delete;
  CountingOwner& operator=(const CountingOwner&) = delete;
  CountingOwner& operator=(CountingOwner&&) = delete;
  ~CountingOwner() {
    if (live) ++owners_destroyed;
  }
  bool live = true;
};

struct Parts {
  DLDataType dtype{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  Device device;
  std::uint64_t flags = 0;
  std::uint64_t byte_offset = 0;
  void* data = nullptr;
};

Parts read_parts(Reader& r) {
  static constexpr DataType types[] = {
      DataType::float32(),     DataType::float64(),       DataType::int8(),
      DataType::int32(),       DataType::uint16(),        DataType::int64(),
      DataType::bool_(),       DataType::bfloat16(),      DataType::complex128(),
      DataType::float8_e5m2(), DataType::float4_e2m1fn(), DataType::float6_e3m2fn()};
  constexpr std::size_t n_types = sizeof(types) / sizeof(types[0]);
  Parts p;
  const std::uint8_t dtype_mode = r.byte();
  p.dtype = types[r.byte() % n_types];
  if (dtype_mode % 8 == 6) p.dtype.lanes = static_cast<std::uint16_t>(r.byte() % 5);
  if (dtype_mode % 8 == 7) {
    p.dtype.code = r.byte();
    p.dtype.bits = r.byte();
    p.dtype.lanes = r.u16();
  }
  const std::uint8_t ndim_mode = r.byte();
  const std::size_t ndim = ndim_mode < 220 ? ndim_mode % 6 : ndim_mode % 20;
  for (std::size_t d = 0; d < ndim; ++d) p.shape.push_back(r.edgy_i64());
  const std::uint8_t strides_mode = r.byte() % 8;
  if (strides_mode >= 4) {
    // Usually one per dimension; sometimes a count that does not match.
    const std::size_t count = strides_mode == 7 ? r.byte() % 6 : ndim;
    for (std::size_t d = 0; d < count; ++d) p.strides.push_back(r.edgy_i64());
  }
  if (r.byte() % 8 == 7) {
    p.device = Device(static_cast<DLDeviceType>(r.byte() % 20), r.i32() % 4);
  }
  const std::uint8_t flag_mode = r.byte();
  p.flags = flag_mode < 160 ? 0 : flag_mode < 240 ? (flag_mode & 7U) : r.u64();
  const std::uint8_t offset_mode = r.byte() % 4;
  p.byte_offset = offset_mode == 0   ? r.u16() % 512
                  : offset_mode == 1 ? static_cast<std::uint64_t>(r.edgy_i64())
                                     : 0;
  switch (r.byte() % 4) {
    case 0:
      p.data = nullptr;
      break;
    case 1:
      p.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(r.edgy_i64()));
      break;
    default:
      p.data = buffer + r.u16() % dlpackpp_fuzz::kBufferBytes;
      break;
  }
  return p;
}

// The effective strides of the parts: the given ones, or compact.
template <class Handle>
void check_reimport(Handle&& exported, const Parts& p, bool compact_strides) {
  using M = typename std::decay_t<Handle>::managed_type;
  using Plain = dlpackpp::BasicManagedTensor<M>;
  M* raw = exported.release();
  FUZZ_CHECK(raw != nullptr);
  auto back = Plain::try_adopt(raw);
  FUZZ_CHECK(back.has_value());  // what the library made, it accepts
  const DLTensor& t = back->get()->dl_tensor;
  const int ndim = static_cast<int>(p.shape.size());
  FUZZ_CHECK(t.ndim == ndim);
  FUZZ_CHECK(ndim == 0 || (t.shape != nullptr && t.strides != nullptr));  // always strides
  const bool padded = (back->flags() & dlpackpp::flag::is_subbyte_type_padded) != 0;
  const Oracle o = dlpackpp_fuzz::recompute(
      p.shape.data(), compact_strides ? nullptr : p.strides.data(), ndim, p.dtype, padded);
  FUZZ_CHECK(o.ok);
  for (int d = 0; d < ndim; ++d) {
    const auto i = static_cast<std::size_t>(d);
    FUZZ_CHECK(t.shape[i] == p.shape[i]);
    FUZZ_CHECK(t.strides[i] == o.strides[i]);
  }
  FUZZ_CHECK(back->numel() == o.numel && back->view().numel() == o.numel);
  FUZZ_CHECK(back->nbytes() == o.nbytes && back->view().nbytes() == o.nbytes);
  FUZZ_CHECK(back->view().is_contiguous() == o.contiguous);
  FUZZ_CHECK(back->dtype() == DataType(p.dtype));
  FUZZ_CHECK(back->device() == p.device);
  if constexpr (Plain::is_versioned) {
    FUZZ_CHECK(back->flags() == p.flags);
    FUZZ_CHECK(back->get()->version.major == DLPACKPP_DLPACK_MAJOR);
  }
}

template <class Handle>
void fuzz_wrap(const Parts& p) {
  // The verdict the export must reach: that of validating the same parts.
  DLTensor t{};
  t.data = p.data;
  t.dtype = p.dtype;
  t.device = p.device;
  t.ndim = static_cast<std::int32_t>(p.shape.size());
  t.shape = p.shape.empty() ? nullptr : const_cast<std::int64_t*>(p.shape.data());
  t.strides = p.strides.empty() ? nullptr : const_cast<std::int64_t*>(p.strides.data());
  t.byte_offset = p.byte_offset;
  ValidateOptions options;
  options.flags = p.flags;
  const bool strides_fit = p.strides.empty() || p.strides.size() == p.shape.size();
  const bool flags_fit = Handle::is_versioned || p.flags == 0;
  const bool valid = strides_fit && dlpackpp::validate(t, options).has_value();

  owners_destroyed = 0;
  {
    CountingOwner owner;
    auto exported = dlpackpp::try_wrap<Handle>(p.data, p.dtype, p.shape, p.strides, p.device,
                                               std::move(owner), p.flags, p.byte_offset);
    FUZZ_CHECK(exported.has_value() == (valid && flags_fit));
    if (!exported) {
      FUZZ_CHECK(owner.live);  // not consumed
      FUZZ_CHECK(owners_destroyed == 0);
      if (!strides_fit && flags_fit) FUZZ_CHECK(exported.error().code() == Errc::invalid_argument);
      return;
    }
    FUZZ_CHECK(!owner.live);
    FUZZ_CHECK(owners_destroyed == 0);
    FUZZ_CHECK(exported->byte_offset() == p.byte_offset);
    check_reimport(std::move(*exported), p, p.strides.empty());
  }
  FUZZ_CHECK(owners_destroyed == 1);
}

template <class Handle>
void fuzz_allocate(const Parts& p) {
  const bool padded = (p.flags & dlpackpp::flag::is_subbyte_type_padded) != 0;
  const Oracle o = dlpackpp_fuzz::recompute(p.shape.data(), nullptr,
                                            static_cast<int>(p.shape.size()), p.dtype, false);
  // Huge but representable sizes would really be allocated: keep to what a test can afford.
  if (o.ok && o.nbytes > kMaxAllocate && p.device == Device::cpu()) return;
  auto made = dlpackpp::try_allocate<Handle>(p.dtype, p.shape, p.device, p.flags);
  if (!made) {
    const bool legacy_flags = !Handle::is_versioned && p.flags != 0;
    FUZZ_CHECK(!o.ok || p.device != Device::cpu() || !DataType(p.dtype).is_valid() ||
               legacy_flags || padded);
    return;
  }
  FUZZ_CHECK(o.ok && p.device == Device::cpu());
  const auto* first = static_cast<const unsigned char*>(made->view().const_data());
  if (o.numel > 0) {
    FUZZ_CHECK(reinterpret_cast<std::uintptr_t>(first) % 256 == 0);
    // Zero-filled, as far as the tensor itself says it reaches (padded flags included);
    // memcmp is checked by ASan over the whole range.
    const std::int64_t nbytes = made->nbytes();
    FUZZ_CHECK(nbytes <= 2 * kMaxAllocate);  // padding at most doubles a packed size
    FUZZ_CHECK(std::memcmp(first, zeros, static_cast<std::size_t>(nbytes)) == 0);
  }
  Parts compact = p;
  compact.strides.clear();
  check_reimport(std::move(*made), compact, true);
}

template <class Handle>
void fuzz_from_vector(Reader& r, const Parts& p) {
  std::vector<float> values(r.byte() % 48, 1.5F);
  const std::size_t size = values.size();
  auto made = dlpackpp::try_from_vector<Handle>(std::move(values), p.shape);
  const Oracle o =
      dlpackpp_fuzz::recompute(p.shape.data(), nullptr, static_cast<int>(p.shape.size()),
                               DLDataType(DataType::float32()), false);
  const bool fits = o.ok && static_cast<std::uint64_t>(o.numel) == size;
  FUZZ_CHECK(made.has_value() == fits);
  if (!made) return;
  if (o.numel > 0) FUZZ_CHECK(made->view().template data<const float>()[o.numel - 1] == 1.5F);
  Parts parts = p;
  parts.dtype = DataType::float32();
  parts.strides.clear();
  parts.device = Device::cpu();
  parts.flags = 0;
  check_reimport(std::move(*made), parts, true);
}

template <class Handle>
void fuzz_one(Reader& r, std::uint8_t which) {
  const Parts p = read_parts(r);
  switch (which % 3) {
    case 0:
      fuzz_wrap<Handle>(p);
      break;
    case 1:
      fuzz_allocate<Handle>(p);
      break;
    default:
      fuzz_from_vector<Handle>(r, p);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader r(data, size);
  const std::uint8_t which = r.byte();
  if ((which & 0x80U) == 0) {
    fuzz_one<dlpackpp::ManagedTensor>(r, which);
  } else {
    fuzz_one<dlpackpp::LegacyManagedTensor>(r, which);
  }
  return 0;
}
