// SPDX-License-Identifier: Apache-2.0
/// @file
/// DataType: a constexpr value type over DLDataType, dtype_of<T>, and the dtype_traits
/// extension point.
#pragma once

#include "dlpackpp/dtype/data_type.hpp"  // DataType, dtype_code
#include "dlpackpp/dtype/dtype_of.hpp"   // dtype_of<T>, has_dtype<T>, dtype_traits, BoolByte
