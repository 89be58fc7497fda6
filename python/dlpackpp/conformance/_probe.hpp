// SPDX-License-Identifier: Apache-2.0
// What the probe's translation units share (see _probe.cpp for what the probe is): the kit's
// tensor blocks and their deleters, deleter counters, reading a capsule by its name, and each
// unit's table of Python methods. Everything here has hidden visibility (the build passes
// -fvisibility=hidden): only the module's init function is exported.
#pragma once

#include <dlpackpp/python.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace dlpackpp_probe {

namespace dp = dlpackpp;
namespace py = dlpackpp::python;

// --- deleter counters ----------------------------------------------------------------------
// Counters live for the process; a deleter may run on any thread, after everything else is
// gone, so it only ever touches an atomic. The last two count deleters called again and
// kit capsules whose Python-running destructor was entered with an exception pending.
constexpr int kCounters = 4096;
constexpr int kAgain = kCounters - 1;
constexpr int kPendingDrop = kCounters - 2;
void bump(int id);
int count_of(int id);

// --- the kit's tensor blocks ----------------------------------------------------------------
// Everything a kit-made tensor owns: its shape and strides arrays, the Python object that
// keeps its memory alive, and the counter its deleter bumps. A block is never freed: its
// deleter poisons it and drops the owner, so that a consumer reading it after the deleter
// ran reads poison (and is caught) rather than memory the allocator gave to someone else.
struct KitTensor {
  DLManagedTensorVersioned versioned{};
  DLManagedTensor legacy{};
  std::vector<std::int64_t> shape, strides;
  py::ObjectRef owner;
  int counter = 0;
  std::atomic<bool> retired{false};  // its deleter ran
};

// Guards the block and shim maps (deleters run on any thread).
extern std::mutex g_blocks_mutex;
void register_block(const void* managed, KitTensor* t);  // takes g_blocks_mutex
void kit_delete_versioned(DLManagedTensorVersioned* self);
void kit_delete_legacy(DLManagedTensor* self);
// Fills a DLTensor with values no valid tensor has (ndim -7, dtype code 0xEE, wild pointers).
void poison(DLTensor& d);
void call_deleter(void* managed, bool versioned);
bool read_int64s(PyObject* seq, std::vector<std::int64_t>& out);

// --- capsules, by name ----------------------------------------------------------------------
// Owning capsules of the kit's own (consume(), the exchange table's results): their
// destructor calls the deleter.
constexpr const char* kOwnedVersioned = "dlpackpp_kit.owned_versioned";
constexpr const char* kOwnedLegacy = "dlpackpp_kit.owned";
void owned_destructor(PyObject* capsule);

// A capsule's tensor, found only under a name the protocol (or the kit) gives it: a capsule
// under any other name is never dereferenced (it may hold anything).
struct Held {
  void* managed = nullptr;
  bool versioned = false;
  std::string name;
};
bool held_of(PyObject* capsule, Held& out);  // false with a Python exception set
// The DLTensor of a held tensor, or NULL for a versioned tensor of an unknown major.
DLTensor* tensor_of(const Held& h, std::uint64_t* flags);
PyObject* int_list(const std::int64_t* values, int n);
PyObject* gather_tensor(const DLTensor& t);

// --- each unit's methods (each table ends with a {nullptr} entry) -----------------------------
extern PyMethodDef g_capsule_methods[];
extern PyMethodDef g_read_methods[];
extern PyMethodDef g_exchange_methods[];
extern PyMethodDef g_table_methods[];
extern PyMethodDef g_target_methods[];

// The kit's exchange tables' tensors are wrapped by this (to_py_object); NULL: the owned capsule.
extern PyObject* g_table_factory;

}  // namespace dlpackpp_probe
