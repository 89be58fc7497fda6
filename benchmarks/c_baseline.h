/* SPDX-License-Identifier: Apache-2.0 */
/* The hand-written C that dlpackpp is measured against: what a careful C programmer writes
 * to export and consume a 2-D float32 DLPack tensor, with the minimum of checks. */
#ifndef DLPACKPP_BENCH_C_BASELINE_H
#define DLPACKPP_BENCH_C_BASELINE_H

#include "dlpackpp/bundled/dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exports `data` (not owned) as a rows x cols row-major float32 tensor: one malloc for the
 * struct with shape and strides, freed by the deleter. */
DLManagedTensorVersioned* c_export_matrix(float* data, int64_t rows, int64_t cols);

/* Checks version, dtype and rank, sums the elements through the strides, then releases the
 * tensor. Returns NaN when the tensor is refused. */
double c_consume_sum(DLManagedTensorVersioned* t);

#ifdef __cplusplus
}
#endif

#endif
