// SPDX-License-Identifier: Apache-2.0
/// @file
/// What the Python layer needs to share state between threads without the GIL (a
/// free-threaded CPython, `Py_GIL_DISABLED`, 3.13t and later): the orders of reads and writes of
/// published state, a lock, an object's critical section, an object made lazily and published
/// once, and a function run once. Every free-threading branch of the layer is here: on a GIL
/// build the lock and the critical section are nothing and the orders relaxed, since the GIL
/// already orders every access; the other rooms use these without a branch of their own.
#pragma once

#include "dlpackpp/python/python_h.hpp"

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

/// Whether several threads may run Python code at once (DLPACKPP_DETAIL_PY_FREE_THREADED), for
/// `if constexpr` where both branches compile on every build.
inline constexpr bool free_threaded = DLPACKPP_DETAIL_PY_FREE_THREADED != 0;

/// The order of a read of state another thread may publish: acquire without the GIL, relaxed
/// (a plain load) with it, where the GIL orders every access.
inline constexpr std::memory_order shared_acquire =
    DLPACKPP_DETAIL_PY_FREE_THREADED ? std::memory_order_acquire : std::memory_order_relaxed;
/// The order of a write that publishes state: release without the GIL, relaxed with it.
inline constexpr std::memory_order shared_release =
    DLPACKPP_DETAIL_PY_FREE_THREADED ? std::memory_order_release : std::memory_order_relaxed;

#if DLPACKPP_DETAIL_PY_FREE_THREADED
/// A lock for state that threads without the GIL share: a PyMutex, constant-initialized, which
/// detaches a waiting thread from the interpreter (so a stop-the-world pause never waits on it).
/// Nothing on a GIL build, where holding the GIL already serializes.
class Mutex {
 public:
  /// Takes it.
  void lock() noexcept { PyMutex_Lock(&mutex_); }
  /// Lets it go.
  void unlock() noexcept { PyMutex_Unlock(&mutex_); }

 private:
  PyMutex mutex_{};
};

/// Holds `obj`'s critical section for its lifetime, so that what one thread reads and changes
/// in `obj` (a capsule's name, pointer and destructor) is one step for every other thread that
/// also holds it. RAII rather than the Py_BEGIN/END macro pair: an exception thrown inside
/// (describing an error allocates) still ends the section. Nothing on a GIL build.
class CriticalSection {
 public:
  /// Enters `obj`'s critical section.
  explicit CriticalSection(PyObject* obj) noexcept { PyCriticalSection_Begin(&section_, obj); }
  CriticalSection(const CriticalSection&) = delete;
  CriticalSection& operator=(const CriticalSection&) = delete;
  /// Leaves it.
  ~CriticalSection() { PyCriticalSection_End(&section_); }

 private:
  PyCriticalSection section_;
};
#else
/// The GIL build's Mutex: the GIL already serializes every holder.
class Mutex {
 public:
  /// Nothing to take.
  void lock() noexcept {}
  /// Nothing to let go.
  void unlock() noexcept {}
};

/// The GIL build's CriticalSection: the GIL already makes each step one.
class CriticalSection {
 public:
  /// Nothing to enter.
  explicit CriticalSection(PyObject*) noexcept {}
};
#endif

/// Holds a Mutex for its lifetime (also when what runs under it throws).
class MutexLock {
 public:
  /// Takes `mutex`.
  explicit MutexLock(Mutex& mutex) noexcept : mutex_(mutex) { mutex_.lock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  /// Lets it go.
  ~MutexLock() { mutex_.unlock(); }

 private:
  Mutex& mutex_;
};

/// Stores `made` (a new reference, not NULL) into `slot` unless another thread published one
/// first, and returns the published object (borrowed from `slot`): the loser's copy is dropped,
/// so every thread sees the one object.
inline PyObject* publish_once(std::atomic<PyObject*>& slot, PyObject* made) noexcept {
  PyObject* expected = nullptr;
  if (slot.compare_exchange_strong(expected, made, std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
    return made;
  }
  Py_DECREF(made);
  return expected;
}

/// What `slot` holds (borrowed), or NULL.
inline PyObject* published(const std::atomic<PyObject*>& slot) noexcept {
  return slot.load(shared_acquire);
}

/// Whether run_once has run; constant-initialized, so a function-local one needs no guard.
struct OnceFlag {
  std::atomic<bool> done{false};  ///< set once the function has returned
  Mutex mutex;                    ///< held while the function runs
};

/// Runs `init` the first time it is called with `once` (the GIL or the calling thread attached
/// to the interpreter). Not a function-local static: a thread waiting on its guard would wait
/// attached, and without the GIL the interpreter's stop-the-world pauses (garbage collection)
/// wait for every attached thread, so an `init` that allocates could wait forever; with the
/// GIL, an `init` that lets the GIL go would let a second thread block on the guard holding
/// it. A thread that arrives while another runs `init` waits on the Mutex, detached (free-
/// threaded build); with the GIL it may run `init` a second time, which must be harmless.
template <class F>
void run_once(OnceFlag& once, F&& init) {
  if (DLPACKPP_LIKELY(once.done.load(std::memory_order_acquire))) return;
  const MutexLock held(once.mutex);
  if (!once.done.load(std::memory_order_relaxed)) {
    init();
    once.done.store(true, std::memory_order_release);
  }
}

}  // namespace detail
}  // namespace python
DLPACKPP_END_NAMESPACE
