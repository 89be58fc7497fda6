// expect-error: (no match for 'operator==' \(operand types are |invalid operands to binary expression \()'dlpackpp::(v0[a-z0-9_]*::)?DataType' and 'DLDataTypeCode'
// SPDX-License-Identifier: Apache-2.0
// Comparing a DataType with a bare type code would ignore bits and lanes; it must not compile.
#include <dlpackpp/dtype.hpp>

int main() { return dlpackpp::DataType::float32() == kDLFloat ? 0 : 1; }
