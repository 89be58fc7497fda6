# SPDX-License-Identifier: Apache-2.0
"""Lifetime checks L1-L5: who calls the deleter, how many times, on which thread, and what a
capsule's destructor leaves behind. The producer's deleter is counted by the probe's shim;
a consumer is handed KitArray capsules, whose deleter the kit counts itself."""

import numpy as np

from ._build import probe
from ._checks import check, describe, new
from ._checks_consumer import consumer, take
from ._checks_producer import versioned_export
from ._kit import Skip, capsule_of, collect, compact_bytes, host_values, make, make_float32, sample
from ._producer import KitArray

PY = "Python spec (capsule protocol)"


def takes_host(target):
    """Whether the target's consumer takes host memory (see consumer())."""
    try:
        consumer(target)
        return True
    except Skip:
        return False


def shimmed_export(target, a):
    """A fresh export of target.from_numpy(a) with its deleter shimmed: (x, capsule, counter);
    raises Skip where the producer cannot make `a` or its tensor has no deleter."""
    x = make_float32(target, a)
    cap, _, _ = versioned_export(x)
    p = probe()
    counter = p.new_counter()
    if not p.shim(cap, counter):
        raise Skip("the producer's tensor has no deleter (allowed by dlpack.h)")
    return x, cap, counter


@check("L1", "MUST", PY + ": an unconsumed capsule's destructor calls the deleter, once")
def l1(target):
    """An unconsumed capsule's destructor releases the tensor once."""
    out = new()
    p = probe()
    x, cap, counter = shimmed_export(target, sample(flat=True))
    before = p.double_frees()
    del cap
    collect()
    n = p.count(counter)
    if n == 0:
        # Some destructors free the tensor themselves instead of through its deleter field
        # (the shim then sees nothing): only memory that stays allocated is a leak.
        grown = leak_probe(target)
        out.add(grown is not None and grown < 64, "MUST", PY + ": an unconsumed capsule's "
                "tensor is released when the capsule dies", "the deleter never ran and memory "
                "grew by %s MiB over 8 dropped 32 MiB exports" % grown)
        if grown is not None and grown < 64:
            out.add(False, "INFO", "", "the destructor releases the tensor without calling its "
                    "deleter field (memory is freed)")
        return out
    out.add(n == 1 and p.double_frees() == before, "MUST", PY + ": deleter called exactly once "
            "when an unconsumed capsule dies", "the deleter ran %d times" % n)
    return out


def _resident_mib():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 >> 20
    except OSError:
        return None


def leak_probe(target):
    """MiB of resident memory gained over eight exports of 32 MiB arrays, each dropped
    unconsumed (None where the system cannot say)."""
    start = _resident_mib()
    for i in range(8):
        x = make(target, np.full(1 << 23, i, dtype=np.float32))
        cap = capsule_of(x)
        del cap, x
        collect()
    end = _resident_mib()
    return None if start is None or end is None else end - start


@check("L2", "MUST", PY + ": a consumer renames the capsule used_dltensor[_versioned]; the "
       "destructor then leaves the deleter alone; the consumer calls it once")
def l2(target):
    """A consumed capsule's destructor leaves the deleter to the consumer, which calls it once."""
    out = new()
    p = probe()
    if hasattr(target, "from_numpy"):
        x, cap, counter = shimmed_export(target, sample(flat=True))
        owned = p.consume(cap)
        del cap
        collect()
        out.add(p.count(counter) == 0, "MUST", PY + ": the destructor of a used_ capsule does "
                "not call the deleter", "the destructor called the deleter of a consumed capsule")
        del owned
        collect()
        out.add(p.count(counter) == 1, "MUST", PY + ": the consumer's release calls the deleter "
                "once", "after release the deleter ran %d times" % p.count(counter))
    if hasattr(target, "from_dlpack") and takes_host(target):
        consumer_renames(out, target)
    return out


def consumer_renames(out, target):
    """L2's consumer half: the consumer renames the capsule it took, or at least clears its
    destructor (INFO: safe, as it holds the only reference to a capsule __dlpack__ just made;
    a capsule a user hands in twice is L3's case), and calls the deleter once."""
    k = KitArray(sample(), keep_last=True)
    y = target.from_dlpack(k)
    state = probe().capsule_state(k.last) if k.last is not None else None
    k.last = None  # its destructor runs here: a wrong one shows in the count below
    collect()
    if state is not None and not state[0].startswith("used_"):
        out.add(not state[1], "MUST", PY + ": a consumed capsule's destructor must not free "
                "the tensor (the consumer renames it)", "after from_dlpack the capsule is "
                "still named %r and keeps its destructor" % state[0])
        if not state[1]:
            out.add(False, "INFO", "", "the consumer cleared the destructor of the capsule "
                    "__dlpack__ gave it instead of renaming it (safe: it held the only "
                    "reference)")
    early = k.deleted()
    del y
    collect()
    n = k.deleted()
    out.add(n == k.made and early <= k.made, "MUST", PY + ": the consumer calls the deleter "
            "once, when its result dies (or at once if it copied)", "%d capsule(s), the "
            "deleter ran %d times" % (k.made, n))


@check("L3", "MUST", PY + ": a capsule consumed twice is refused with an exception, never a "
       "crash or a second release")
def l3(target):
    """A capsule object handed to from_dlpack twice (a user may; no producer does): the
    second use is refused, and the tensor is released once. The kit's block stays allocated
    and poisoned after its deleter ran, so a consumer that reads it again reads poison, not
    freed memory, and a second release shows in the count."""
    out = new()
    consumer(target)
    for versioned in (True, False):
        k = KitArray(sample(), versioned=versioned)
        box = [k.__dlpack__()]
        state, y = take(target, box[0])
        if state == "ok":
            break
        del box, y
        collect()
    else:
        raise Skip("the consumer takes no capsule object (only objects with __dlpack__): no "
                   "capsule can reach it twice")
    again, y2 = take(target, box[0])
    out.add(again == "refused", "SHOULD", PY + ": a used capsule is refused",
            "a capsule already consumed was imported again")
    del box, y, y2
    collect()
    out.add(k.deleted() == 1, "MUST", PY + ": the tensor of one capsule is released once",
            "one capsule used twice: the deleter ran %d times" % k.deleted())
    return out


@check("L4", "MUST", PY + ": the capsule destructor keeps a pending exception "
       "(PyErr_Fetch/PyErr_Restore around the deleter)")
def l4(target):
    """The capsule destructor keeps a pending exception."""
    out = new()
    p = probe()
    x, cap, counter = shimmed_export(target, sample(flat=True))
    holder = [cap]
    del cap
    kept = p.drop_with_pending(holder)
    out.add(kept, "MUST", PY + ": a pending exception survives the capsule's destructor",
            "the destructor cleared or replaced a pending exception")
    collect()
    out.add(p.count(counter) <= 1, "MUST", PY + ": deleter called at most once (L1 tells "
            "whether it is called)", "the deleter ran %d times" % p.count(counter))
    return out


@check("L5", "MUST", "dlpack.h: the deleter may run on any thread, without the GIL, after the "
       "producer object is gone; the memory stays valid until then")
def l5(target):
    """The memory outlives the producer object; the deleter runs on another thread."""
    out = new()
    p = probe()
    a = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    expect = compact_bytes(a)
    x, cap, counter = shimmed_export(target, a.copy())
    owned = p.consume(cap)
    del cap, x
    collect()
    try:
        got = host_values(owned)
        why_not = "device memory"
    except ValueError as e:
        got, why_not = None, describe(e)
    if got is None:
        out.add(False, "INFO", "", "the values after the producer died not read: " + why_not)
    else:
        out.add(got == expect, "MUST", "dlpack.h: the memory stays valid until the deleter runs",
                "the values changed once the producer object was gone")
    p.release_in_thread(owned)
    out.add(p.count(counter) == 1, "MUST", "dlpack.h: the deleter runs once, from any thread",
            "the deleter ran %d times from a thread without the GIL" % p.count(counter))
    return out
