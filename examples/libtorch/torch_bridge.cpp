// SPDX-License-Identifier: Apache-2.0
// The libtorch side: this TU sees only libtorch's headers (and so its DLPack 0.6 dlpack.h).
#include "torch_bridge.hpp"

#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

namespace {
int g_deletes = 0;

// Wraps libtorch's deleter so the example can prove it runs exactly once.
struct Counted {
  DLManagedTensor* inner;
};

void counted_deleter(DLManagedTensor* self) {
  auto* counted = static_cast<Counted*>(self->manager_ctx);
  DLManagedTensor* inner = counted->inner;
  delete counted;
  delete self;
  if (inner->deleter != nullptr) inner->deleter(inner);
  ++g_deletes;
}
}  // namespace

DLManagedTensor* torch_export_arange(std::int64_t n) {
  DLManagedTensor* inner = at::toDLPack(at::arange(n, at::kFloat));
  auto* outer = new DLManagedTensor(*inner);
  outer->manager_ctx = new Counted{inner};
  outer->deleter = &counted_deleter;
  return outer;
}

int torch_deletes() { return g_deletes; }

double torch_sum_and_release(DLManagedTensor* tensor) {
  double sum = 0;
  {
    const at::Tensor t = at::fromDLPack(tensor);
    sum = t.sum().item<double>();
  }  // the last reference: libtorch calls the producer's deleter here
  return sum;
}
