# SPDX-License-Identifier: Apache-2.0
"""The conformance kit proves itself: `self_proof.py ID` runs the kit on broken/ID.py (which
breaks the one rule check ID tests) and fails unless the report fails that check;
`self_proof.py conforming` runs every check on conforming.py and fails unless all pass (or
skip for want of a GPU), the exit status is 0 and the matrix is all `pass`;
`self_proof.py target NAME` runs the kit on a built-in target and fails when it fails a MUST
check (the kit's exit status). Prints
"DLPACKPP_TEST_SKIPPED: ..." where this interpreter cannot run the kit (no numpy)."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GPU_HALVES = ("GPU half skipped",)


def run_kit(adapter, only):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        command = [sys.executable, "-m", "dlpackpp.conformance", adapter, "--json", out,
                   "--timeout", "60"]
        if only:
            command += ["--only", only]
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
        if not os.path.exists(out):
            sys.exit("the kit wrote no report (exit %d):\n%s" % (done.returncode, done.stdout))
        with open(out) as f:
            return done.returncode, json.load(f)


def prove_broken(check_id):
    adapter = os.path.join(HERE, "broken", check_id + ".py")
    status, report = run_kit(adapter, check_id)
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
    print("%s fails as it should (%s): %s" % (check_id, entry["level"], entry["detail"]))


def prove_conforming():
    status, report = run_kit(os.path.join(HERE, "conforming.py"), None)
    problems = []
    for t in report["targets"]:
        for c in t["checks"]:
            if c["verdict"] == "fail":
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
        sys.exit("the conforming adapter is not passed:\n  " + "\n  ".join(problems))
    ids = [c["id"] for t in report["targets"] for c in t["checks"]]
    print("conforming adapter passes %d checks and %d matrix cells" % (len(ids),
                                                                       len(report["matrix"])))


def main(which):
    if importlib.util.find_spec("numpy") is None:
        print("DLPACKPP_TEST_SKIPPED: %s has no numpy (the kit's source arrays)" % sys.executable)
        return
    if which == "conforming":
        prove_conforming()
    elif which == "target":
        status, report = run_kit(sys.argv[2], None)
        for t in report["targets"]:
            for c in t["checks"]:
                if c["verdict"] == "fail":
                    print("%s %s %s: %s (%s)" % (t["name"], c["id"], c["level"], c["detail"],
                                                 c["rule"]))
        if status != 0:
            sys.exit("%s fails a MUST check (exit %d)" % (sys.argv[2], status))
    else:
        prove_broken(which)


if __name__ == "__main__":
    main(sys.argv[1])
