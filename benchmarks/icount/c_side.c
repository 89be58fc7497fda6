/* SPDX-License-Identifier: Apache-2.0 */
/* Hand-written C: the producer (the consumers are inline, in c_side.h). */
#include "c_side.h"

#include <stdlib.h>

static void c_free_export(DLManagedTensorVersioned* self) { free(self->manager_ctx); }

DLManagedTensorVersioned* c_export(float* data, const int64_t* shape, int32_t ndim) {
  const size_t arrays = 2 * (size_t)ndim * sizeof(int64_t);
  DLManagedTensorVersioned* t = (DLManagedTensorVersioned*)malloc(sizeof(*t) + arrays);
  if (t == NULL) return NULL;
  int64_t* out_shape = (int64_t*)(t + 1);
  int64_t* out_strides = out_shape + ndim;
  int64_t running = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    if (shape[d] < 0) {
      free(t);
      return NULL;
    }
    out_shape[d] = shape[d];
    out_strides[d] = running;
    if (__builtin_mul_overflow(running, shape[d] > 0 ? shape[d] : 1, &running)) {
      free(t);
      return NULL;
    }
  }
  t->version.major = DLPACK_MAJOR_VERSION;
  t->version.minor = DLPACK_MINOR_VERSION;
  t->manager_ctx = t;
  t->deleter = c_free_export;
  t->flags = 0;
  t->dl_tensor.data = data;
  t->dl_tensor.device.device_type = kDLCPU;
  t->dl_tensor.device.device_id = 0;
  t->dl_tensor.ndim = ndim;
  t->dl_tensor.dtype.code = kDLFloat;
  t->dl_tensor.dtype.bits = 32;
  t->dl_tensor.dtype.lanes = 1;
  t->dl_tensor.shape = out_shape;
  t->dl_tensor.strides = out_strides;
  t->dl_tensor.byte_offset = 0;
  return t;
}
