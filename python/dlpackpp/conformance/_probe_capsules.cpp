// SPDX-License-Identifier: Apache-2.0
// Part of the probe (_probe.cpp): the capsules the kit makes, conforming or with one fault, the
// deleters of their blocks (counted, then poisoned) and the counters.
#include "_probe.hpp"

#include <cstring>
#include <map>

namespace dlpackpp_probe {

namespace {

std::atomic<int> g_counts[kCounters];
std::atomic<int> g_next_counter{1};
std::map<const void*, KitTensor*> g_blocks;  // guarded by g_blocks_mutex

// Blocks are never freed, so an address names one block for the life of the process.
KitTensor* block_of(const void* managed) {
  std::lock_guard<std::mutex> lock(g_blocks_mutex);
  auto it = g_blocks.find(managed);
  return it == g_blocks.end() ? nullptr : it->second;
}

// A block's deleter: counted every time (a second call shows as a count of 2 and on kAgain);
// the first call poisons the block and drops its owner (ObjectRef takes the GIL where this
// thread lacks it).
void retire(KitTensor* t) {
  bump(t->counter);
  if (t->retired.exchange(true)) return bump(kAgain);
  poison(t->versioned.dl_tensor);
  poison(t->legacy.dl_tensor);
  t->owner.reset();
}

}  // namespace

std::mutex g_blocks_mutex;

void bump(int id) {
  if (id > 0 && id < kCounters) g_counts[id].fetch_add(1);
}

int count_of(int id) { return g_counts[id].load(); }

void register_block(const void* managed, KitTensor* t) {
  std::lock_guard<std::mutex> lock(g_blocks_mutex);
  g_blocks[managed] = t;
}

void poison(DLTensor& d) {
  d.data = reinterpret_cast<void*>(std::uintptr_t{0x10});
  d.ndim = -7;
  d.shape = reinterpret_cast<std::int64_t*>(std::uintptr_t{0x18});
  d.strides = reinterpret_cast<std::int64_t*>(std::uintptr_t{0x20});
  d.dtype.code = 0xEE;
  d.byte_offset = ~0ULL;
}

void kit_delete_versioned(DLManagedTensorVersioned* self) {
  KitTensor* t = block_of(self);
  if (t == nullptr) return bump(kAgain);
  retire(t);
}

void kit_delete_legacy(DLManagedTensor* self) {
  KitTensor* t = block_of(self);
  if (t == nullptr) return bump(kAgain);
  retire(t);
}

void call_deleter(void* managed, bool versioned) {
  if (versioned) {
    auto* m = static_cast<DLManagedTensorVersioned*>(managed);
    if (m->deleter != nullptr) m->deleter(m);
  } else {
    auto* m = static_cast<DLManagedTensor*>(managed);
    if (m->deleter != nullptr) m->deleter(m);
  }
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

namespace {

// How a kit capsule's destructor behaves: right, one of the faults the lifetime checks must
// catch in a producer, or right but through Python code (kPython: what a producer written in
// Python or with ctypes has; numpy#32697 shows only with one).
enum Destructor { kRight, kNever, kTwice, kIgnoreRename, kClobber, kPython };

struct CapsuleCtx {
  Destructor how;
  bool versioned;
};

PyObject* g_python_destructor = nullptr;  // kPython's body, set by the kit

void kit_capsule_destructor(PyObject* capsule) {
  auto* ctx = static_cast<CapsuleCtx*>(PyCapsule_GetContext(capsule));
  const char* name = PyCapsule_GetName(capsule);
  const bool used = name != nullptr && std::strncmp(name, "used_", 5) == 0;
  const Destructor how = ctx != nullptr ? ctx->how : kRight;
  const bool versioned = ctx != nullptr && ctx->versioned;
  delete ctx;
  if (how == kNever) return;
  if (used && how != kIgnoreRename) return;
  if (how == kPython) {
    if (PyErr_Occurred() != nullptr) {
      // Python code cannot run with an exception pending (a debug build asserts; a release
      // one fails the first call, or worse): a destructor written in Python loses the error
      // and never reaches the deleter. Modelled here as that first failing call would end.
      bump(kPendingDrop);
      PyErr_WriteUnraisable(nullptr);
      return;
    }
    // The capsule goes by address: an object handed to Python during its own deallocation
    // would be deallocated twice.
    PyObject* r =
        g_python_destructor != nullptr
            ? PyObject_CallFunction(
                  g_python_destructor, "K",
                  static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(capsule)))
            : nullptr;
    if (r == nullptr) PyErr_WriteUnraisable(g_python_destructor);  // not the dying capsule
    Py_XDECREF(r);
    return;
  }
  PyObject *type, *value, *trace;
  if (how != kClobber) PyErr_Fetch(&type, &value, &trace);
  void* managed = PyCapsule_GetPointer(capsule, name);
  if (managed != nullptr) {
    call_deleter(managed, versioned);
    if (how == kTwice) call_deleter(managed, versioned);
  }
  PyErr_Clear();
  if (how != kClobber) PyErr_Restore(type, value, trace);
}

// set_python_destructor(f) -> None: f(capsule address) is the body of kPython destructors.
PyObject* set_python_destructor(PyObject*, PyObject* f) {
  Py_XDECREF(g_python_destructor);
  Py_INCREF(f);
  g_python_destructor = f;
  Py_RETURN_NONE;
}

// run_deleter(managed address, versioned) -> None: what a kPython destructor's body does once
// it has found the tensor: calls its deleter.
PyObject* run_deleter(PyObject*, PyObject* args) {
  unsigned long long managed;
  int versioned;
  if (PyArg_ParseTuple(args, "Kp", &managed, &versioned) == 0) return nullptr;
  call_deleter(reinterpret_cast<void*>(static_cast<std::uintptr_t>(managed)), versioned != 0);
  Py_RETURN_NONE;
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
  int null_deleter = 0, null_ctx = 0, destructor = 0, poisoned = 0;
  if (PyArg_ParseTupleAndKeywords(
          args, kwargs, "OKOOK(iii)(ii)|p(ii)KippOOip", const_cast<char**>(names), &owner, &data,
          &shape_obj, &strides_obj, &byte_offset, &code, &bits, &lanes, &dev_type, &dev_id,
          &versioned, &major, &minor, &flags, &counter, &null_deleter, &null_ctx, &ndim_obj,
          &name_obj, &destructor, &poisoned) == 0) {
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
  if (poisoned != 0) poison(d);
  void* managed;
  if (versioned != 0) {
    t->versioned.version.major = static_cast<std::uint32_t>(major);
    t->versioned.version.minor = static_cast<std::uint32_t>(minor);
    t->versioned.manager_ctx = null_ctx != 0 ? nullptr : t;
    t->versioned.deleter = null_deleter != 0 ? nullptr : &kit_delete_versioned;
    t->versioned.flags = poisoned != 0 ? ~0ULL : flags;
    t->versioned.dl_tensor = d;
    managed = &t->versioned;
  } else {
    t->legacy.manager_ctx = null_ctx != 0 ? nullptr : t;
    t->legacy.deleter = null_deleter != 0 ? nullptr : &kit_delete_legacy;
    t->legacy.dl_tensor = d;
    managed = &t->legacy;
  }
  // A NULL deleter means nobody frees the block: the kit keeps it (and its owner) for the
  // life of the child, which is what a producer without a deleter promises.
  register_block(managed, t);
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
  if (id >= kPendingDrop) {
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
  return PyLong_FromLong(count_of(static_cast<int>(id)));
}

PyObject* double_frees(PyObject*, PyObject*) { return PyLong_FromLong(count_of(kAgain)); }

PyObject* pending_drops(PyObject*, PyObject*) { return PyLong_FromLong(count_of(kPendingDrop)); }

}  // namespace

PyMethodDef g_capsule_methods[] = {
    {"make_capsule", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&make_capsule)),
     METH_VARARGS | METH_KEYWORDS, "a kit-made capsule, conforming or not"},
    {"new_counter", &new_counter, METH_NOARGS, "a fresh deleter counter"},
    {"count", &count, METH_O, "how many times the counter's deleters ran"},
    {"double_frees", &double_frees, METH_NOARGS, "deleters called again"},
    {"pending_drops", &pending_drops, METH_NOARGS, "capsules dropped with an error pending"},
    {"set_python_destructor", &set_python_destructor, METH_O, "the body of Python destructors"},
    {"run_deleter", &run_deleter, METH_VARARGS, "call a tensor's deleter by address"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace dlpackpp_probe
