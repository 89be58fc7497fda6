# SPDX-License-Identifier: Apache-2.0
"""Runs the cases in child processes (_child_process.py), as many at once as there are
cores: a child that dies (a signal) or hangs past the timeout fails the case it was in, and
a new child takes the rest of its list. Every check asked for gets an entry and every
matrix cell an outcome, whatever happened to the child that should have made it."""

import os
import queue
import threading

from ._build import UsageError
from ._checks import CRASHED, ORDER, entry, registry
from ._child_process import run_child
from ._targets import is_builtin, load, sides

# The checks of one target are split in two children, so that both cores have work.
_HALVES = (("P", "L"), ("C", "X"))


def adapters(specs, timeout):
    """{spec: sides(adapter)} for the command line's targets. Adapter files are loaded in
    children (one that crashes or hangs on import is a usage error, not the kit's end)."""
    out = {spec: sides(load(spec)) for spec in specs if is_builtin(spec)}
    files = [spec for spec in specs if not is_builtin(spec)]
    errors = {}

    def load_one(spec):
        """Loads one adapter file in a child."""
        got = {}
        outcome = run_child({"load": spec}, [], timeout, got.update)
        if "adapter" in got:
            out[spec] = got["adapter"]
        else:
            errors[spec] = got.get("error") or "adapter file %s cannot be loaded: the child " \
                "process %s" % (spec, outcome.why or "gave no answer")

    threads = [threading.Thread(target=load_one, args=(s,)) for s in files]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for spec in files:  # the first on the command line is the one reported
        if spec in errors:
            raise UsageError(errors[spec])
    return out


def _jobs(specs, kinds, ids, count):
    """The children to run: ({job}, [keys]) for each target's checks and for the matrix."""
    jobs = []
    # Importing a framework is most of a child's cost (PyTorch: seconds): one child per
    # target, split in two only when one target would leave a core idle.
    halves = _HALVES if len(specs) < count else (tuple("PLCX"),)
    for spec in specs:
        for half in halves:
            keys = [i for i in ids if i[0] in half]
            if keys:
                jobs.append(({"target": spec, "checks": keys}, keys))
    if "M1" in ids:
        from ._matrix import cases
        producers = [s for s in specs if kinds[s]["producer"]]
        consumers = [s for s in specs if kinds[s]["consumer"]]
        # A few children for the whole matrix: each imports every framework once.
        for n in range(min(count, len(producers))):
            keys = [(p, c, name) for p in producers[n::count] for c in consumers
                    for name, _ in cases()]
            if keys:
                jobs.append(({"matrix": sorted(set(producers + consumers), key=specs.index),
                              "cells": [list(k) for k in keys]}, keys))
    return jobs


class _Results:
    """What the children said, gathered under one lock."""

    def __init__(self, specs):
        self.lock = threading.Lock()
        self.checks = {spec: {} for spec in specs}
        self.versions = {}
        self.cells = {}

    def take(self, spec, event):
        """Records one event of a child running `spec`."""
        with self.lock:
            if "version" in event and spec is not None and event["version"]:
                self.versions.setdefault(spec, event["version"])
            elif "result" in event:
                self.checks[spec][event["result"]["id"]] = event["result"]
            elif "cell" in event:
                producer, consumer, case, outcome = event["cell"]
                self.cells[(producer, consumer, case)] = outcome

    def lost(self, job, key, why, crashed):
        """A key that gave no verdict: a failed check (at MUST, for breaking CRASHED where
        the child died in it), or a crashed cell."""
        with self.lock:
            if "checks" in job:
                rule = "%s (%s)" % (CRASHED, registry()[key][2]) if crashed else None
                self.checks[job["target"]][key] = entry(
                    key, "fail", "no verdict: the child process " + why, "MUST", rule)
            else:
                self.cells[tuple(key)] = {"outcome": "crash", "detail": why}


def _work(jobs, results, timeout):
    while True:
        try:
            job, keys = jobs.get_nowait()
        except queue.Empty:
            return
        spec = job.get("target")
        outcome = run_child(job, keys, timeout, lambda event: results.take(spec, event))
        if outcome.current is not None:
            results.lost(job, outcome.current, outcome.why, True)
        rest = outcome.remaining
        if rest and (outcome.current is None or not outcome.started):
            # Died before its first key or between keys: the next child would do the same.
            for key in rest:
                results.lost(job, key, outcome.why or "ended early", False)
        elif rest:
            new_job = dict(job)
            new_job["checks" if "checks" in job else "cells"] = [
                k if isinstance(k, str) else list(k) for k in rest]
            jobs.put((new_job, rest))


def run(specs, kinds, only, timeout, workers=None):
    """specs: the targets as given; kinds: adapters(specs); only: the check IDs to run (None:
    all). Returns (targets, matrix) for the report."""
    registry()
    ids = [i for i in ORDER if not only or i in only]
    count = workers or min(os.cpu_count() or 2, 8)
    jobs = queue.Queue()
    for job in _jobs(specs, kinds, ids, count):
        jobs.put(job)
    results = _Results(specs)
    threads = [threading.Thread(target=_work, args=(jobs, results, timeout))
               for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    targets = []
    for spec in specs:
        checks = [results.checks[spec].get(i) or entry(i, "fail", "no verdict: no child "
                                                       "reported this check", "MUST")
                  for i in ids if i != "M1"]
        targets.append({"name": kinds[spec]["name"], "version": results.versions.get(spec, ""),
                        "spec": spec, "checks": checks})
    return targets, _matrix(specs, kinds, results.cells)


def _matrix(specs, kinds, cells):
    from ._matrix import cases
    order = {name: n for n, (name, _) in enumerate(cases())}
    keys = sorted(cells, key=lambda k: (specs.index(k[0]), specs.index(k[1]), order[k[2]]))
    return [{"producer": kinds[p]["name"], "consumer": kinds[c]["name"], "case": case,
             "outcome": cells[(p, c, case)]["outcome"],
             "detail": cells[(p, c, case)].get("detail", "")}
            for p, c, case in keys if cells[(p, c, case)] is not None]
