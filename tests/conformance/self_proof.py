# SPDX-License-Identifier: Apache-2.0
"""The conformance kit proves itself. Each mode runs the kit on the reference framework
(_reference.py) through broken.py, with $DLPACKPP_CONFORMANCE_FAULT naming what it does:

    self_proof.py fault ID        broken.py with fault ID must fail check ID (M1: 'wrong' cells;
                                  a name of _reference.EXTRA_FAULTS: its check, at its level)
    self_proof.py variant NAME    a conforming variant (what real frameworks do that the spec
                                  allows) must pass every check, as conforming.py must
    self_proof.py conforming      conforming.py passes every check, exit 0, an all-pass matrix
    self_proof.py target NAME     a built-in target fails no MUST check (the kit's exit status)
    self_proof.py coverage ID...  the IDs CMake runs are every pinned ID, each with a fault

Prints "DLPACKPP_TEST_SKIPPED: ..." where this interpreter cannot run the kit (no numpy)."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GPU_HALVES = ("GPU half skipped",)


def run_kit(targets, only=None, fault=None, extra=()):
    """(exit status, report) of the kit on `targets` (a list)."""
    env = dict(os.environ)
    if fault:
        env["DLPACKPP_CONFORMANCE_FAULT"] = fault
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        command = [sys.executable, "-m", "dlpackpp.conformance"] + list(targets) + [
            "--json", out, "--timeout", "60"] + list(extra)
        if only:
            command += ["--only", only]
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, env=env)
        if not os.path.exists(out):
            sys.exit("the kit wrote no report (exit %d):\n%s" % (done.returncode, done.stdout))
        with open(out) as f:
            return done.returncode, json.load(f)


def prove_fault(fault):
    """The broken adapter with `fault` (a check ID, or a name of EXTRA_FAULTS) fails its check
    (for an extra fault: at its level, with the detail it names)."""
    sys.path.insert(0, HERE)
    from _reference import EXTRA_FAULTS
    check_id, level, needle, _ = EXTRA_FAULTS.get(fault, (fault, None, "", ""))
    status, report = run_kit([os.path.join(HERE, "broken.py")], check_id, fault)
    if check_id == "M1":
        wrong = [c for c in report["matrix"] if c["outcome"] == "wrong"]
        if not wrong:
            sys.exit("M1: the broken adapter's matrix has no 'wrong' cell: %s" % report["matrix"])
        print("M1 fails as it should: %d wrong cells" % len(wrong))
        return
    entries = [c for t in report["targets"] for c in t["checks"] if c["id"] == check_id]
    if len(entries) != 1:
        sys.exit("%s: expected one entry, report has %s" % (check_id, entries))
    entry = entries[0]
    if entry["verdict"] != "fail":
        sys.exit("%s: the broken adapter was not caught: %s" % (check_id, json.dumps(entry)))
    if entry["level"] == "MUST" and status != 1:
        sys.exit("%s failed at MUST but the kit exited %d" % (check_id, status))
    if needle and (entry["level"] != level or needle not in entry["detail"]):
        sys.exit("%s: %s did not fail at %s saying %r: %s" % (fault, check_id, level, needle,
                                                             json.dumps(entry)))
    if needle and (entry["level"] != level or needle not in entry["detail"]):
        sys.exit("%s: %s did not fail at %s saying %r: %s" % (fault, check_id, level, needle,
                                                             json.dumps(entry)))
    print("%s fails as it should (%s): %s" % (check_id, entry["level"], entry["detail"]))


def prove_passes(adapter, fault=None):
    """Every check passes (or skips for want of a GPU), exit 0, the matrix all `pass`; a
    variant of SHOULD_ONLY fails its one check at SHOULD."""
    sys.path.insert(0, HERE)
    from _reference import SHOULD_ONLY
    should = SHOULD_ONLY.get(fault)
    status, report = run_kit([adapter], fault=fault)
    problems = []
    for t in report["targets"]:
        for c in t["checks"]:
            if c["id"] == should:
                if c["verdict"] != "fail" or c["level"] != "SHOULD":
                    problems.append("%s is not a SHOULD failure: %s" % (c["id"], c))
            elif c["verdict"] == "fail":
                problems.append("%s failed: %s" % (c["id"], c["detail"]))
            elif c["verdict"] == "skip" and not any(g in c["detail"] for g in GPU_HALVES):
                problems.append("%s skipped: %s" % (c["id"], c["detail"]))
    problems += ["M1 %s: %s" % (c["case"], c["outcome"]) for c in report["matrix"]
                 if c["outcome"] != "pass"]
    if not report["matrix"]:
        problems.append("M1: no matrix")
    if status != 0:
        problems.append("the kit exited %d" % status)
    if problems:
        sys.exit("%s is not passed:\n  %s" % (fault or "the conforming adapter",
                                              "\n  ".join(problems)))
    ids = [c["id"] for t in report["targets"] for c in t["checks"]]
    print("%s passes %d checks and %d matrix cells" % (fault or "the conforming adapter",
                                                      len(ids), len(report["matrix"])))


def prove_target(name):
    """A built-in target fails no MUST check."""
    status, report = run_kit([name])
    for t in report["targets"]:
        for c in t["checks"]:
            if c["verdict"] == "fail":
                print("%s %s %s: %s (%s)" % (t["name"], c["id"], c["level"], c["detail"],
                                             c["rule"]))
    if status != 0:
        sys.exit("%s fails a MUST check (exit %d)" % (name, status))


def prove_coverage(ids):
    """Every pinned ID has a CMake test and a fault."""
    sys.path.insert(0, HERE)
    from _reference import FAULTS
    from dlpackpp.conformance._checks import ORDER
    missing = sorted(set(ORDER) - set(ids)) + sorted(set(ORDER) - set(FAULTS))
    extra = sorted(set(ids) - set(ORDER))
    if missing or extra:
        sys.exit("self-proof coverage: IDs without a test or a fault: %s; unknown IDs: %s"
                 % (missing, extra))
    print("every pinned ID (%d) has a broken adapter and a test" % len(ORDER))


def main(mode, args):
    """Runs the check or mode named on the command line."""
    if importlib.util.find_spec("numpy") is None:
        print("DLPACKPP_TEST_SKIPPED: %s has no numpy (the kit's source arrays)" % sys.executable)
        return
    if mode == "fault":
        prove_fault(args[0])
    elif mode == "variant":
        prove_passes(os.path.join(HERE, "broken.py"), args[0])
    elif mode == "conforming":
        prove_passes(os.path.join(HERE, "conforming.py"))
    elif mode == "target":
        prove_target(args[0])
    elif mode == "coverage":
        prove_coverage(args)
    else:
        sys.exit("unknown mode %r" % mode)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
