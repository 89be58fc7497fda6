// SPDX-License-Identifier: Apache-2.0
// A PyTorch C++ extension (torch.utils.cpp_extension, the PyPI wheel's headers and pybind11)
// whose ops take and return dlpackpp types next to torch's own: see build_and_run.py.
#include <torch/extension.h>

#include <dlpackpp/pybind11.hpp>

#include <cstdint>
#include <vector>

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  // Any float32 2-d tensor that speaks DLPack (torch, NumPy, JAX...), written in place.
  m.def("scale_", [](dlpackpp::TensorAccessor<float, 2> x, float k) {
    for (std::int64_t i = 0; i < x.size(0); ++i)
      for (std::int64_t j = 0; j < x.size(1); ++j) x(i, j) *= k;
  });
  // Read through a dlpackpp accessor, answer with a torch::Tensor.
  m.def("row_sums", [](dlpackpp::TensorAccessor<const float, 2> x) {
    torch::Tensor out = torch::zeros({x.size(0)}, torch::kFloat32);
    auto sums = out.accessor<float, 1>();
    for (std::int64_t i = 0; i < x.size(0); ++i)
      for (std::int64_t j = 0; j < x.size(1); ++j) sums[i] += x(i, j);
    return out;
  });
  // A C++ buffer handed to Python as a dlpackpp.Tensor (torch.from_dlpack takes it zero-copy).
  m.def("ramp", [](std::int64_t n) {
    std::vector<float> values(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    return dlpackpp::from_vector(std::move(values), {n});
  });
}
