// SPDX-License-Identifier: Apache-2.0
/// @file
/// What the Python layer needs to share state between threads without the GIL (a
/// free-threaded CPython, `Py_GIL_DISABLED`, 3.13t and later): the orders of reads and writes of
/// published state, an object made lazily and published once, a function run once, and an
/// object's critical section. On a GIL
/// build each is what the code did before (a plain load, a plain store, nothing): the GIL
/// already orders every access.
#pragma once

#include "dlpackpp/python/python_h.hpp"
#if DLPACKPP_PYTHON_AVAILABLE

#include "dlpackpp/detail/config.hpp"

#include <atomic>

// 1 on a free-threaded CPython, where several threads may run Python code at once. Internal
// (not a knob): Python.h decides it, and every room of the layer reads it.
#ifdef Py_GIL_DISABLED
#define DLPACKPP_DETAIL_PY_FREE_THREADED 1
#else
#define DLPACKPP_DETAIL_PY_FREE_THREADED 0
#endif

DLPACKPP_BEGIN_NAMESPACE
namespace python {
namespace detail {

/// The order of a read of state another thread may publish: acquire without the GIL, relaxed
/// (a plain load) with it, where the GIL orders every access.
inline constexpr std::memory_order shared_acquire =
    DLPACKPP_DETAIL_PY_FREE_THREADED ? std::memory_order_acquire : std::memory_order_relaxed;
/// The order of a write that publishes state: release without the GIL, relaxed with it.
inline constexpr std::memory_order shared_release =
    DLPACKPP_DETAIL_PY_FREE_THREADED ? std::memory_order_release : std::memory_order_relaxed;

/// Stores `made` (a new reference, not NULL) into `slot` unless another thread published one
/// first, and returns the published object (borrowed from `slot`): the loser's copy is dropped,
/// so every thread sees the one object. A plain store on a GIL build, where nobody can race.
inline PyObject* publish_once(std::atomic<PyObject*>& slot, PyObject* made) noexcept {
#if DLPACKPP_DETAIL_PY_FREE_THREADED
  PyObject* expected = nullptr;
  if (slot.compare_exchange_strong(expected, made, std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
    return made;
  }
  Py_DECREF(made);
  return expected;
#else
  slot.store(made, std::memory_order_relaxed);
  return made;
#endif
}

/// What `slot` holds (borrowed), or NULL.
inline PyObject* published(const std::atomic<PyObject*>& slot) noexcept {
  return slot.load(shared_acquire);
}

/// Whether run_once has run; constant-initialized, so a function-local one needs no guard.
struct OnceFlag {
  std::atomic<bool> done{false};  ///< set once the function has returned
#if DLPACKPP_DETAIL_PY_FREE_THREADED
  PyMutex mutex{};  ///< held while the function runs
#endif
};

/// Runs `init` the first time it is called with `once` (the GIL or the calling thread attached
/// to the interpreter). Not a function-local static: a thread waiting on its guard would wait
/// attached, and without the GIL the interpreter's stop-the-world pauses (garbage collection)
/// wait for every attached thread, so an `init` that allocates could wait forever; with the
/// GIL, an `init` that lets the GIL go would let a second thread block on the guard holding
/// it. A thread that arrives while another runs `init` waits on a PyMutex without the GIL
/// (free-threaded build: the mutex detaches it while it waits); with the GIL it may run `init`
/// a second time, which must be harmless.
template <class F>
void run_once(OnceFlag& once, F&& init) {
  if (DLPACKPP_LIKELY(once.done.load(std::memory_order_acquire))) return;
#if DLPACKPP_DETAIL_PY_FREE_THREADED
  struct Unlock {  // also when `init` throws
    PyMutex& mutex;
    ~Unlock() { PyMutex_Unlock(&mutex); }
  };
  PyMutex_Lock(&once.mutex);
  const Unlock unlock{once.mutex};
  if (!once.done.load(std::memory_order_relaxed)) {
    init();
    once.done.store(true, std::memory_order_release);
  }
#else
  init();
  once.done.store(true, std::memory_order_release);
#endif
}

/// Holds `obj`'s critical section for its lifetime on a free-threaded build, so that what
/// one thread reads and changes in `obj` (a capsule's name, pointer and destructor) is one step
/// for every other thread that also holds it; nothing on a GIL build, where the GIL already
/// makes it one step. RAII rather than the Py_BEGIN/END macro pair: an exception thrown inside
/// (describing an error allocates) still ends the section.
class CriticalSection {
 public:
  /// Enters `obj`'s critical section (free-threaded build).
  explicit CriticalSection(PyObject* obj) noexcept {
#if DLPACKPP_DETAIL_PY_FREE_THREADED
    PyCriticalSection_Begin(&section_, obj);
#else
    static_cast<void>(obj);
#endif
  }
  CriticalSection(const CriticalSection&) = delete;
  CriticalSection& operator=(const CriticalSection&) = delete;
#if DLPACKPP_DETAIL_PY_FREE_THREADED
  /// Leaves it.
  ~CriticalSection() { PyCriticalSection_End(&section_); }

 private:
  PyCriticalSection section_;
#else
  /// Nothing to leave.
  ~CriticalSection() = default;
#endif
};

}  // namespace detail
}  // namespace python
DLPACKPP_END_NAMESPACE

#endif  // DLPACKPP_PYTHON_AVAILABLE
