// SPDX-License-Identifier: Apache-2.0
// to_mdspan / from_mdspan with whichever mdspan the build has (std:: or CCCL's cuda::std::):
// element addresses against the view's strides, static and dynamic extents, every refusal,
// and exports that keep their owner alive until the consumer lets go.
#include <gtest/gtest.h>

#include "support/expect_error.hpp"

#include <dlpackpp/mdspan.hpp>

#if !DLPACKPP_HAS_MDSPAN
#error "test_mdspan is only built where an mdspan is available (CMake checks that first)"
#endif

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace {

namespace md = DLPACKPP_MDSPAN_NAMESPACE;
using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp::ManagedTensor;
using dlpackpp::TensorView;
using dlpackpp_test::expect_error;
using Ints = std::vector<std::int64_t>;

// The element at (i...): `m[i, j]` in C++23 and `m(i, j)` in CCCL's C++17 mode differ, while
// indexing with an array of indices is standard in both.
template <class M, class... I>
typename M::reference at(const M& m, I... i) {
  return m[md::array<typename M::index_type, sizeof...(I)>{
      static_cast<typename M::index_type>(i)...}];
}

// Every element of a rank-2 mdspan sits where the view's strides put it.
template <class M>
void expect_same_addresses_2d(const M& m, const TensorView& v) {
  ASSERT_EQ(m.extent(0), v.shape(0));
  ASSERT_EQ(m.extent(1), v.shape(1));
  const auto* first = static_cast<const float*>(v.const_data());
  for (std::int64_t i = 0; i < v.shape(0); ++i) {
    for (std::int64_t j = 0; j < v.shape(1); ++j) {
      EXPECT_EQ(&at(m, i, j), first + i * v.stride(0) + j * v.stride(1)) << i << ", " << j;
    }
  }
}

TEST(Mdspan, RowMajorTransposedPaddedAndOffset) {
  std::vector<float> values(64);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  const TensorView row_major(values.data(), DataType::float32(), {3, 4});
  const TensorView transposed(values.data(), DataType::float32(), {4, 3}, {1, 4});
  const TensorView padded(values.data(), DataType::float32(), {3, 5}, {8, 1});
  const TensorView offset(values.data(), DataType::float32(), {2, 3}, {3, 1}, Device::cpu(),
                          4 * sizeof(float));
  for (const TensorView* v : {&row_major, &transposed, &padded, &offset}) {
    SCOPED_TRACE(v->to_string());
    const auto m = dlpackpp::to_mdspan<const float, 2>(*v);
    static_assert(std::is_same<decltype(m)::layout_type, md::layout_stride>::value, "strided");
    static_assert(std::is_same<decltype(m)::index_type, std::int64_t>::value, "DLPack's index");
    expect_same_addresses_2d(m, *v);
    EXPECT_EQ(m.stride(0), v->stride(0));
    EXPECT_EQ(m.stride(1), v->stride(1));
  }
  // Writable when the view is.
  auto w = dlpackpp::to_mdspan<float, 2>(row_major);
  at(w, 2, 3) = -1.0f;
  EXPECT_EQ(values[11], -1.0f);
}

TEST(Mdspan, StaticExtentsAreChecked) {
  std::vector<float> values(24);
  const TensorView v(values.data(), DataType::float32(), {2, 3, 4});
  using Fixed = md::extents<std::int64_t, 2, md::dynamic_extent, 4>;
  const auto m = dlpackpp::to_mdspan<const float, Fixed>(v);
  static_assert(decltype(m)::static_extent(0) == 2, "kept static");
  EXPECT_EQ(m.extent(1), 3);
  EXPECT_EQ(&at(m, 1, 2, 3), values.data() + 23);

  using Wrong = md::extents<std::int64_t, 2, 4, 4>;
  expect_error([&] { dlpackpp::to_mdspan<const float, Wrong>(v); }, Errc::shape_mismatch,
               "shape[1] is 3, required 4");
  expect_error([&] { dlpackpp::to_mdspan<const float, 2>(v); }, Errc::rank_mismatch,
               "ndim is 3, required shape has 2 dimensions");
  // A narrower index type works while everything fits in it.
  using Small = md::extents<int, md::dynamic_extent, md::dynamic_extent, md::dynamic_extent>;
  const auto s = dlpackpp::to_mdspan<const float, Small>(v);
  EXPECT_EQ(&at(s, 1, 2, 3), values.data() + 23);
}

TEST(Mdspan, SizeOneEmptyAndZeroDim) {
  std::vector<float> values(8);
  // Size-1 dimensions may carry any stride (PyTorch sends many kinds); they never matter.
  const TensorView ones(values.data(), DataType::float32(), {1, 4, 1}, {-7, 1, 0});
  const auto m = dlpackpp::to_mdspan<const float, 3>(ones);
  EXPECT_EQ(&at(m, 0, 3, 0), values.data() + 3);

  const TensorView empty(nullptr, DataType::float32(), {0, 3}, {0, -2});
  const auto e = dlpackpp::to_mdspan<const float, 2>(empty);
  EXPECT_EQ(e.size(), 0u);
  EXPECT_EQ(e.extent(1), 3);

  float scalar = 5.0f;
  const TensorView zero_dim(&scalar, DataType::float32(), {});
  const auto z = dlpackpp::to_mdspan<float, 0>(zero_dim);
  EXPECT_EQ(at(z), 5.0f);
}

TEST(Mdspan, RefusesWhatLayoutStrideCannotSay) {
  std::vector<float> values(32);
  const TensorView negative(values.data() + 3, DataType::float32(), {4}, {-1});
  expect_error([&] { dlpackpp::to_mdspan<const float, 1>(negative); }, Errc::invalid_argument,
               "positive strides");
  const TensorView broadcast(values.data(), DataType::float32(), {3, 4}, {0, 1});
  expect_error([&] { dlpackpp::to_mdspan<const float, 2>(broadcast); }, Errc::invalid_argument);
  const TensorView interleaved(values.data(), DataType::float32(), {2, 3}, {3, 2});
  expect_error([&] { dlpackpp::to_mdspan<const float, 2>(interleaved); }, Errc::invalid_argument,
               "strides that nest");

  // The checks data<T>() makes.
  const TensorView v(values.data(), DataType::float32(), {2, 4});
  expect_error([&] { dlpackpp::to_mdspan<const double, 2>(v); }, Errc::dtype_mismatch);
  const TensorView misaligned(values.data(), DataType::float32(), {2}, {}, Device::cpu(), 1);
  expect_error([&] { dlpackpp::to_mdspan<const float, 1>(misaligned); }, Errc::misaligned);
  dlpackpp::ValidateOptions read_only;
  read_only.flags = dlpackpp::flag::read_only;
  const DLTensor t = v.to_dltensor();
  const TensorView ro(t, read_only);
  expect_error([&] { dlpackpp::to_mdspan<float, 2>(ro); }, Errc::read_only);
  EXPECT_TRUE((dlpackpp::try_to_mdspan<const float, 2>(ro)));

  // An extent beyond the index type.
  const TensorView huge(values.data(), DataType::float32(), {std::int64_t{1} << 33, 1}, {1, 1});
  using Small = md::extents<int, md::dynamic_extent, md::dynamic_extent>;
  const auto r = dlpackpp::try_to_mdspan<const float, Small>(huge);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::size_overflow);
}

// Counts its own destruction, so a test can see when the consumer let go.
struct Owner {
  std::vector<float> buffer;
  int* destroyed;
  Owner(std::vector<float> b, int* d) : buffer(std::move(b)), destroyed(d) {}
  Owner(Owner&& other) noexcept : buffer(std::move(other.buffer)), destroyed(other.destroyed) {
    other.destroyed = nullptr;
  }
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;
  Owner& operator=(Owner&&) = delete;
  ~Owner() {
    if (destroyed != nullptr) ++*destroyed;
  }
};

TEST(Mdspan, ExportRowMajorColumnMajorAndConst) {
  int destroyed = 0;
  std::vector<float> buffer(12);
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
  float* data = buffer.data();
  {
    md::mdspan<float, md::dextents<std::size_t, 2>> right(data, 3, 4);
    ManagedTensor t = dlpackpp::from_mdspan(right, Owner(std::move(buffer), &destroyed));
    EXPECT_EQ(destroyed, 0);
    EXPECT_EQ(t.view().shape(), (Ints{3, 4}));
    EXPECT_EQ(t.view().strides(), (Ints{4, 1}));
    EXPECT_EQ(t.data<float>(), data);
    EXPECT_FALSE(t.read_only());
  }
  EXPECT_EQ(destroyed, 1) << "the owner lives exactly as long as the export";

  std::vector<float> second(6);
  md::mdspan<const float, md::dextents<int, 2>, md::layout_left> left(second.data(), 2, 3);
  ManagedTensor c = dlpackpp::from_mdspan(left, 0, Device::cpu());
  EXPECT_EQ(c.view().strides(), (Ints{1, 2}));
  EXPECT_TRUE(c.read_only()) << "a const element type exports READ_ONLY";
  EXPECT_TRUE(c.view().is_fortran_contiguous());
}

TEST(Mdspan, RoundTripKeepsTheTensorAlive) {
  // A managed tensor, viewed as an mdspan, handed on through from_mdspan with the original
  // handle as the owner: the producer's deleter runs once, when the new export is released.
  ManagedTensor original = dlpackpp::allocate(DataType::float32(), {4, 6});
  const void* data = original.const_data();
  const TensorView v = original.view();
  auto m = dlpackpp::to_mdspan<float, 2>(v);
  at(m, 3, 5) = 42.0f;
  ManagedTensor handed_on = dlpackpp::from_mdspan(m, std::move(original));
  EXPECT_FALSE(original);
  EXPECT_EQ(handed_on.const_data(), data);
  EXPECT_EQ(handed_on.view().shape(), (Ints{4, 6}));
  EXPECT_EQ(static_cast<const float*>(handed_on.const_data())[23], 42.0f);

  // A failed export leaves the owner with the caller.
  auto owner = std::make_unique<int>(7);
  md::mdspan<float, md::dextents<std::int64_t, 1>> bad(nullptr, 3);
  const auto r = dlpackpp::try_from_mdspan(bad, std::move(owner));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::null_data);
  ASSERT_TRUE(owner);
  EXPECT_EQ(*owner, 7);
}

}  // namespace
