/* SPDX-License-Identifier: Apache-2.0 */
/* An LD_PRELOAD shim that counts calls into the C heap (malloc, calloc, realloc and the
 * aligned forms; operator new lands in them too) so that bench.py --count-mallocs can report
 * heap allocations per call. It forwards to glibc's own entry points, so it needs glibc.
 * Python's small-object allocator (pymalloc) does not call malloc and is not counted. */
#include <errno.h>
#include <stddef.h>

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t count, size_t size);
extern void* __libc_realloc(void* p, size_t size);
extern void* __libc_memalign(size_t alignment, size_t size);

static unsigned long long calls;

static void count(void) { __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED); }

/* Read through ctypes by bench.py. */
__attribute__((visibility("default"))) unsigned long long bench_malloc_count(void) {
  return __atomic_load_n(&calls, __ATOMIC_RELAXED);
}

__attribute__((visibility("default"))) void* malloc(size_t size) {
  count();
  return __libc_malloc(size);
}
__attribute__((visibility("default"))) void* calloc(size_t n, size_t size) {
  count();
  return __libc_calloc(n, size);
}
__attribute__((visibility("default"))) void* realloc(void* p, size_t size) {
  count();
  return __libc_realloc(p, size);
}
__attribute__((visibility("default"))) void* memalign(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
__attribute__((visibility("default"))) void* aligned_alloc(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
__attribute__((visibility("default"))) int posix_memalign(void** out, size_t alignment,
                                                          size_t size) {
  void* p;
  count();
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  p = __libc_memalign(alignment, size);
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}
