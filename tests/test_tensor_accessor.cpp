// SPDX-License-Identifier: Apache-2.0
// TensorAccessor: indexing vs raw arithmetic (ranks 0..4), creation checks, by-value copy, bounds.

// The whole file runs with the debugging bounds check on: every in-range access below must
// pass it, and the death test shows it catches the rest.
#define DLPACKPP_ACCESSOR_BOUNDS_CHECK 1
#include <gtest/gtest.h>

#include "support/expect_error.hpp"
#include "support/layouts.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <dlpackpp/tensor_view.hpp>
#include <numeric>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using dlpackpp_test::expect_error;
using dlpackpp_test::Layout;
using dlpackpp_test::layout_name;
using dlpackpp_test::make_layout;
using dlpackpp_test::Strided;
// A user's 4-bit float, known to dlpackpp only through dtype_traits.
struct Fp4 {
  std::uint8_t bits;
};
}  // namespace

template <>
struct dlpackpp::dtype_traits<Fp4> {
  static constexpr DLDataType value = {dlpackpp::dtype_code::float4_e2m1fn, 4, 1};
};

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp::Error;
using dlpackpp::TensorAccessor;
using dlpackpp::TensorView;
using dlpackpp::ValidateOptions;
namespace flag = dlpackpp::flag;
using Ints = std::vector<std::int64_t>;

static_assert(std::is_trivially_copyable<TensorAccessor<float, 0>>::value, "kernel argument");
static_assert(std::is_trivially_copyable<TensorAccessor<float, 1>>::value, "kernel argument");
static_assert(std::is_trivially_copyable<TensorAccessor<float, 2>>::value, "kernel argument");
static_assert(std::is_trivially_copyable<TensorAccessor<const double, 4>>::value,
              "kernel argument");

// A rank-N int32 tensor of `layout` over a buffer of distinct values; element (0, ..., 0) is
// buffer[first], offset_elements of it conveyed as byte_offset.
struct Filled {
  Strided layout;
  std::int64_t first = 0;
  std::vector<std::int32_t> buffer;
};

Filled make_filled(Layout layout, int rank) {
  Ints shape;
  for (int d = 0; d < rank; ++d) shape.push_back(d + 2);
  Filled f;
  f.layout = make_layout(layout, shape);
  f.first = f.layout.offset_elements + f.layout.first;
  f.buffer.resize(static_cast<std::size_t>(f.layout.offset_elements + f.layout.span));
  std::iota(f.buffer.begin(), f.buffer.end(), 1000);
  return f;
}

// Advances a row-major odometer; false once every tuple was visited.
template <std::size_t N>
bool next_index(std::array<std::int64_t, N>& index, const Ints& shape) {
  for (std::size_t d = N; d-- > 0;) {
    if (++index[d] < shape[d]) return true;
    index[d] = 0;
  }
  return false;
}

// acc[i0][i1]...[iN-1], one operator[] per index.
template <std::size_t K = 0, class A, std::size_t N>
decltype(auto) chained(const A& a, const std::array<std::int64_t, N>& index) {
  if constexpr (K + 1 == N) {
    return a[index[K]];
  } else {
    return chained<K + 1>(a[index[K]], index);
  }
}

template <int N>
void check_rank(Layout layout) {
  SCOPED_TRACE("rank " + std::to_string(N));
  constexpr auto n = static_cast<std::size_t>(N);
  Filled f = make_filled(layout, N);
  const Strided& s = f.layout;
  void* data = f.buffer.data() + s.first;
  const auto byte_offset = static_cast<std::uint64_t>(s.offset_elements) * sizeof(std::int32_t);
  const TensorView v(data, DataType::int32(), s.shape, s.strides, Device::cpu(), byte_offset);
  const TensorAccessor<std::int32_t, N> acc = v.accessor<std::int32_t, N>();
  const TensorAccessor<const std::int32_t, N> reader = v.accessor<const std::int32_t, N>();

  EXPECT_EQ(acc.data(), f.buffer.data() + f.first);
  EXPECT_EQ(reader.data(), f.buffer.data() + f.first);
  for (int d = 0; d < N; ++d) {
    EXPECT_EQ(acc.size(d), s.shape[static_cast<std::size_t>(d)]);
    EXPECT_EQ(acc.stride(d), s.strides[static_cast<std::size_t>(d)]);
  }

  std::array<std::int64_t, n> index{};
  std::int32_t stamp = 0;
  do {
    std::int64_t raw = f.first;
    for (std::size_t d = 0; d < n; ++d) raw += index[d] * s.strides[d];
    std::int32_t& expected = f.buffer[static_cast<std::size_t>(raw)];
    const std::int32_t original = expected;

    std::int32_t& called = std::apply(acc, index);
    EXPECT_EQ(&called, &expected);
    EXPECT_EQ(std::apply(reader, index), original);
    called = --stamp;
    EXPECT_EQ(expected, stamp) << "a write through operator() lands in the buffer";
    if constexpr (N >= 1) {
      std::int32_t& indexed = chained(acc, index);
      EXPECT_EQ(&indexed, &expected);
      indexed = --stamp;
      EXPECT_EQ(expected, stamp) << "a write through operator[] lands in the buffer";
      EXPECT_EQ(chained(reader, index), stamp);
    }
  } while (next_index(index, s.shape));
}

template <int... N>
void check_ranks(Layout layout, std::integer_sequence<int, N...>) {
  (check_rank<N>(layout), ...);
}

std::string layout_test_name(const ::testing::TestParamInfo<Layout>& info) {
  return layout_name(info.param);
}

class AccessorLayouts : public ::testing::TestWithParam<Layout> {};

TEST_P(AccessorLayouts, MatchesIndexArithmeticForRanks0To4) {
  check_ranks(GetParam(), std::make_integer_sequence<int, 5>());
}

INSTANTIATE_TEST_SUITE_P(TensorAccessor, AccessorLayouts,
                         ::testing::Values(Layout::c_contiguous, Layout::fortran, Layout::permuted,
                                           Layout::sliced, Layout::negative, Layout::byte_offset),
                         layout_test_name);

TEST(TensorAccessor, CreationChecksDtypeRankAndWritability) {
  std::vector<float> storage(6, 1.5f);
  const Ints shape{2, 3};
  const TensorView v(storage.data(), DataType::float32(), shape);
  expect_error([&] { v.accessor<std::int32_t, 2>(); }, Errc::dtype_mismatch,
               "dtype is float32, accessed as int32");
  expect_error([&] { v.accessor<const double, 2>(); }, Errc::dtype_mismatch, "float64");
  expect_error([&] { v.accessor<float, 3>(); }, Errc::rank_mismatch,
               "ndim is 2, accessor rank is 3");
  expect_error([&] { v.accessor<float, 0>(); }, Errc::rank_mismatch, "accessor rank is 0");
  expect_error([&] { v.accessor<const float, 1>(); }, Errc::rank_mismatch, "accessor rank is 1");

  const TensorView locked = TensorView::unchecked(v.to_dltensor(), flag::read_only);
  expect_error([&] { locked.accessor<float, 2>(); }, Errc::read_only, "READ_ONLY");
  const TensorAccessor<const float, 2> reader = locked.accessor<const float, 2>();
  EXPECT_EQ(reader(1, 2), 1.5f);
  EXPECT_EQ(reader[1][2], 1.5f);
  // Every check happened above; indexing itself cannot fail.
  static_assert(noexcept(reader(1, 2))&& noexcept(reader[1][2]), "indexing is unchecked");
}

TEST(TensorAccessor, PackedSubByteIsNotAddressable) {
  std::uint8_t bytes[4] = {0x10, 0x32, 0x54, 0x76};
  Ints shape{4};
  DLTensor t{};
  t.data = bytes;
  t.device = Device::cpu();
  t.ndim = 1;
  t.dtype = dlpackpp::dtype_of<Fp4>;
  t.shape = shape.data();

  const TensorView packed(t);
  expect_error([&] { packed.accessor<const Fp4, 1>(); }, Errc::unsupported_dtype,
               "float4_e2m1fn is packed");
  EXPECT_EQ(packed.nbytes(), 2);

  // Padded: one element per byte, so each one has an address.
  const TensorView padded(t, ValidateOptions{false, 0, flag::is_subbyte_type_padded});
  EXPECT_EQ(padded.nbytes(), 4);
  const TensorAccessor<const Fp4, 1> acc = padded.accessor<const Fp4, 1>();
  for (std::int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(acc(i).bits, bytes[i]);
    EXPECT_EQ(&acc[i], reinterpret_cast<const Fp4*>(bytes + i));
  }
}

// A kernel receives a byte copy of the accessor after the view (and the host arrays it
// borrowed) may be gone: the accessor must carry everything it needs.
TEST(TensorAccessor, IsSelfContainedWhenCopiedByValue) {
  std::vector<double> storage(12);
  std::iota(storage.begin(), storage.end(), 0.0);
  unsigned char bytes[sizeof(TensorAccessor<double, 2>)];
  {
    const Ints shape{3, 4};
    const Ints strides{1, 3};
    const TensorView v(storage.data(), DataType::float64(), shape, strides);
    const TensorAccessor<double, 2> acc = v.accessor<double, 2>();
    std::memcpy(bytes, &acc, sizeof acc);
  }
  TensorAccessor<double, 2> copy;
  std::memcpy(&copy, bytes, sizeof copy);
  EXPECT_EQ(copy.size(0), 3);
  EXPECT_EQ(copy.size(1), 4);
  EXPECT_EQ(copy.stride(0), 1);
  EXPECT_EQ(copy.stride(1), 3);
  EXPECT_EQ(copy.data(), storage.data());
  EXPECT_EQ(copy(2, 3), storage[2 + 3 * 3]);
  copy[1][2] = -1.0;
  EXPECT_EQ(storage[1 + 2 * 3], -1.0);
}

TEST(TensorAccessorDeathTest, BoundsCheckStopsOutOfRangeIndices) {
  std::vector<float> storage(6);
  const Ints shape{2, 3};
  const TensorView v(storage.data(), DataType::float32(), shape);
  const TensorAccessor<float, 2> acc = v.accessor<float, 2>();
  // Each report names the index, the extent and the dimension.
  EXPECT_DEATH(static_cast<void>(acc(2, 0)), "index 2 out of range \\[0, 2\\) in dimension 0");
  EXPECT_DEATH(static_cast<void>(acc(0, -1)), "index -1 out of range \\[0, 3\\) in dimension 1");
  EXPECT_DEATH(static_cast<void>(acc[1][3]), "index 3 out of range \\[0, 3\\) in dimension 1");
  EXPECT_DEATH(static_cast<void>(acc[-1]), "index -1 out of range \\[0, 2\\) in dimension 0");
  EXPECT_EQ(&acc(1, 2), &acc[1][2]);
}

TEST(TensorAccessor, RowSliceKeptFromATemporaryAccessorStaysValid) {
  // The slice carries its own sizes and strides: keeping it past the accessor that made it
  // is safe (ASan would report a stack-use-after-scope otherwise).
  std::vector<float> storage(6);
  std::iota(storage.begin(), storage.end(), 0.0f);
  const Ints shape{2, 3};
  const TensorView v(storage.data(), DataType::float32(), shape);
  auto row = v.accessor<const float, 2>()[1];
  auto plane = v.accessor<const float, 2>()[0];
  EXPECT_EQ(row.size(0), 3);
  EXPECT_EQ(row.stride(0), 1);
  EXPECT_EQ(row[2], 5.0f);
  EXPECT_EQ(plane[1], 1.0f);
}

TEST(TensorAccessor, DefaultIsEmpty) {
  const TensorAccessor<float, 3> acc;
  EXPECT_EQ(acc.data(), nullptr);
  EXPECT_EQ(acc.size(2), 0);
  EXPECT_EQ(acc.stride(0), 0);
  static_assert(TensorAccessor<float, 3>::rank == 3, "rank is exposed");
  static_assert(std::is_same<TensorAccessor<const float, 3>::element_type, const float>::value,
                "element_type keeps const");
}

}  // namespace
