// SPDX-License-Identifier: Apache-2.0
// What both stress modules make and check: 1-d tensors holding 0, 1, ..., n-1 in one of four
// dtypes, and the (dtype name, sum) of any view, so that stress.py can assert every result.
#pragma once

#include <dlpackpp/dlpackpp.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ft {

// 0, 1, ..., n-1 as T[n].
template <class T>
dlpackpp::ManagedTensor iota(std::int64_t n) {
  std::vector<T> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(i);
  return dlpackpp::from_vector(std::move(values), {n});
}

// iota in the dtype stress.py names: "float32", "float64", "int32" or "int64".
inline dlpackpp::Result<dlpackpp::ManagedTensor> make(std::int64_t n, const std::string& dtype) {
  if (n < 0) return dlpackpp::Error(dlpackpp::Errc::invalid_argument, "n < 0");
  if (dtype == "float32") return iota<float>(n);
  if (dtype == "float64") return iota<double>(n);
  if (dtype == "int32") return iota<std::int32_t>(n);
  if (dtype == "int64") return iota<std::int64_t>(n);
  return dlpackpp::Error(dlpackpp::Errc::dtype_mismatch, "unknown dtype " + dtype);
}

// The sum of a host view of one of those dtypes, any layout.
template <class T>
dlpackpp::Result<double> sum_as(const dlpackpp::TensorView& view) {
  double total = 0;
  dlpackpp::Result<void> done = dlpackpp::try_for_each_element<const T>(
      view, [&total](T x) { total += static_cast<double>(x); });
  if (!done) return done.error();
  return total;
}

// (dtype name, sum) of `view`.
inline dlpackpp::Result<std::pair<std::string, double>> describe(const dlpackpp::TensorView& view) {
  dlpackpp::Result<double> total = dlpackpp::Error(dlpackpp::Errc::dtype_mismatch,
                                                   "unexpected dtype " + view.dtype().to_string());
  if (view.dtype() == dlpackpp::DataType::float32()) total = sum_as<float>(view);
  if (view.dtype() == dlpackpp::DataType::float64()) total = sum_as<double>(view);
  if (view.dtype() == dlpackpp::DataType::int32()) total = sum_as<std::int32_t>(view);
  if (view.dtype() == dlpackpp::DataType::int64()) total = sum_as<std::int64_t>(view);
  if (!total) return total.error();
  return std::make_pair(view.dtype().to_string(), *total);
}

}  // namespace ft
