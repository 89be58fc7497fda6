// SPDX-License-Identifier: Apache-2.0
// A DLPack round trip: a "producer" library exports a std::vector as a raw C tensor, a
// "consumer" adopts it, checks it, reads it through a view and an accessor, and the
// producer's deleter runs exactly when the consumer lets go.
#include <dlpackpp/dlpackpp.hpp>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <vector>

namespace producer {

// What the consumer eventually releases: the producer learns about it in this destructor.
struct Storage {
  std::vector<float> values;
  Storage(Storage&&) noexcept = default;
  explicit Storage(std::vector<float> v) : values(std::move(v)) {}
  ~Storage() {
    if (!values.empty())
      std::cout << "producer: deleter ran, buffer of " << values.size() << " floats freed\n";
  }
};

// The C boundary: a framework hands out a raw DLManagedTensorVersioned* (or, on a pre-1.0
// dlpack.h, a DLManagedTensor*) and forgets about it.
dlpackpp::DefaultManagedTensor::managed_type* export_matrix(std::int64_t rows, std::int64_t cols) {
  Storage storage(std::vector<float>(static_cast<std::size_t>(rows * cols)));
  for (std::size_t i = 0; i < storage.values.size(); ++i)
    storage.values[i] = 0.5f * static_cast<float>(i);
  void* data = storage.values.data();
  const std::int64_t shape[] = {rows, cols};
  return dlpackpp::wrap(data, dlpackpp::dtype_of<float>, shape, {}, dlpackpp::Device::cpu(),
                        std::move(storage))
      .release();
}

}  // namespace producer

namespace consumer {

// Sums each row through a typed 2-D accessor; the checks happened when it was made.
std::vector<float> row_sums(const dlpackpp::TensorView& view) {
  auto x = view.require_dtype<float>().require_ndim(2).accessor<const float, 2>();
  std::vector<float> sums(static_cast<std::size_t>(x.size(0)), 0.0f);
  for (std::int64_t i = 0; i < x.size(0); ++i) {
    for (std::int64_t j = 0; j < x.size(1); ++j) sums[static_cast<std::size_t>(i)] += x(i, j);
  }
  return sums;
}

}  // namespace consumer

int main() {
  using namespace dlpackpp;
  std::cout << "dlpackpp " << DLPACKPP_VERSION_MAJOR << '.' << DLPACKPP_VERSION_MINOR << '.'
            << DLPACKPP_VERSION_PATCH << " on dlpack.h " << DLPACKPP_DLPACK_MAJOR << '.'
            << DLPACKPP_DLPACK_MINOR << (DLPACKPP_DLPACK_IS_BUNDLED ? " (bundled)" : "")
            << (DLPACKPP_HAS_VERSIONED ? ", versioned tensors" : ", legacy tensors only") << "\n\n";

  auto* raw = producer::export_matrix(3, 4);
  std::cout << "producer: exported a raw tensor at " << static_cast<const void*>(raw) << '\n';
  {
    // Validated once; `tensor` owns it and `view` reads it while `tensor` does.
    const auto [tensor, view] = DefaultManagedTensor::adopt_with_view(raw);
    std::cout << "consumer: adopted " << view << ", " << view.numel() << " elements, "
              << view.nbytes() << " bytes, contiguous: " << (view.is_contiguous() ? "yes" : "no")
              << '\n';

    auto x = view.accessor<const float, 2>();
    std::cout << "consumer: x(2, 3) = " << x(2, 3) << ", x[1][2] = " << x[1][2] << '\n';
    const std::vector<float> sums = consumer::row_sums(view);
    std::cout << "consumer: row sums";
    for (float s : sums) std::cout << ' ' << s;
    std::cout << '\n';
    if (sums.size() != 3 || sums[2] != 0.5f * (8 + 9 + 10 + 11)) return EXIT_FAILURE;

    try {
      view.require_dtype<double>();
      return EXIT_FAILURE;
    } catch (const Error& e) {
      std::cout << "consumer: asking for float64 fails as it should: " << e.what() << '\n';
    }
    std::cout << "consumer: done with the tensor\n";
  }  // the handle releases the tensor here, exactly once

  std::cout << "\nDevices and dtypes round-trip through their names:";
  for (const Device d : {Device::cpu(), Device::cuda(1), Device::cuda_host(), Device::trn(2)}) {
    if (Device::parse(d.to_string()) != d) return EXIT_FAILURE;
    std::cout << ' ' << d;
  }
  for (const DataType t : {DataType::bfloat16(), DataType::float8_e4m3fn(),
                           DataType::float4_e2m1fn(), DataType(dtype_code::int_, 32, 4)}) {
    if (DataType::parse(t.to_string()) != t) return EXIT_FAILURE;
    std::cout << ' ' << t;
  }
  std::cout << '\n';
  return EXIT_SUCCESS;
}
