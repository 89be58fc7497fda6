// SPDX-License-Identifier: Apache-2.0
// The tests' one hand-made producer: a DLManagedTensor(Versioned) built from the C structs
// alone, so that counting its deleter does not depend on the code under test. One heap object
// owns the struct, its arrays and the elements; the deleter counts, then frees it.
#pragma once

#include <dlpackpp/dlpack.hpp>
#include <dlpackpp/dtype.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace dlpackpp_test {

/// What the hand-made producer exports; the default is a valid 2x3 float32 with NULL strides.
struct Layout {
  dlpackpp::DataType dtype = dlpackpp::DataType::float32();
  std::vector<std::int64_t> shape{2, 3};
  std::vector<std::int64_t> strides{};  // empty: the producer sends NULL
  std::uint64_t flags = 0;              // versioned tensors only
  std::uint64_t byte_offset = 0;
  DLDevice device{kDLCPU, 0};
  std::vector<float> values{};  // copied to the start of the buffer when given
};

/// A producer's allocation; `Counter` is anything `++` counts on (an int, an atomic).
template <class M, class Counter = int>
struct HandMade {
  M managed{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  std::vector<std::uint64_t> storage;
  Counter* deletes = nullptr;

  /// The deleter: counts once, then frees everything.
  static void count_and_free(M* self) {
    auto* made = static_cast<HandMade*>(self->manager_ctx);
    ++*made->deletes;
    delete made;
  }
  /// For tensors the handle must never release (NULL deleter, release()).
  static void free_uncounted(M* self) { delete static_cast<HandMade*>(self->manager_ctx); }
};

/// A tensor of `layout` whose deleter adds one to `deletes`.
template <class M, class Counter = int>
M* make_counted(Counter& deletes, const Layout& layout = {}) {
  auto* made = new HandMade<M, Counter>{};
  made->shape = layout.shape;
  made->strides = layout.strides;
  // Any zero (or, for malformed layouts, negative) extent first: the others may then
  // multiply past int64.
  std::int64_t numel = 1;
  for (std::int64_t extent : layout.shape) numel = extent <= 0 ? 0 : numel;
  for (std::size_t d = 0; d < layout.shape.size() && numel != 0; ++d) numel *= layout.shape[d];
  // Padded size is the larger one; one spare word keeps data non-NULL for empty tensors, and
  // the values and the byte offset get room of their own.
  const auto bytes = static_cast<std::size_t>(layout.dtype.storage_bytes(numel, true));
  const std::size_t words = (bytes + static_cast<std::size_t>(layout.byte_offset) +
                             layout.values.size() * sizeof(float)) /
                            8;
  made->storage.assign(words + 1, 0);
  if (!layout.values.empty()) {
    std::memcpy(made->storage.data(), layout.values.data(), layout.values.size() * sizeof(float));
  }
  made->deletes = &deletes;

  M& m = made->managed;
  m.dl_tensor.data = made->storage.data();
  m.dl_tensor.byte_offset = layout.byte_offset;
  m.dl_tensor.device = layout.device;
  m.dl_tensor.ndim = static_cast<decltype(m.dl_tensor.ndim)>(made->shape.size());
  m.dl_tensor.dtype = layout.dtype;
  m.dl_tensor.shape = made->shape.empty() ? nullptr : made->shape.data();
  m.dl_tensor.strides = made->strides.empty() ? nullptr : made->strides.data();
  m.manager_ctx = made;
  m.deleter = &HandMade<M, Counter>::count_and_free;
#if DLPACKPP_HAS_VERSIONED
  if constexpr (std::is_same<M, DLManagedTensorVersioned>::value) {
    m.version.major = DLPACK_MAJOR_VERSION;
    m.version.minor = DLPACK_MINOR_VERSION;
    m.flags = layout.flags;
  }
#endif
  return &m;
}

}  // namespace dlpackpp_test
