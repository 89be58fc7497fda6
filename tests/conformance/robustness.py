# SPDX-License-Identifier: Apache-2.0
"""Nothing is lost: the kit's verdicts survive what frameworks and adapters do to a process.

    robustness.py CASE      CASE: noisy, hang, crash, load, usage, baseline, repro,
                            producer_only, warmup

Each case runs the kit on an adapter of this folder (robust_*.py) or with bad arguments, and
fails unless every verdict asked for is in the report and the exit status is right; usage
errors must be exit 2 with one line on stderr and no traceback. Prints
"DLPACKPP_TEST_SKIPPED: ..." where this interpreter cannot run the kit (no numpy)."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def kit(args, env=None, timeout=240):
    """(exit status, stdout, stderr, seconds) of the kit with `args`."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "dlpackpp.conformance"] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=dict(os.environ, **(env or {})),
                          timeout=timeout)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


def report_of(adapter, args=(), env=None):
    """(exit status, report, stderr) of the kit on an adapter of this folder."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json")
        status, _, err, _ = kit([os.path.join(HERE, adapter), "--json", path] + list(args), env)
        if not os.path.exists(path):
            sys.exit("no report (exit %d): %s" % (status, err[-2000:]))
        with open(path) as f:
            return status, json.load(f), err


def checks(report):
    """{ID: entry} of a report's checks."""
    return {c["id"]: c for t in report["targets"] for c in t["checks"]}


def expect(condition, what):
    """Fails the test with `what` unless `condition`."""
    if not condition:
        sys.exit("robustness: " + what)


def noisy():
    """An adapter that prints without newlines: no check vanishes."""
    status, report, _ = report_of("robust_noisy.py")
    got = checks(report)
    from dlpackpp.conformance._checks import ORDER
    missing = [i for i in ORDER if i != "M1" and i not in got]
    expect(not missing, "checks vanished from the report: %s" % missing)
    expect(got["P10"]["verdict"] == "fail" and got["P10"]["level"] == "MUST",
           "P10 was not failed: %s" % got["P10"])
    expect(status == 1, "exit %d, not 1, with a MUST failure" % status)
    expect(report["matrix"], "the matrix vanished")
    print("noisy adapter: %d checks, %d cells, exit 1" % (len(got), len(report["matrix"])))


def hang():
    """An adapter that hangs while printing: a wall-clock timeout."""
    start = time.monotonic()
    status, report, _ = report_of("robust_hang.py", ["--only", "P3,P10", "--timeout", "3"])
    got = checks(report)
    expect(set(got) == {"P3", "P10"}, "report has %s" % sorted(got))
    expect(got["P3"]["verdict"] == "fail" and "timed out after 3 s in case '0-d'" in
           got["P3"]["detail"], "P3: %s" % got["P3"])
    expect(got["P10"]["verdict"] == "pass", "P10: %s" % got["P10"])
    expect(status == 1, "exit %d" % status)
    print("hang while printing: P3 timed out, P10 passed, %.1f s" % (time.monotonic() - start))


def crash():
    """An adapter that dies of SIGSEGV: the case is named, the rest run."""
    status, report, _ = report_of("robust_crash.py", ["--only", "C3,C4,C5"])
    got = checks(report)
    expect(set(got) == {"C3", "C4", "C5"}, "report has %s" % sorted(got))
    expect(got["C3"]["verdict"] == "fail" and "SIGSEGV in case 'F order'" in
           got["C3"]["detail"], "C3: %s" % got["C3"])
    expect(got["C4"]["verdict"] == got["C5"]["verdict"] == "pass", "C4/C5: %s" % got)
    expect(status == 1, "exit %d" % status)
    print("crash: C3 names SIGSEGV and its case, C4 and C5 passed in a new child")


def producer_only():
    """A producer-only adapter adds no consumer column."""
    status, report, _ = report_of("robust_producer.py", ["numpy", "--only", "C4,P3,M1"])
    cells = report["matrix"]
    expect(not [c for c in cells if c["consumer"] == "producer-only"],
           "a producer-only adapter got a consumer column")
    expect([c for c in cells if c["producer"] == "producer-only"], "it got no matrix row")
    mine = [t for t in report["targets"] if t["name"] == "producer-only"][0]["checks"]
    c4 = [c for c in mine if c["id"] == "C4"][0]
    expect(c4["verdict"] == "skip", "C4 of a producer-only adapter: %s" % c4)
    print("producer-only adapter: a matrix row, no column, consumer checks skipped")


def warmup():
    """P9's GPU half decides after a warm-up: a first launch that waits (lazy module loading)
    is not taken for launches that block; launches that always block stay inconclusive.
    Without a GPU, on a simulated one: slow_update sleeps where a launch would wait."""
    import numpy as np
    from dlpackpp.conformance._checks_stream import ordering
    from dlpackpp.conformance._kit import Findings

    class Device:
        def __init__(self, blocks_always):
            self.blocks_always, self.launches = blocks_always, 0

        def slow_update(self, x):
            self.launches += 1
            if self.blocks_always or self.launches == 1:
                time.sleep(0.2)  # the host waits for the device
            return x + 1

    for blocks_always, conclusive in ((False, True), (True, False)):
        device = Device(blocks_always)
        out = Findings()
        a = np.arange(8, dtype=np.float32)
        ordering(out, device, lambda a: a.copy(), a, a.copy(), lambda x: x.tobytes(),
                 lambda: None, "simulated")
        decided = [f for f in out if f.level == "MUST"]
        expect(bool(decided) == conclusive and device.launches == 2,
               "blocks always %s: %s, %d launches" % (blocks_always, [
                   (f.ok, f.level, f.text) for f in out], device.launches))
        expect(not conclusive or decided[0].ok, "the ordered result was failed")
    print("P9 warm-up: a first launch that waits is warmed away; launches that always block "
          "stay inconclusive")


def one_line_usage(args, needle, env=None):
    """The kit exits 2 with one line naming `needle`."""
    status, out, err, _ = kit(args, env, timeout=120)
    lines = err.strip().splitlines()
    expect(status == 2, "%s: exit %d, not 2 (%s)" % (args, status, err[-500:]))
    expect(len(lines) == 1 and "Traceback" not in err, "%s: not one line: %r" % (args, err))
    expect(needle in lines[0], "%s: %r does not say %r" % (args, lines[0], needle))
    return lines[0]


def load():
    """Adapters that crash, hang or raise on import: exit 2, one line."""
    adapter = os.path.join(HERE, "robust_load.py")
    for how, needle in (("crash", "SIGSEGV"), ("hang", "timed out"), ("raise", "ValueError")):
        line = one_line_usage([adapter, "--timeout", "3"], needle,
                              {"DLPACKPP_CONFORMANCE_LOAD": how})
        expect("robust_load.py" in line, "the line does not name the file: %r" % line)
        print("adapter that cannot load (%s): %s" % (how, line))


def usage():
    """Bad arguments, paths and cache: exit 2, one line, no traceback."""
    adapter = os.path.join(HERE, "conforming.py")
    with tempfile.TemporaryDirectory() as tmp:
        garbage = os.path.join(tmp, "garbage.json")
        with open(garbage, "w") as f:
            f.write("{not json")
        cases = [([adapter, "--timeout", v], "--timeout") for v in ("inf", "nan", "0", "-1")]
        cases += [([adapter, "--timeout", "soon"], "invalid float"),
                  ([adapter, "--json", os.path.join(tmp, "no", "such", "r.json")], "--json"),
                  ([adapter, "--html", tmp], "--html"),
                  ([adapter, "--markdown", "/proc/version"], "--markdown"),
                  ([adapter, "--baseline", os.path.join(tmp, "none.json")], "--baseline"),
                  ([adapter, "--baseline", garbage], "--baseline"),
                  ([adapter, "--repro", garbage], "--repro"),
                  (["nosuchframework"], "unknown target"),
                  ([adapter, "--only", "P99"], "unknown check ID")]
        for args, needle in cases:
            one_line_usage(args, needle)
        one_line_usage([adapter], "cache", {"DLPACKPP_CONFORMANCE_CACHE": "/proc/kit-cache"})
    print("usage errors: %d cases, each exit 2 with one line" % (len(cases) + 1))


def baseline():
    """--baseline: known failures pass, new ones fail, fixed ones are listed."""
    with tempfile.TemporaryDirectory() as tmp:
        first = os.path.join(tmp, "first.json")
        env = {"DLPACKPP_CONFORMANCE_FAULT": "P10"}
        broken = os.path.join(HERE, "broken.py")
        kit([broken, "--only", "P10,P1", "--json", first], env)
        status, _, err, _ = kit([broken, "--only", "P10,P1", "--baseline", first, "--json",
                                 os.path.join(tmp, "again.json")], env)
        expect(status == 0, "a known failure still fails the run (exit %d): %s" % (status, err))
        with open(first) as f:
            report = json.load(f)
        for c in report["targets"][0]["checks"]:
            c["verdict"] = "pass"
        clean = os.path.join(tmp, "clean.json")
        with open(clean, "w") as f:
            json.dump(report, f)
        status, _, err, _ = kit([broken, "--only", "P10", "--baseline", clean], env)
        expect(status == 1 and "new MUST failure: broken-P10 P10" in err,
               "a new failure was not told (exit %d): %s" % (status, err))
        report["targets"][0]["name"] = "reference"
        report["targets"][0]["checks"][0]["verdict"] = "fail"
        fixed = os.path.join(tmp, "fixed.json")
        with open(fixed, "w") as f:
            json.dump(report, f)
        status, _, err, _ = kit([os.path.join(HERE, "conforming.py"), "--only", "P1",
                                 "--baseline", fixed])
        expect(status == 0 and "fixed since the baseline: reference P1" in err,
               "a fixed check was not listed (exit %d): %s" % (status, err))
    print("baseline: known failures pass, new ones fail, fixed ones are listed")


def repro():
    """--repro scripts exit 1 with the defect and 0 without, with no dlpackpp."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "repro")
        broken = os.path.join(HERE, "broken.py")
        for fault in ("C4", "P3"):
            kit([broken, "--only", fault, "--repro", folder, "--json",
                 os.path.join(tmp, "r.json")], {"DLPACKPP_CONFORMANCE_FAULT": fault})
            path = os.path.join(folder, "broken-%s_%s.py" % (fault, fault))
            expect(os.path.isfile(path), "no script for %s: %s" % (fault, os.listdir(folder)))
            with open(path) as f:
                text = f.read()
            expect("import dlpackpp" not in text and "from dlpackpp" not in text,
                   "the script imports dlpackpp")
            for variant, want in ((fault, 1), ("legacy-refusal", 0)):
                # The reference framework (the adapter) is built on the kit's probe; the
                # script itself needs none of it.
                done = subprocess.run([sys.executable, path], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, universal_newlines=True,
                                      env=dict(os.environ, DLPACKPP_CONFORMANCE_FAULT=variant),
                                      cwd=tmp, timeout=120)
                expect(want == 0 or "expected" in done.stdout, "%s printed no expected/got: %s"
                       % (os.path.basename(path), done.stdout))
                expect(done.returncode == want, "%s with %s: exit %d, not %d: %s" % (
                    os.path.basename(path), variant, done.returncode, want, done.stdout))
    print("--repro: scripts without dlpackpp exit 1 while the defect is there, 0 once gone")


if __name__ == "__main__":
    if importlib.util.find_spec("numpy") is None:
        print("DLPACKPP_TEST_SKIPPED: %s has no numpy" % sys.executable)
    else:
        {"noisy": noisy, "hang": hang, "crash": crash, "load": load, "usage": usage,
         "baseline": baseline, "repro": repro, "producer_only": producer_only,
         "warmup": warmup}[sys.argv[1]]()
