// SPDX-License-Identifier: Apache-2.0
// libtorch's import and export, for the instruction-count table. Its own TU: libtorch brings
// its own DLPack 0.6 dlpack.h, which cannot share a TU with dlpackpp's 1.3 header.
#include "torch_side.hpp"

#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

namespace {
at::Tensor g_tensor;

template <class T>
inline void keep(const T& value) {
  asm volatile("" : : "g"(&value) : "memory");
}
}  // namespace

void torch_prepare(float* data, const std::int64_t* shape, int ndim) {
  g_tensor = at::from_blob(data, at::IntArrayRef(shape, static_cast<std::size_t>(ndim)),
                           at::TensorOptions().dtype(at::kFloat));
}

void torch_consume(DLManagedTensor* tensor) {
  const at::Tensor t = at::fromDLPack(tensor);
  const void* data = t.data_ptr();
  const std::int64_t numel = t.numel();
  const bool contiguous = t.is_contiguous();
  keep(data), keep(numel), keep(contiguous);
}  // the deleter runs here, as the Tensor's last reference goes

void torch_export_release() {
  DLManagedTensor* exported = at::toDLPack(g_tensor);
  keep(exported);
  exported->deleter(exported);
}
