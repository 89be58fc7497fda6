// expect-error: no DLPack dtype; specialize dlpackpp::dtype_traits
// SPDX-License-Identifier: Apache-2.0
// Plain char is signed on some platforms and unsigned on others, so it has no implied dtype.
#include <dlpackpp/dtype.hpp>

int main() { return dlpackpp::dtype_of<char>.bits(); }
