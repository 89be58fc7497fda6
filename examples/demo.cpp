// SPDX-License-Identifier: Apache-2.0
// A tour of dlpackpp's value types: every DLPack device and data type, named and parsed back.
#include <dlpackpp/dlpackpp.hpp>

#include <cstdlib>
#include <iostream>

int main() {
  using dlpackpp::DataType;
  using dlpackpp::Device;

  std::cout << "dlpackpp " << DLPACKPP_VERSION_MAJOR << '.' << DLPACKPP_VERSION_MINOR << '.'
            << DLPACKPP_VERSION_PATCH << " on dlpack.h " << DLPACKPP_DLPACK_MAJOR << '.'
            << DLPACKPP_DLPACK_MINOR << (DLPACKPP_DLPACK_IS_BUNDLED ? " (bundled)" : "") << "\n\n";

  const Device devices[] = {Device::cpu(),        Device::cuda(1),     Device::cuda_host(),
                            Device::cuda_managed(), Device::rocm(2),   Device::rocm_host(),
                            Device::opencl(),     Device::vulkan(),    Device::metal(),
                            Device::oneapi(),     Device::webgpu(),    Device::hexagon(),
                            Device::maia(),       Device::trn(3),      Device::ext_dev(),
                            Device::vpi()};
  std::cout << "devices:\n";
  for (const Device& d : devices) {
    const Device back = Device::parse(d.to_string());
    std::cout << "  " << d << "  (type " << d.type_code() << ", host-accessible: "
              << (d.is_host_accessible() ? "yes" : "no") << ")\n";
    if (back != d) return EXIT_FAILURE;
  }

  const DataType dtypes[] = {DataType::bool_(),         DataType::int8(),
                             DataType::uint64(),        DataType::float16(),
                             DataType::bfloat16(),      DataType::float32(),
                             DataType(dlpackpp::dtype_code::float_, 32, 4),
                             DataType::complex128(),    DataType::float8_e4m3fn(),
                             DataType::float8_e8m0fnu(), DataType::float6_e3m2fn(),
                             DataType::float4_e2m1fn()};
  std::cout << "\ndtypes (bytes for 1000 elements, packed):\n";
  for (const DataType& t : dtypes) {
    const DataType back = DataType::parse(t.to_string());
    std::cout << "  " << t << "  " << t.storage_bytes(1000) << " B\n";
    if (back != t) return EXIT_FAILURE;
  }

  auto bad = DataType::try_parse("float128");
  std::cout << "\nparse(\"float128\") -> " << bad.error().what() << '\n';
  return EXIT_SUCCESS;
}
