# SPDX-License-Identifier: Apache-2.0
"""Runs the cases in child processes, as many at once as there are cores: a child that dies
(a signal) or hangs past the timeout fails the case it was in, and a new child takes the
rest of its list. Returns the report's targets and matrix."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading

from . import _checks_consumer, _checks_exchange, _checks_lifetime  # noqa: F401 (register)
from . import _checks_producer  # noqa: F401
from ._checks import ORDER, REGISTRY, ROLES
from ._child import PREFIX

# The checks of one target are split in two children, so that both cores have work.
_HALVES = (("P", "L"), ("C", "X"))


def _death(returncode):
    if returncode is not None and returncode < 0:
        try:
            return "killed by %s" % signal.Signals(-returncode).name
        except ValueError:
            return "killed by signal %d" % -returncode
    return "exited with status %s" % returncode


def _run_child(job, keys, timeout, on_event):
    """Runs one child over `keys` (its job's list); calls on_event(event) per line. Returns
    (the key it died in or None, why, the keys it never reached)."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    child = subprocess.Popen([sys.executable, "-m", "dlpackpp.conformance._child",
                              json.dumps(job)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, universal_newlines=True)
    lines = queue.Queue()
    errors = []

    def pump(stream, sink):
        for line in stream:
            sink(line)
        if stream is child.stdout:
            lines.put(None)

    readers = [threading.Thread(target=pump, args=(child.stdout, lines.put), daemon=True),
               threading.Thread(target=pump, args=(child.stderr, errors.append), daemon=True)]
    for r in readers:
        r.start()
    remaining, current, case = list(keys), None, None
    # Importing a framework and building the probe come before the first case.
    deadline = timeout + 120
    while True:
        try:
            line = lines.get(timeout=deadline)
        except queue.Empty:
            child.kill()
            child.wait()
            where = " in case %r" % case if case else ""
            return current, "timed out after %d s%s" % (timeout, where), remaining
        if line is None:
            break
        if line.startswith(PREFIX + '{"done"'):
            current = None
            break
        if not line.startswith(PREFIX):
            continue
        event = json.loads(line[len(PREFIX):])
        if "case" in event:
            case = event["case"]
        elif "start" in event:
            case = None
            current = event["start"]
            if isinstance(current, list):
                current = tuple(current)
            if current in remaining:
                remaining.remove(current)
            deadline = timeout
        else:
            if "result" in event or "cell" in event:
                current = None
            on_event(event)
    try:
        child.wait(timeout=30)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    for r in readers:
        r.join(5)
    if current is None and not remaining:
        return None, "", []
    why = _death(child.returncode) + (" in case %r" % case if case and current else "")
    tail = "".join(errors).strip().splitlines()[-1:] if errors else []
    if tail and current is None:
        why += ": " + tail[0][:200]
    return current, why, remaining


def run(specs, names, only, timeout, matrix_specs, workers=None):
    """specs: the targets as given; names: their NAMEs; only: the check IDs to run.
    Returns (targets, matrix)."""
    ids = [i for i in ORDER if i in REGISTRY and (not only or i in only)]
    results = {spec: {} for spec in specs}
    versions = {}
    cells = []
    jobs = queue.Queue()
    count = workers or min(os.cpu_count() or 2, 8)
    # Importing a framework is most of a child's cost (PyTorch: seconds): one child per
    # target, split in two only when one target would leave a core idle.
    halves = _HALVES if len(specs) < count else (tuple(ROLES),)
    for spec in specs:
        for half in halves:
            keys = [i for i in ids if i[0] in half and i != "M1"]
            if keys:
                jobs.put(({"target": spec, "checks": keys}, keys))
    if matrix_specs and (not only or "M1" in only):
        from ._matrix import cases
        # A few children for the whole matrix: each imports every framework once.
        for n in range(min(count, len(matrix_specs))):
            keys = [(p, c, name) for p in matrix_specs[n::count] for c in matrix_specs
                    for name, _ in cases()]
            jobs.put(({"matrix": list(matrix_specs), "cells": [list(k) for k in keys]}, keys))
    lock = threading.Lock()

    def worker():
        while True:
            try:
                job, keys = jobs.get_nowait()
            except queue.Empty:
                return
            spec = job.get("target")

            def on_event(event, spec=spec, job=job):
                with lock:
                    if "version" in event and spec is not None:
                        versions.setdefault(spec, event["version"])
                    elif "result" in event:
                        results[spec][event["result"]["id"]] = event["result"]
                    elif "cell" in event:
                        producer, consumer, case, outcome = event["cell"]
                        if outcome is not None:
                            cells.append((producer, consumer, case, outcome))
            died_in, why, rest = _run_child(job, keys, timeout, on_event)
            with lock:
                if died_in is not None and "checks" in job:
                    results[spec][died_in] = {
                        "id": died_in, "role": ROLES[died_in[0]], "level": "MUST",
                        "verdict": "fail", "rule": "Python spec: a producer or consumer "
                        "never crashes or hangs the interpreter (" + REGISTRY[died_in][2] + ")",
                        "detail": "the child process " + why}
                elif died_in is not None:
                    cells.append(died_in + ({"outcome": "crash", "detail": why},))
                elif rest and "checks" in job:
                    for key in rest:
                        results[spec][key] = {"id": key, "role": ROLES[key[0]], "level": "MUST",
                                              "verdict": "fail", "rule": REGISTRY[key][2],
                                              "detail": "the child process " + why}
                    rest = []
                elif rest:  # died before its first cell: the producer does not load
                    cells.extend(tuple(k) + ({"outcome": "crash", "detail": why},)
                                 for k in rest)
                    rest = []
            if rest:
                new_job = dict(job)
                new_job["checks" if "checks" in job else "cells"] = [
                    k if isinstance(k, str) else list(k) for k in rest]
                jobs.put((new_job, rest))

    threads = [threading.Thread(target=worker) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    targets = []
    for spec, name in zip(specs, names):
        checks = [results[spec][i] for i in ids if i in results[spec]]
        targets.append({"name": name, "version": versions.get(spec, ""), "checks": checks})
    spec_name = dict(zip(specs, names))
    order = {name: n for n, (name, _) in enumerate(__import__(
        "dlpackpp.conformance._matrix", fromlist=["cases"]).cases())}
    cells.sort(key=lambda c: (specs.index(c[0]), specs.index(c[1]), order.get(c[2], 0)))
    matrix = [{"producer": spec_name[p], "consumer": spec_name[c], "case": case,
               "outcome": o["outcome"], "detail": o.get("detail", "")}
              for p, c, case, o in cells]
    return targets, matrix
