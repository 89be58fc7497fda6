// SPDX-License-Identifier: Apache-2.0
// The seam between the two translation units: plain functions over the C struct. libtorch
// ships its own DLPack 0.6 `ATen/dlpack.h` with the same include guard as every dlpack.h, so
// a TU includes either libtorch or dlpackpp's (1.3) header, never both; DLManagedTensor has
// the same layout in both versions, which is what lets the pointer cross.
#pragma once

#include <cstdint>

struct DLManagedTensor;

/// A float32 tensor 0, 1, ..., n-1 made by libtorch and exported with at::toDLPack; its
/// deleter also counts itself in torch_deletes().
DLManagedTensor* torch_export_arange(std::int64_t n);

/// How many tensors exported by torch_export_arange have been released.
int torch_deletes();

/// Takes ownership of `tensor` with at::fromDLPack, returns the sum libtorch computes, and
/// lets libtorch release it (through the producer's deleter) before returning.
double torch_sum_and_release(DLManagedTensor* tensor);
