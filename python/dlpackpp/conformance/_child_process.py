# SPDX-License-Identifier: Apache-2.0
"""One child process of the runner, watched: its events come on a pipe of their own
(_channel.py); its stdout and stderr are drained by a thread that keeps only their last
bytes (whatever a framework prints, however much, never blocks it, fills a disk or reaches
the parser); and a wall-clock deadline per case kills it and everything it started,
whatever it prints meanwhile."""

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

from ._channel import child_environment

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def death(returncode):
    """How a child ended, in words."""
    if returncode is not None and returncode < 0:
        try:
            return "killed by %s" % signal.Signals(-returncode).name
        except ValueError:
            return "killed by signal %d" % -returncode
    return "exited with status %s" % returncode


class _Tail:
    """Drains a stream on a thread of its own, keeping its last `size` bytes."""

    def __init__(self, stream, size=4096):
        self.stream, self.size, self.data = stream, size, b""
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self):
        while True:
            chunk = os.read(self.stream.fileno(), 1 << 16)
            if not chunk:
                return
            self.data = (self.data + chunk)[-self.size:]

    def close(self):
        """Waits a little for the end of the stream, then closes it (unless a process the
        child started still holds it open: its thread and fd then end with the kit)."""
        self.thread.join(2)
        if not self.thread.is_alive():
            self.stream.close()

    def last_line(self):
        """The last non-empty line of what came (its last 200 characters)."""
        lines = [l.strip() for l in self.data.decode("utf-8", "replace").splitlines()]
        lines = [l for l in lines if l]
        return lines[-1][-200:] if lines else ""


class Outcome:
    """How a child's run ended: `current` is the key it was in when it died or timed out
    (None when it was between keys), `case` the sub-case it had named, `why` in words (empty
    when it finished its list), `remaining` the keys it never started."""

    def __init__(self):
        self.current = self.case = None
        self.why, self.remaining, self.started, self.finished = "", [], 0, False

    def where(self):
        """Where in its list the child was, in words."""
        if self.current is None:
            return "" if self.started else " while starting (importing the adapter and its " \
                "framework)"
        if self.case:
            return " in case %r" % self.case
        return " in %s" % (self.current if isinstance(self.current, str) else
                           "%s -> %s, %r" % self.current)


def run_child(job, keys, timeout, on_event):
    """Runs one child over `keys` (the job's list) and calls on_event(event) for each result,
    cell or load event. The deadline is `timeout` seconds of wall clock from the start of
    each key (the first also covers importing the framework). Returns an Outcome."""
    read_end, write_end = os.pipe()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **child_environment(write_end))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_ROOT, env.get("PYTHONPATH")]))
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "dlpackpp.conformance._child", json.dumps(job)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env=env, pass_fds=(write_end,), start_new_session=True)
    finally:
        os.close(write_end)
    output = _Tail(child.stdout)
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        outcome = _watch(child, pipe, keys, timeout, on_event)
    try:
        child.wait(timeout=30)
    except subprocess.TimeoutExpired:  # closed its channel but lives on
        _kill(child)
    if not outcome.why and not outcome.finished:  # the channel closed: the child ended
        outcome.why = death(child.returncode) + outcome.where()
    output.close()
    if outcome.why:
        tail = output.last_line()
        if tail:
            outcome.why += " (its last output: %s)" % tail
    return outcome


def _kill(child):
    try:
        os.killpg(child.pid, signal.SIGKILL)  # the child and anything it started
    except OSError:
        child.kill()
    child.wait()


def _watch(child, pipe, keys, timeout, on_event):
    out = Outcome()
    out.remaining = list(keys)
    deadline = time.monotonic() + timeout
    pending = b""
    while not out.finished:
        left = deadline - time.monotonic()
        if left <= 0:
            _kill(child)
            out.why = "timed out after %g s%s" % (timeout, out.where())
            return out
        if not select.select([pipe], [], [], left)[0]:
            continue
        chunk = os.read(pipe.fileno(), 1 << 16)
        if not chunk:
            break
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            if _take(out, json.loads(line.decode("utf-8")), on_event):
                deadline = time.monotonic() + timeout
    return out


def _take(out, event, on_event):
    """Records one event in `out`; True when a key started (its deadline starts then)."""
    if "done" in event:
        out.finished, out.current = True, None
    elif "case" in event:
        out.case = event["case"]
    elif "start" in event:
        key = event["start"]
        out.current = tuple(key) if isinstance(key, list) else key
        out.case = None
        out.started += 1
        if out.current in out.remaining:
            out.remaining.remove(out.current)
        return True
    else:
        if "result" in event or "cell" in event:
            out.current = None
        on_event(event)
    return False
