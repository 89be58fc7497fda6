// SPDX-License-Identifier: Apache-2.0
// The typed check the comparison modules share: float64, 1-d, contiguous (what
// nb::ndarray<const double, ndim<1>, c_contig> checks), then element 0, written as plain
// comparisons. One definition, so every module times the same code.
#pragma once

#include <dlpackpp/dlpackpp.hpp>

namespace bench {
inline dlpackpp::Result<double> first_of(const dlpackpp::TensorView& v) {
  if (v.dtype() != dlpackpp::DataType::float64() || v.ndim() != 1 || !v.is_contiguous()) {
    return dlpackpp::Error(dlpackpp::Errc::invalid_argument, "expected float64, 1-d, contiguous");
  }
  if (v.numel() == 0) return 0.0;
  dlpackpp::Result<const double*> p = v.try_data<const double>();
  if (!p) return p.error();
  return (*p)[0];
}
}  // namespace bench
