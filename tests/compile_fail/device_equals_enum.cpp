// expect-error: (no match for 'operator=='|invalid operands to binary expression).*Device.*DLDeviceType
// SPDX-License-Identifier: Apache-2.0
// Comparing a Device with a bare device type would silently compare the id with 0 too.
#include <dlpackpp/device.hpp>

bool is_cuda(dlpackpp::Device d) { return d == kDLCUDA; }
