// expect-error: no DLPack dtype; specialize dlpackpp::dtype_traits
// SPDX-License-Identifier: Apache-2.0
// A type with neither a built-in dtype nor a dtype_traits specialization is refused by name.
#include <dlpackpp/dtype.hpp>

struct Plain {
  int x;
};

int main() { return dlpackpp::dtype_of<Plain>.bits(); }
