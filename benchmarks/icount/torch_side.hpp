// SPDX-License-Identifier: Apache-2.0
// libtorch's side of the instruction-count benchmark (built when libtorch is found).
#pragma once

#include <cstdint>

struct DLManagedTensor;

/// Makes the tensor torch_export_release() exports: `data` viewed with `shape`.
void torch_prepare(float* data, const std::int64_t* shape, int ndim);
/// at::fromDLPack of a legacy tensor, then the facts a consumer reads, then release.
void torch_consume(DLManagedTensor* tensor);
/// at::toDLPack of the prepared tensor, then its deleter.
void torch_export_release();
