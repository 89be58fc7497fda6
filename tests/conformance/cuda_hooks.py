# SPDX-License-Identifier: Apache-2.0
"""The `dlpackpp` target's GPU hooks (_target_cuda.py, _probe_cuda.cu), proven.

    cuda_hooks.py build   nvcc compiles the hooks module and it loads; without a GPU its CUDA
                          array fails naming the CUDA call, and the current work stream it
                          sets is what dlpackpp.Tensor's exchange table reports (X4's path,
                          across two modules: the table belongs to the kit's main probe)
    cuda_hooks.py gpu     on a CUDA machine: P9 and X4 pass for dlpackpp, P9's ordering
                          runs and holds for torch and cupy where present (their own SHOULD
                          findings are reported, not judged), the conforming
                          gpu/dlpackpp_P9.py passes P9 and the broken one (a producer that
                          ignores `stream`) fails it

Prints "DLPACKPP_TEST_SKIPPED: ..." where it cannot run (no numpy, no nvcc, no GPU)."""
import glob
import importlib.util
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def skip(why):
    print("DLPACKPP_TEST_SKIPPED: " + why)
    sys.exit(0)


def has_gpu():
    return bool(glob.glob("/dev/nvidia[0-9]*")) or os.path.exists("/dev/dxg")


def prove_build():
    from dlpackpp.conformance._build import UsageError, cuda_probe, nvcc
    try:
        nvcc()
    except UsageError as e:
        skip(str(e))
    import numpy as np
    from dlpackpp.conformance._build import probe
    from dlpackpp.conformance._targets import Dlpackpp
    hooks = cuda_probe()
    print("built and loaded", hooks.__file__)
    failures = []
    if not has_gpu():
        try:
            Dlpackpp.cuda_array(np.arange(4, dtype=np.float32))
            failures.append("cuda_array succeeded without a GPU")
        except BufferError as e:  # Errc::unsupported_device: the CUDA call and its error
            if "failed on cuda:0: cuda" not in str(e):
                failures.append("cuda_array's error does not name the CUDA call: %s" % e)
            print("without a GPU cuda_array raises:", e)
    # X4's path: the context's stream is what dlpackpp.Tensor's table reports, put back after.
    x = Dlpackpp.from_numpy(np.arange(6, dtype=np.float32))
    api = type(x).__dlpack_c_exchange_api__
    before = probe().table_stream(api, 2, 0)
    from dlpackpp.conformance._target_cuda import _CurrentStream
    with _CurrentStream((2, 0), 0x5A5A00):
        inside = probe().table_stream(api, 2, 0)
        other = probe().table_stream(api, 2, 1)
        mine = Dlpackpp.current_stream((2, 0))
    after = probe().table_stream(api, 2, 0)
    if inside[:2] != (0, 0x5A5A00) or mine != 0x5A5A00:
        failures.append("inside the context the table reports %s, the hook %#x" % (inside, mine))
    if other[:2] != (0, 0) or before[:2] != (0, 0) or after[:2] != (0, 0):
        failures.append("another device, or outside the context, is not NULL: %s %s %s"
                        % (other, before, after))
    if failures:
        sys.exit("\n".join(failures))
    print("the table reports the stream the hooks made current, and only there")


def run_kit(label, targets, only, fault=None):
    """The kit's report on `targets`, kept as gpu-<label>.json beside the probe's cache."""
    env = dict(os.environ)
    if fault:
        env["DLPACKPP_CONFORMANCE_FAULT"] = fault
    out = os.path.join(os.environ.get("DLPACKPP_CONFORMANCE_CACHE", HERE), "gpu-%s.json"
                       % label)
    done = subprocess.run([sys.executable, "-m", "dlpackpp.conformance"] + targets
                          + ["--only", only, "--json", out, "--timeout", "300"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=env)
    print(done.stdout)
    import json
    with open(out) as f:
        return done.returncode, json.load(f)


def verdicts(report):
    return {(t["name"], c["id"]): (c["verdict"], c["detail"]) for t in report["targets"]
            for c in t["checks"]}


def prove_gpu():
    if not has_gpu():
        skip("no CUDA device on this machine (no /dev/nvidia* device node)")
    if shutil.which("nvcc") is None and not os.environ.get("NVCC"):
        from dlpackpp.conformance._build import UsageError, nvcc
        try:
            nvcc()
        except UsageError as e:
            skip(str(e))
    targets = ["dlpackpp"] + [t for t in ("torch", "cupy") if importlib.util.find_spec(t)]
    failures = []
    status, report = run_kit("targets", targets, "P9,X4")
    for (name, check), (verdict, detail) in sorted(verdicts(report).items()):
        print("%-9s %s %s %s" % (name, check, verdict, detail))
        if name == "dlpackpp":  # ours: every finding passes, and the ordering ran
            if verdict != "pass" or "skipped" in detail or "inconclusive" in detail:
                failures.append("%s %s: %s (%s)" % (name, check, verdict, detail))
        elif check == "P9" and ("stale" in detail or "GPU ordering" in detail
                                or "GPU half" in detail):
            # A peer's own SHOULD findings (CuPy takes stream=0) are its verdicts, not ours;
            # its ordering must have run and held, or the GPU half proves nothing.
            failures.append("%s P9's ordering: %s" % (name, detail))
    adapter = os.path.join(HERE, "gpu", "dlpackpp_P9.py")
    _, good = run_kit("adapter", [adapter], "P9")
    _, bad = run_kit("broken-adapter", [adapter], "P9", fault="P9")
    good, bad = verdicts(good), verdicts(bad)
    if [v for v, _ in good.values()] != ["pass"] or "inconclusive" in str(good):
        failures.append("the conforming dlpackpp adapter does not pass P9: %s" % good)
    if [v for v, _ in bad.values()] != ["fail"]:
        failures.append("the broken dlpackpp adapter (ignores stream) is not caught: %s" % bad)
    if status not in (0, 1):  # 1: a MUST failed, which the verdicts above already judged
        failures.append("the kit exited %d on %s" % (status, targets))
    if failures:
        sys.exit("\n".join(failures))
    print("P9 and X4 pass for %s on the GPU; the broken dlpackpp adapter fails P9"
          % ", ".join(targets))


if __name__ == "__main__":
    if importlib.util.find_spec("numpy") is None:
        skip("%s has no numpy (the kit's source arrays)" % sys.executable)
    {"build": prove_build, "gpu": prove_gpu}[sys.argv[1]]()
