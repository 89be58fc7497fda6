// SPDX-License-Identifier: Apache-2.0
// for_each_element / for_each_indexed against a brute-force odometer over many layouts: C,
// Fortran, permuted, padded, negative strides, size-1 dimensions, broadcast (stride 0), empty,
// 0-d and ranks up to 70; plus the checks they share with TensorView::data<T>().
#include <gtest/gtest.h>

#include "support/expect_error.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <dlpackpp/iterate.hpp>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {
// A user's 4-bit integer, known to dlpackpp only through dtype_traits.
struct Int4 {
  std::uint8_t bits;
};
}  // namespace

template <>
struct dlpackpp::dtype_traits<Int4> {
  static constexpr DLDataType value = {dlpackpp::dtype_code::int_, 4, 1};
};

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp::IntSpan;
using dlpackpp::TensorView;
using dlpackpp_test::expect_error;
using Ints = std::vector<std::int64_t>;

// A buffer and a view over it with the given strides; the first element sits at whatever
// offset keeps every strided address inside the buffer.
struct Strided {
  std::vector<float> buffer;
  Ints shape;
  Ints strides;
  std::int64_t first = 0;  // index into buffer of element (0, ..., 0)

  Strided(Ints shape_in, Ints strides_in, bool use_byte_offset = false)
      : shape(std::move(shape_in)), strides(std::move(strides_in)) {
    std::int64_t low = 0, high = 0;
    bool empty = false;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 0) empty = true;
      const std::int64_t reach = strides[d] * (shape[d] == 0 ? 0 : shape[d] - 1);
      (reach < 0 ? low : high) += reach;
    }
    buffer.resize(empty ? 1 : static_cast<std::size_t>(high - low + 1));
    std::iota(buffer.begin(), buffer.end(), 0.0f);
    first = -low;
    byte_offset = use_byte_offset ? static_cast<std::uint64_t>(first) * sizeof(float) : 0;
  }

  TensorView view() {
    float* base = buffer.data() + (byte_offset == 0 ? first : 0);
    return TensorView(base, DataType::float32(), shape, strides, Device::cpu(), byte_offset);
  }

  // (index -> buffer position) for every index, by a row-major odometer.
  std::map<Ints, std::int64_t> brute_force() const {
    std::map<Ints, std::int64_t> out;
    for (std::int64_t e : shape) {
      if (e == 0) return out;
    }
    Ints index(shape.size(), 0);
    for (;;) {
      std::int64_t at = first;
      for (std::size_t d = 0; d < shape.size(); ++d) at += index[d] * strides[d];
      out.emplace(index, at);
      std::size_t d = shape.size();
      while (d > 0) {
        --d;
        if (++index[d] < shape[d]) break;
        index[d] = 0;
        if (d == 0) return out;
      }
      if (shape.empty()) return out;
    }
  }

  std::uint64_t byte_offset = 0;
};

// Compact strides for `shape` laid out in `order` (outermost first), each dimension's step
// multiplied by `pad` and negated where `flip` says.
Ints layout(const Ints& shape, const std::vector<int>& order, std::int64_t pad,
            const std::vector<bool>& flip) {
  Ints strides(shape.size(), 0);
  std::int64_t running = 1;
  for (std::size_t k = order.size(); k > 0; --k) {
    const auto d = static_cast<std::size_t>(order[k - 1]);
    strides[d] = flip[d] ? -running : running;
    running *= std::max<std::int64_t>(shape[d], 1) * pad;
  }
  return strides;
}

// Runs both walks over `s` and checks them against the brute force.
void check_walks(Strided& s, bool expect_ascending, const std::string& what) {
  SCOPED_TRACE(what);
  TensorView v = s.view();
  const std::map<Ints, std::int64_t> expected = s.brute_force();
  const float* base = s.buffer.data();

  std::vector<std::int64_t> visited;
  dlpackpp::for_each_element<const float>(v, [&](const float& x) { visited.push_back(&x - base); });
  std::vector<std::int64_t> expected_positions;
  for (const auto& entry : expected) expected_positions.push_back(entry.second);
  std::vector<std::int64_t> sorted_visits = visited;
  std::sort(sorted_visits.begin(), sorted_visits.end());
  std::sort(expected_positions.begin(), expected_positions.end());
  EXPECT_EQ(sorted_visits, expected_positions) << "every element once per index";
  if (expect_ascending) {
    EXPECT_TRUE(std::is_sorted(visited.begin(), visited.end())) << "ascending addresses";
    EXPECT_EQ(std::adjacent_find(visited.begin(), visited.end()), visited.end());
  }

  std::map<Ints, std::int64_t> seen;
  std::vector<std::int64_t> indexed_order;
  dlpackpp::for_each_indexed<const float>(v, [&](IntSpan index, const float& x) {
    ASSERT_EQ(index.size(), s.shape.size());
    const bool fresh = seen.emplace(Ints(index.begin(), index.end()), &x - base).second;
    EXPECT_TRUE(fresh) << "index visited twice";
    indexed_order.push_back(&x - base);
  });
  EXPECT_EQ(seen, expected) << "each index with its own element";
  EXPECT_EQ(indexed_order, visited) << "both walks take the same order";

  // The row-major copy: the brute force's map is ordered by index, which is row-major.
  std::vector<float> copied(expected.size(), -1.0f);
  dlpackpp::copy_row_major(v, copied.data());
  std::vector<float> row_major;
  for (const auto& entry : expected) {
    row_major.push_back(s.buffer[static_cast<std::size_t>(entry.second)]);
  }
  EXPECT_EQ(copied, row_major) << "copy_row_major";
}

TEST(Iterate, LayoutsAgainstBruteForce) {
  const std::vector<Ints> shapes = {{5},       {3, 4},       {4, 1, 3},       {2, 3, 4},
                                    {1, 1, 1}, {2, 2, 2, 2}, {3, 1, 2, 1, 4}, {7, 5}};
  for (const Ints& shape : shapes) {
    std::vector<int> order(shape.size());
    std::iota(order.begin(), order.end(), 0);
    const std::vector<bool> none(shape.size(), false);
    std::vector<bool> all(shape.size(), true);
    std::vector<bool> alternate(shape.size(), false);
    for (std::size_t d = 0; d < shape.size(); d += 2) alternate[d] = true;
    std::vector<int> reversed(order.rbegin(), order.rend());
    std::vector<std::vector<int>> orders = {order, reversed};
    std::vector<int> rotated = order;
    std::rotate(rotated.begin(), rotated.begin() + 1, rotated.end());
    orders.push_back(rotated);
    for (const auto& o : orders) {
      for (const auto& flip : {none, all, alternate}) {
        for (std::int64_t pad : {1, 2}) {
          for (bool use_offset : {false, true}) {
            Strided s(shape, layout(shape, o, pad, flip), use_offset);
            check_walks(
                s, pad == 1,
                testing::PrintToString(s.shape) + " strides " + testing::PrintToString(s.strides));
          }
        }
      }
    }
  }
}

TEST(Iterate, RandomLayoutsUpToRankTen) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 300; ++trial) {
    const int ndim = static_cast<int>(rng() % 11);
    Ints shape(static_cast<std::size_t>(ndim));
    std::int64_t numel = 1;
    for (auto& e : shape) {
      e = static_cast<std::int64_t>(rng() % (numel > 256 ? 2 : 4));
      if (trial % 7 != 0 && e == 0) e = 1;  // keep most of them non-empty
      numel *= std::max<std::int64_t>(e, 1);
    }
    std::vector<int> order(shape.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<bool> flip(shape.size());
    for (std::size_t d = 0; d < flip.size(); ++d) flip[d] = rng() % 3 == 0;
    const std::int64_t pad = rng() % 4 == 0 ? 2 : 1;
    Strided s(shape, layout(shape, order, pad, flip), rng() % 2 == 0);
    check_walks(s, true,  // compact or padded, the strides nest: ascending addresses
                "trial " + std::to_string(trial) + " " + testing::PrintToString(s.shape) +
                    " strides " + testing::PrintToString(s.strides));
  }
}

TEST(Iterate, NonCompactAndOverlapping) {
  // Interleaved strides that no permutation makes compact, and a broadcast dimension.
  Strided interleaved({2, 3}, {3, 2});
  check_walks(interleaved, false, "interleaved");
  // One-to-one but not nested: walked in stride order (dimension 0 outermost), as documented,
  // which is not ascending.
  std::vector<std::int64_t> order;
  const float* base = interleaved.buffer.data();
  dlpackpp::for_each_element<const float>(interleaved.view(),
                                          [&](const float& x) { order.push_back(&x - base); });
  EXPECT_EQ(order, (Ints{0, 2, 4, 3, 5, 7}));
  Strided broadcast({4, 3}, {0, 1});
  check_walks(broadcast, false, "broadcast rows");
  Strided all_same({3, 2}, {0, 0});
  check_walks(all_same, false, "one element everywhere");
}

TEST(Iterate, ZeroDimAndEmpty) {
  float scalar = 42.0f;
  TensorView zero_dim(&scalar, DataType::float32(), {});
  int calls = 0;
  dlpackpp::for_each_element<float>(zero_dim, [&](float& x) {
    ++calls;
    x = 7.0f;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(scalar, 7.0f);
  dlpackpp::for_each_indexed<const float>(zero_dim, [&](IntSpan index, const float& x) {
    ++calls;
    EXPECT_TRUE(index.empty());
    EXPECT_EQ(x, 7.0f);
  });
  EXPECT_EQ(calls, 2);

  for (const Ints& shape : {Ints{0}, Ints{3, 0}, Ints{0, 5, 2}}) {
    TensorView empty(nullptr, DataType::float32(), shape);
    dlpackpp::for_each_element<float>(empty, [&](float&) { ++calls; });
    dlpackpp::for_each_indexed<float>(empty, [&](IntSpan, float&) { ++calls; });
  }
  EXPECT_EQ(calls, 2) << "an empty tensor has nothing to visit";
}

TEST(Iterate, HighRanks) {
  // Rank 12 with extent 2 everywhere, reversed order, and rank 70 mostly of size-1 dims
  // (more dimensions than the loop nest has slots, so the index lives on the heap).
  Ints shape(12, 2);
  std::vector<int> order(12);
  std::iota(order.rbegin(), order.rend(), 0);
  Strided fortran(shape, layout(shape, order, 1, std::vector<bool>(12, false)));
  check_walks(fortran, true, "rank 12 Fortran");

  Ints tall(70, 1);
  tall[3] = 3;
  tall[68] = 2;
  std::vector<int> tall_order(70);
  std::iota(tall_order.begin(), tall_order.end(), 0);
  std::vector<bool> flip(70, false);
  flip[68] = true;
  Strided s(tall, layout(tall, tall_order, 1, flip));
  check_walks(s, true, "rank 70");
}

TEST(Iterate, WritesThroughMutableElements) {
  std::vector<float> values(12, 0.0f);
  // Transposed 3x4 view of a 4x3 row-major buffer.
  TensorView v(values.data(), DataType::float32(), {3, 4}, {1, 3});
  dlpackpp::for_each_indexed<float>(
      v, [](IntSpan i, float& x) { x = static_cast<float>(10 * i[0] + i[1]); });
  for (std::int64_t r = 0; r < 3; ++r) {
    for (std::int64_t c = 0; c < 4; ++c) {
      EXPECT_EQ(values[static_cast<std::size_t>(r + 3 * c)], static_cast<float>(10 * r + c));
    }
  }
  float sum = 0;
  dlpackpp::for_each_element<const float>(v, [&](float x) { sum += x; });
  EXPECT_EQ(sum, 4 * (0 + 10 + 20) + 3 * (0 + 1 + 2 + 3));
}

TEST(Iterate, ChecksAsTypedAccessDoes) {
  std::vector<float> values(8, 1.0f);
  TensorView v(values.data(), DataType::float32(), {2, 4});
  const auto noop = [](auto&&...) {};
  expect_error([&] { dlpackpp::for_each_element<const double>(v, noop); }, Errc::dtype_mismatch);
  expect_error([&] { dlpackpp::for_each_indexed<const int>(v, noop); }, Errc::dtype_mismatch);

  dlpackpp::ValidateOptions read_only;
  read_only.flags = dlpackpp::flag::read_only;
  const DLTensor t = v.to_dltensor();
  TensorView ro(t, read_only);
  expect_error([&] { dlpackpp::for_each_element<float>(ro, noop); }, Errc::read_only);
  expect_error([&] { dlpackpp::for_each_indexed<float>(ro, noop); }, Errc::read_only);
  EXPECT_TRUE(dlpackpp::try_for_each_element<const float>(ro, noop));

  TensorView misaligned(values.data(), DataType::float32(), {2}, {}, Device::cpu(), 2);
  const auto r = dlpackpp::try_for_each_element<const float>(misaligned, noop);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::misaligned);

  TensorView on_gpu(values.data(), DataType::float32(), {2, 4}, {}, Device::cuda(0));
  expect_error([&] { dlpackpp::for_each_element<const float>(on_gpu, noop); },
               Errc::device_mismatch, "cuda:0");
  std::vector<float> sink(8);
  expect_error([&] { dlpackpp::copy_row_major(on_gpu, sink.data()); }, Errc::device_mismatch,
               "cuda:0");
  TensorView managed(values.data(), DataType::float32(), {8}, {}, Device::cuda_managed(0));
  int calls = 0;
  dlpackpp::for_each_element<const float>(managed, [&](float) { ++calls; });
  EXPECT_EQ(calls, 8) << "managed memory is host-accessible";

  Int4 packed[4] = {};
  TensorView int4(packed, dlpackpp::dtype_of<Int4>, {8});
  expect_error([&] { dlpackpp::for_each_element<const Int4>(int4, noop); }, Errc::unsupported_dtype,
               "packed");
  dlpackpp::ValidateOptions padded;
  padded.flags = dlpackpp::flag::is_subbyte_type_padded;
  const DLTensor padded_tensor = int4.to_dltensor();
  calls = 0;
  dlpackpp::for_each_element<const Int4>(TensorView(padded_tensor, padded), [&](Int4) { ++calls; });
  EXPECT_EQ(calls, 8) << "padded sub-byte elements are addressable";

  // Packed sub-byte elements are copied as bytes when contiguous, refused when strided.
  unsigned char nibbles[4] = {0x21, 0x43, 0x65, 0x87};
  unsigned char copied[4] = {};
  dlpackpp::copy_row_major(TensorView(nibbles, dlpackpp::dtype_of<Int4>, {8}), copied);
  EXPECT_EQ(std::memcmp(copied, nibbles, 4), 0);
  expect_error(
      [&] {
        dlpackpp::copy_row_major(TensorView(nibbles, dlpackpp::dtype_of<Int4>, {2, 2}, {1, 2}),
                                 copied);
      },
      Errc::not_contiguous, "packed");
}

}  // namespace
