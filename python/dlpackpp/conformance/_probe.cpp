// SPDX-License-Identifier: Apache-2.0
// The conformance kit's probe: the C-level hands the kit needs and Python lacks. It reads any
// capsule field by field (never trusting it: a field is read only where the name and version
// say the layout is known), makes capsules of any kind, conforming or not, with counted
// deleters, puts a counting shim in front of a producer's deleter, calls exchange-table
// entries, and offers the `dlpackpp` target (dlpackpp.Tensor as producer, try_from_dlpack as
// consumer) through the project's own <dlpackpp/python.hpp>. Compiled on first use (see
// _build.py) from plain translation units, one concern each:
//   _probe_capsules.cpp  capsules the kit makes, their deleters and counters
//   _probe_read.cpp      reading capsules, the deleter shim, consuming, releasing
//   _probe_exchange.cpp  calling a framework's exchange table
//   _probe_tables.cpp    the kit's own exchange tables (for the self-proof's adapters)
//   _probe_target.cpp    the dlpackpp target
// Every call that may crash runs in a child process of the kit, never in the kit itself.
#include "_probe.hpp"

namespace {

std::vector<PyMethodDef> g_methods;

PyModuleDef g_module = {PyModuleDef_HEAD_INIT,
                        "_dlpackpp_conformance_probe",
                        "The dlpackpp conformance kit's probe",
                        -1,
                        nullptr,
                        nullptr,
                        nullptr,
                        nullptr,
                        nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__dlpackpp_conformance_probe() {
  using namespace dlpackpp_probe;
  if (g_methods.empty()) {
    for (PyMethodDef* table : {g_capsule_methods, g_read_methods, g_exchange_methods,
                               g_table_methods, g_target_methods}) {
      for (PyMethodDef* m = table; m->ml_name != nullptr; ++m) g_methods.push_back(*m);
    }
    g_methods.push_back({nullptr, nullptr, 0, nullptr});
    g_module.m_methods = g_methods.data();
  }
  return PyModule_Create(&g_module);
}
