// SPDX-License-Identifier: Apache-2.0
// The conformance kit's probe: the C-level hands the kit needs and Python lacks. It reads any
// capsule field by field (never trusting it: a field is read only where the version says the
// layout is known), makes capsules of any kind, conforming or not, with counted deleters,
// puts a counting shim in front of a producer's deleter, calls exchange-table entries, and
// offers the `dlpackpp` target (dlpackpp.Tensor as producer, try_from_dlpack as consumer)
// through the project's own <dlpackpp/python.hpp>. Compiled on first use (see _build.py);
// every call that may crash runs in a child process of the kit, never in the kit itself.
#include <dlpackpp/python.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace dp = dlpackpp;
namespace py = dlpackpp::python;

// --- deleter counters --------------------------------------------------------------------
// Counters live for the process (a child runs a handful of cases): a deleter may run on any
// thread, after everything else is gone, so it only ever touches an atomic.
constexpr int kCounters = 4096;
std::atomic<int> g_counts[kCounters];
std::atomic<int> g_next_counter{1};

void bump(int id) {
  if (id > 0 && id < kCounters) g_counts[id].fetch_add(1);
}

// --- capsules the kit makes ----------------------------------------------------------------
// Everything a kit-made tensor owns: its shape and strides arrays, the Python object that
// keeps its memory alive, and the counter its deleter bumps.
struct KitTensor {
  DLManagedTensorVersioned versioned{};
  DLManagedTensor legacy{};
  std::vector<std::int64_t> shape, strides;
  py::ObjectRef owner;
  int counter = 0;
};

// manager_ctx may be NULL by request (C9): the deleter then finds its block by address.
std::mutex g_blocks_mutex;
std::map<const void*, KitTensor*> g_blocks;

KitTensor* block_of(const void* managed) {
  std::lock_guard<std::mutex> lock(g_blocks_mutex);
  auto it = g_blocks.find(managed);
  if (it == g_blocks.end()) return nullptr;
  KitTensor* t = it->second;
  g_blocks.erase(it);
  return t;
}

// Kit deleters run on any thread, with or without the GIL: ObjectRef takes it as needed.
void kit_delete_versioned(DLManagedTensorVersioned* self) {
  KitTensor* t = block_of(self);
  if (t == nullptr) return bump(kCounters - 1);  // a second call: the consumer freed twice
  bump(t->counter);
  delete t;
}
void kit_delete_legacy(DLManagedTensor* self) {
  KitTensor* t = block_of(self);
  if (t == nullptr) return bump(kCounters - 1);
  bump(t->counter);
  delete t;
}

// How a kit capsule's destructor behaves: right, or one of the faults the lifetime checks
// must catch in a producer.
enum Destructor { kRight, kNever, kTwice, kIgnoreRename, kClobber };

struct CapsuleCtx {
  Destructor how;
  bool versioned;
};

void call_deleter(void* managed, bool versioned) {
  if (versioned) {
    auto* m = static_cast<DLManagedTensorVersioned*>(managed);
    if (m->deleter != nullptr) m->deleter(m);
  } else {
    auto* m = static_cast<DLManagedTensor*>(managed);
    if (m->deleter != nullptr) m->deleter(m);
  }
}

void kit_capsule_destructor(PyObject* capsule) {
  auto* ctx = static_cast<CapsuleCtx*>(PyCapsule_GetContext(capsule));
  const char* name = PyCapsule_GetName(capsule);
  const bool used = name != nullptr && std::strncmp(name, "used_", 5) == 0;
  const Destructor how = ctx != nullptr ? ctx->how : kRight;
  const bool versioned = ctx != nullptr && ctx->versioned;
  delete ctx;
  if (how == kNever) return;
  if (used && how != kIgnoreRename) return;
  PyObject *type, *value, *trace;
  if (how != kClobber) PyErr_Fetch(&type, &value, &trace);
  void* managed = PyCapsule_GetPointer(capsule, name);
  if (managed != nullptr) {
    call_deleter(managed, versioned);
    if (how == kTwice) call_deleter(managed, versioned);
  }
  if (how == kClobber) {
    PyErr_Clear();
    return;
  }
  PyErr_Clear();
  PyErr_Restore(type, value, trace);
}

bool read_int64s(PyObject* seq, std::vector<std::int64_t>& out) {
  PyObject* fast = PySequence_Fast(seq, "expected a sequence of ints");
  if (fast == nullptr) return false;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  for (Py_ssize_t i = 0; i < n; ++i) {
    long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
    if (v == -1 && PyErr_Occurred()) {
      Py_DECREF(fast);
      return false;
    }
    out.push_back(v);
  }
  Py_DECREF(fast);
  return true;
}

// make_capsule(owner, data, shape, strides, byte_offset, dtype, device, *, versioned=True,
//   version=(1, 3), flags=0, counter=0, null_deleter=False, null_ctx=False, ndim=None,
//   name=None, destructor=0, poison=False) -> capsule
// shape/strides None mean NULL arrays; `ndim` overrides len(shape); `poison` fills every
// field after the version and deleter with garbage (what a major-2 layout may look like).
PyObject* make_capsule(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"owner",      "data",         "shape",     "strides", "byte_offset",
                                "dtype",      "device",       "versioned", "version", "flags",
                                "counter",    "null_deleter", "null_ctx",  "ndim",    "name",
                                "destructor", "poison",       nullptr};
  PyObject *owner, *shape_obj, *strides_obj, *ndim_obj = Py_None, *name_obj = Py_None;
  unsigned long long data, byte_offset, flags = 0;
  int code, bits, lanes, dev_type, dev_id, versioned = 1, major = 1, minor = 3, counter = 0;
  int null_deleter = 0, null_ctx = 0, destructor = 0, poison = 0;
  if (PyArg_ParseTupleAndKeywords(
          args, kwargs, "OKOOK(iii)(ii)|p(ii)KippOOip", const_cast<char**>(names), &owner, &data,
          &shape_obj, &strides_obj, &byte_offset, &code, &bits, &lanes, &dev_type, &dev_id,
          &versioned, &major, &minor, &flags, &counter, &null_deleter, &null_ctx, &ndim_obj,
          &name_obj, &destructor, &poison) == 0) {
    return nullptr;
  }
  auto* t = new KitTensor();
  if ((shape_obj != Py_None && !read_int64s(shape_obj, t->shape)) ||
      (strides_obj != Py_None && !read_int64s(strides_obj, t->strides))) {
    delete t;
    return nullptr;
  }
  t->owner = py::ObjectRef::borrow(owner);
  t->counter = counter;
  DLTensor d{};
  d.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(data));
  d.device.device_type = static_cast<DLDeviceType>(dev_type);
  d.device.device_id = dev_id;
  d.ndim = ndim_obj != Py_None ? static_cast<int>(PyLong_AsLong(ndim_obj))
                               : static_cast<int>(t->shape.size());
  d.dtype.code = static_cast<std::uint8_t>(code);
  d.dtype.bits = static_cast<std::uint8_t>(bits);
  d.dtype.lanes = static_cast<std::uint16_t>(lanes);
  d.shape = shape_obj != Py_None ? t->shape.data() : nullptr;
  d.strides = strides_obj != Py_None ? t->strides.data() : nullptr;
  d.byte_offset = byte_offset;
  if (poison != 0) {
    d.data = reinterpret_cast<void*>(std::uintptr_t{0x10});
    d.ndim = -7;
    d.shape = reinterpret_cast<std::int64_t*>(std::uintptr_t{0x18});
    d.strides = reinterpret_cast<std::int64_t*>(std::uintptr_t{0x20});
    d.dtype.code = 0xEE;
    d.byte_offset = ~0ULL;
  }
  void* managed;
  if (versioned != 0) {
    t->versioned.version.major = static_cast<std::uint32_t>(major);
    t->versioned.version.minor = static_cast<std::uint32_t>(minor);
    t->versioned.manager_ctx = null_ctx != 0 ? nullptr : t;
    t->versioned.deleter = null_deleter != 0 ? nullptr : &kit_delete_versioned;
    t->versioned.flags = poison != 0 ? ~0ULL : flags;
    t->versioned.dl_tensor = d;
    managed = &t->versioned;
  } else {
    t->legacy.manager_ctx = null_ctx != 0 ? nullptr : t;
    t->legacy.deleter = null_deleter != 0 ? nullptr : &kit_delete_legacy;
    t->legacy.dl_tensor = d;
    managed = &t->legacy;
  }
  {
    std::lock_guard<std::mutex> lock(g_blocks_mutex);
    g_blocks[managed] = t;
  }
  // A NULL deleter means nobody frees the block: the kit keeps it (and its owner) for the
  // life of the child, which is what a producer without a deleter promises.
  const char* name = versioned != 0 ? "dltensor_versioned" : "dltensor";
  if (name_obj != Py_None) {
    // The name must outlive the capsule: kept for the process (a handful per child).
    name = (new std::string(PyUnicode_AsUTF8(name_obj)))->c_str();
  }
  PyObject* capsule = PyCapsule_New(managed, name, &kit_capsule_destructor);
  if (capsule == nullptr) return nullptr;
  PyCapsule_SetContext(capsule,
                       new CapsuleCtx{static_cast<Destructor>(destructor), versioned != 0});
  return capsule;
}

PyObject* new_counter(PyObject*, PyObject*) {
  int id = g_next_counter.fetch_add(1);
  if (id >= kCounters - 1) {
    PyErr_SetString(PyExc_RuntimeError, "conformance probe: out of deleter counters");
    return nullptr;
  }
  return PyLong_FromLong(id);
}

PyObject* count(PyObject*, PyObject* arg) {
  long id = PyLong_AsLong(arg);
  if (id <= 0 || id >= kCounters) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "no such counter");
    return nullptr;
  }
  return PyLong_FromLong(g_counts[id].load());
}

}  // namespace

// The parts, in the order they build on each other (kept apart so no tool sorts them).
#include "_probe_read.inc"
// Calls exchange tables and makes the kit's own; reads with the part above.
#include "_probe_exchange.inc"
// The dlpackpp target.
#include "_probe_target.inc"

namespace {

PyMethodDef g_methods[] = {
    {"make_capsule", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&make_capsule)),
     METH_VARARGS | METH_KEYWORDS, "a kit-made capsule, conforming or not"},
    {"new_counter", &new_counter, METH_NOARGS, "a fresh deleter counter"},
    {"count", &count, METH_O, "how many times the counter's deleters ran"},
    PROBE_READ_METHODS PROBE_EXCHANGE_METHODS PROBE_TARGET_METHODS{nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT,
                        "_dlpackpp_conformance_probe",
                        "The dlpackpp conformance kit's probe",
                        -1,
                        g_methods,
                        nullptr,
                        nullptr,
                        nullptr,
                        nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__dlpackpp_conformance_probe() { return PyModule_Create(&g_module); }
