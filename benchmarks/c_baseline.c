/* SPDX-License-Identifier: Apache-2.0 */
/* Hand-written C export/consume pair; see c_baseline.h. */
#include "c_baseline.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
  DLManagedTensorVersioned managed;
  int64_t shape[2];
  int64_t strides[2];
} CMatrixExport;

static void c_delete_matrix(DLManagedTensorVersioned* self) { free(self->manager_ctx); }

DLManagedTensorVersioned* c_export_matrix(float* data, int64_t rows, int64_t cols) {
  CMatrixExport* e = (CMatrixExport*)calloc(1, sizeof(CMatrixExport));
  if (e == NULL) return NULL;
  e->shape[0] = rows;
  e->shape[1] = cols;
  e->strides[0] = cols;
  e->strides[1] = 1;
  e->managed.version.major = DLPACK_MAJOR_VERSION;
  e->managed.version.minor = DLPACK_MINOR_VERSION;
  e->managed.manager_ctx = e;
  e->managed.deleter = c_delete_matrix;
  e->managed.dl_tensor.data = data;
  e->managed.dl_tensor.device.device_type = kDLCPU;
  e->managed.dl_tensor.ndim = 2;
  e->managed.dl_tensor.dtype.code = kDLFloat;
  e->managed.dl_tensor.dtype.bits = 32;
  e->managed.dl_tensor.dtype.lanes = 1;
  e->managed.dl_tensor.shape = e->shape;
  e->managed.dl_tensor.strides = e->strides;
  return &e->managed;
}

double c_consume_sum(DLManagedTensorVersioned* t) {
  double sum = NAN;
  if (t->version.major == DLPACK_MAJOR_VERSION) {
    const DLTensor* x = &t->dl_tensor;
    if (x->ndim == 2 && x->dtype.code == kDLFloat && x->dtype.bits == 32 && x->dtype.lanes == 1) {
      const float* base = (const float*)((uintptr_t)x->data + (uintptr_t)x->byte_offset);
      const int64_t s0 = x->strides ? x->strides[0] : x->shape[1];
      const int64_t s1 = x->strides ? x->strides[1] : 1;
      sum = 0.0;
      for (int64_t i = 0; i < x->shape[0]; ++i) {
        for (int64_t j = 0; j < x->shape[1]; ++j) sum += base[i * s0 + j * s1];
      }
    }
  }
  if (t->deleter != NULL) t->deleter(t);
  return sum;
}
