// SPDX-License-Identifier: Apache-2.0
/// @file
/// The DLPack exchange API (`__dlpack_c_exchange_api__`, DLPack >= 1.2): finding a usable
/// table in a chain, typed consumer wrappers over one table, and make_exchange_api<Impl>()
/// for producers. Needs no Python.h: the table passes a PyObject* as void*.
///
/// Empty, apart from the Errc-to-Python-exception table that python.hpp shares, where the
/// dlpack.h in force does not declare the API (DLPACKPP_HAS_EXCHANGE_API is 0). Both
/// spellings of the header's link to the older table are understood: `prev_api` (DLPack
/// 1.2+) and `prev_version_api` (the draft some 1.1-era framework headers carry; predefine
/// DLPACKPP_HAS_EXCHANGE_API=1 for those).
#pragma once

#include "dlpackpp/exchange_api/consumer.hpp"     // find_exchange_api and the table's wrappers
#include "dlpackpp/exchange_api/error_kinds.hpp"  // Errc to Python exception, always defined
#include "dlpackpp/exchange_api/producer.hpp"     // make_exchange_api<Impl>
