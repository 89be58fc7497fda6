// SPDX-License-Identifier: Apache-2.0
/// @file
/// Python references that may be dropped on any thread, and the guard that keeps such a drop
/// from racing interpreter shutdown: once shutdown can start, a thread that does not hold the
/// GIL never asks for it (CPython ends such a thread with pthread_exit, which inside noexcept
/// code is std::terminate); the reference is leaked instead.
#pragma once

#include "dlpackpp/python/python_h.hpp"

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/python/errors.hpp"
#include "dlpackpp/python/free_threading.hpp"

#include <atomic>
#include <thread>

DLPACKPP_BEGIN_NAMESPACE
namespace python {
namespace detail {

/// Per copy of this header in a process (each extension module has its own): whether its
/// atexit hook is registered, whether that hook has run, and how many threads without the
/// GIL are between deciding to take it and giving it back.
struct ShutdownGuard {
  std::atomic<bool> armed{false};
  std::atomic<bool> exiting{false};
  std::atomic<int> in_flight{0};
};
inline ShutdownGuard& shutdown_guard() noexcept {
  static ShutdownGuard guard;  // trivially destructible: usable until the process ends
  return guard;
}

// The atexit hook. atexit callbacks run before CPython marks the interpreter finalizing, so
// after this returns no thread of ours is waiting for the GIL or about to: the ones already
// past the check finish first (the GIL is released while they do). "exiting" stays set for
// the rest of the process, even if the interpreter is initialized again: re-arming while
// finalization runs would reopen the race.
inline PyObject* on_interpreter_exit(PyObject*, PyObject*) {
  ShutdownGuard& guard = shutdown_guard();
  guard.exiting.store(true);
  if (guard.in_flight.load() != 0) {
    PyThreadState* saved = PyEval_SaveThread();
    while (guard.in_flight.load() != 0) std::this_thread::yield();
    PyEval_RestoreThread(saved);
  }
  Py_RETURN_NONE;
}

/// Registers the atexit hook of this copy (GIL held); a pending exception stays pending. On
/// failure the guard stays unarmed, and threads without the GIL leak instead of taking it.
DLPACKPP_COLD inline void register_exit_hook() noexcept {
  ShutdownGuard& guard = shutdown_guard();
  PreserveError keep;
  static PyMethodDef def = {"_dlpackpp_on_exit", &on_interpreter_exit, METH_NOARGS, nullptr};
  PyObject* fn = PyCFunction_New(&def, nullptr);
  PyObject* atexit = fn != nullptr ? PyImport_ImportModule("atexit") : nullptr;
  PyObject* r = nullptr;
  if (atexit != nullptr) {
    // Every extension built with dlpackpp has its own `arming` mutex (below), so two modules
    // could still call atexit.register at once; the atexit module's own lock serializes them.
    const CriticalSection serialized(atexit);
    r = PyObject_CallMethod(atexit, "register", "O", fn);
  }
  Py_XDECREF(atexit);
  Py_XDECREF(fn);
  if (r == nullptr) {
    PyErr_Clear();
    return;
  }
  Py_DECREF(r);
  guard.armed.store(true);
}

/// register_exit_hook, by one thread at a time without the GIL: CPython 3.13's
/// atexit.register is not safe to call from two threads at once (ThreadSanitizer sees its
/// list raced). The mutex is constant-initialized and detaches a waiting thread.
DLPACKPP_COLD inline void arm_shutdown_guard_slowly() noexcept {
  static Mutex arming;
  const MutexLock held(arming);
  if (!shutdown_guard().armed.load()) register_exit_hook();
}

/// Makes sure the atexit hook is registered, once per process (GIL held).
inline void arm_shutdown_guard() noexcept {
  if (!shutdown_guard().armed.load(std::memory_order_relaxed)) arm_shutdown_guard_slowly();
}

/// True once Python objects must no longer be touched from a thread without the GIL: the
/// atexit hook has run, or the interpreter is finalizing or gone.
inline bool python_exiting() noexcept {
  if (shutdown_guard().exiting.load() || !Py_IsInitialized()) return true;
#if defined(Py_LIMITED_API)
  return false;  // Py_IsInitialized turns false as soon as finalization starts
#else
  return is_finalizing();
#endif
}

/// Whether the calling thread holds the GIL. The limited API cannot ask; false there (the
/// callers then take the GIL, which a thread that holds it may do again).
inline bool this_thread_holds_gil() noexcept {
#if defined(Py_LIMITED_API)
  return false;
#else
  PyThreadState* mine = PyGILState_GetThisThreadState();
  return mine != nullptr && mine == thread_state_unchecked();
#endif
}

/// Drops one reference to `obj` from any thread, keeping a pending exception intact. A
/// thread without the GIL takes it only while shutdown cannot start under it (see
/// ShutdownGuard); otherwise the reference is leaked, never the process aborted.
inline void release_reference(PyObject* obj) noexcept {
  if (obj == nullptr || !Py_IsInitialized()) return;  // gone: nothing may be touched
  if (this_thread_holds_gil()) {
    PreserveError keep;
    Py_DECREF(obj);
    return;
  }
  ShutdownGuard& guard = shutdown_guard();
  // Announce first, then look: with the hook storing `exiting` before reading `in_flight`
  // (both sequentially consistent), one of the two always sees the other.
  guard.in_flight.fetch_add(1);
  if (guard.armed.load() && !python_exiting()) {
    const PyGILState_STATE state = PyGILState_Ensure();
    {
      PreserveError keep;
      Py_DECREF(obj);
    }
    PyGILState_Release(state);
  }
  guard.in_flight.fetch_sub(1);
}

}  // namespace detail

/// A strong reference to a Python object that may be dropped on any thread: the deleter of a
/// tensor that keeps a Python object alive (pass it as `wrap`'s owner). Dropped where the GIL
/// is held, it is released at once; elsewhere the GIL is taken, unless interpreter shutdown
/// may have started (then the reference is leaked: aborting is never an option). Apart from
/// detail::HeldRef, the layer's reference for code that holds the GIL, for that reason alone.
class ObjectRef {
 public:
  /// No object.
  ObjectRef() noexcept = default;
  /// A new reference to `obj` (GIL held); NULL gives an empty ref.
  static ObjectRef borrow(PyObject* obj) noexcept {
    Py_XINCREF(obj);
    return ObjectRef(obj);
  }
  /// Takes over the reference the caller owns to `obj` (GIL held).
  static ObjectRef steal(PyObject* obj) noexcept { return ObjectRef(obj); }
  /// Takes `other`'s reference.
  ObjectRef(ObjectRef&& other) noexcept : obj_(other.obj_) { other.obj_ = nullptr; }
  /// Drops the current reference and takes `other`'s.
  ObjectRef& operator=(ObjectRef&& other) noexcept {
    if (this != &other) {
      reset();
      obj_ = other.obj_;
      other.obj_ = nullptr;
    }
    return *this;
  }
  ObjectRef(const ObjectRef&) = delete;
  ObjectRef& operator=(const ObjectRef&) = delete;
  /// Drops the reference (see reset()).
  ~ObjectRef() { reset(); }
  /// Drops the reference from any thread (see the class comment).
  void reset() noexcept {
    PyObject* obj = obj_;
    obj_ = nullptr;
    detail::release_reference(obj);
  }
  /// The object (borrowed), or NULL.
  PyObject* get() const noexcept { return obj_; }

 private:
  // The shutdown hook must be in place before a reference can reach another thread.
  explicit ObjectRef(PyObject* obj) noexcept : obj_(obj) {
    if (obj_ != nullptr) detail::arm_shutdown_guard();
  }
  PyObject* obj_ = nullptr;
};

namespace detail {
/// An owned reference to a Python object, dropped where the GIL is held: for a scope inside an
/// entry point, or a binding caster (which dies with the call, the GIL held). The one owning
/// type of the layer but ObjectRef, which stays apart because it may be dropped on a thread
/// without the GIL: every drop then asks which thread it is on, and every construction arms
/// the shutdown guard, neither of which the per-call paths should pay for.
class HeldRef {
 public:
  /// No object.
  HeldRef() noexcept = default;
  /// Takes over the reference the caller owns to `obj` (NULL allowed).
  explicit HeldRef(PyObject* obj) noexcept : obj_(obj) {}
  /// A new reference to `obj` (NULL allowed).
  static HeldRef borrow(PyObject* obj) noexcept {
    Py_XINCREF(obj);
    return HeldRef(obj);
  }
  /// Takes `other`'s reference.
  HeldRef(HeldRef&& other) noexcept : obj_(other.release()) {}
  /// Drops the current reference and takes `other`'s.
  HeldRef& operator=(HeldRef&& other) noexcept {
    reset(other.release());
    return *this;
  }
  HeldRef(const HeldRef&) = delete;
  HeldRef& operator=(const HeldRef&) = delete;
  /// Drops the reference.
  ~HeldRef() { Py_XDECREF(obj_); }
  /// Takes over `obj`'s reference (NULL allowed), dropping the one held before.
  void reset(PyObject* obj = nullptr) noexcept {
    PyObject* old = obj_;
    obj_ = obj;
    Py_XDECREF(old);  // last: dropping may run Python code that reads this ref
  }
  /// Hands the reference to the caller, who then owns it; NULL where none was held.
  PyObject* release() noexcept {
    PyObject* obj = obj_;
    obj_ = nullptr;
    return obj;
  }
  /// The object (borrowed), or NULL.
  PyObject* get() const noexcept { return obj_; }

 private:
  PyObject* obj_ = nullptr;
};
}  // namespace detail

}  // namespace python
DLPACKPP_END_NAMESPACE
