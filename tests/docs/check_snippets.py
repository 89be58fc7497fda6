# SPDX-License-Identifier: Apache-2.0
"""Builds the docs' code blocks so they cannot go stale: `check_snippets.py <step> <root> <work>`.

A fenced block right after `<!-- snippet: <project>/<file> ... -->` becomes that file of a small
project under <work> (one block may name several files); `<!-- snippet: none: <why> -->` says
why a block is not built. Steps, each a CTest test (tests/docs/CMakeLists.txt):

  marks     every block of the checked pages is marked, and every project is one a step builds
  install   the README's install commands, run as written in a copy of the checkout with HOME
            in <work>; also the pip wheel's layout (the same install rules, under dlpackpp/)
  readme    the README's consumer CMakeLists.txt and commands, around examples/quick_start.cpp
  pybind11  docs/bindings.md's pybind11 project: its build commands as written, then use.py
  nanobind  the same for nanobind
  pip       both projects' pyproject.toml, built by pip (no build isolation, no index)
  torch     the torch.utils.cpp_extension recipes: load() and setup.py

The commands run with the interpreter this script runs under first on PATH as `python3`. A
step whose peers are absent prints DLPACKPP_TEST_SKIPPED and the reason.
"""
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys

# Pages whose every block must be marked; blocks elsewhere are built where marked.
CHECKED = ["docs/bindings.md"]
PROJECTS = {"readme", "pybind11", "nanobind", "torch"}

MARK = re.compile(r"<!-- snippet: (.*?) -->\s*\n```[^\n]*\n(.*?)^```", re.S | re.M)
FENCE = re.compile(r"^```", re.M)


def skip(why):
    print("DLPACKPP_TEST_SKIPPED: " + why)
    sys.exit(0)


def fail(why):
    print("error: " + why)
    sys.exit(1)


def snippets(root):
    """{project/file: text} from every marked block, and [(page, n)] of unmarked blocks."""
    files, unmarked = {}, []
    pages = ["README.md"] + sorted(
        "docs/" + f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    for page in pages:
        with open(os.path.join(root, page)) as f:
            text = f.read()
        marked = set()
        for m in MARK.finditer(text):
            marked.add(m.start(2))
            names = m.group(1).split()
            if names[0] == "none:":
                continue
            for name in names:
                if files.get(name, m.group(2)) != m.group(2):
                    fail("%s: %s is given two different texts" % (page, name))
                files[name] = m.group(2)
        if page in CHECKED:
            fences = [f.start() for f in FENCE.finditer(text)]
            for start in fences[::2]:  # the opening fences
                body = text.index("\n", start) + 1
                if body not in marked:
                    unmarked.append((page, text.count("\n", 0, start) + 1))
    return files, unmarked


def write_project(work, files, project):
    folder = os.path.join(work, project)
    shutil.rmtree(folder, ignore_errors=True)
    wanted = {k: v for k, v in files.items() if k.split("/")[0] == project}
    if not wanted:
        fail("the docs mark no file of project " + project)
    for name, text in wanted.items():
        path = os.path.join(work, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return folder


def env_for(work):
    env = dict(os.environ)
    env["HOME"] = os.path.join(work, "home")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONPATH", None)
    return env


def run(cmd, cwd, env):
    print("+ (%s) %s" % (cwd, cmd if isinstance(cmd, str) else " ".join(cmd)), flush=True)
    if subprocess.run(cmd, cwd=cwd, env=env).returncode != 0:
        fail("that command failed")


def run_script(folder, name, env):
    """Runs <folder>/<name>, a shell snippet, as written (bash, stopping at the first error)."""
    run(["bash", "-euo", "pipefail", name], folder, env)


def installed_prefix(work):
    prefix = os.path.join(work, "home", ".local")
    if not os.path.isfile(os.path.join(prefix, "share", "cmake", "dlpackpp", "dlpackppConfig.cmake")):
        fail("dlpackpp is not installed under %s: the docs_install test runs first" % prefix)
    return prefix


def have(module):
    return importlib.util.find_spec(module) is not None


def need_numpy():
    if not have("numpy"):
        skip("NumPy is not importable by %s; the snippets' use.py needs it" % sys.executable)


def step_marks(root, work):
    files, unmarked = snippets(root)
    if unmarked:
        fail("unmarked code blocks (mark each `<!-- snippet: <project>/<file> -->`, or "
             "`<!-- snippet: none: <why> -->`): " + ", ".join("%s:%d" % u for u in unmarked))
    projects = {name.split("/")[0] for name in files}
    if projects - PROJECTS:
        fail("snippets name projects no step builds: " + ", ".join(sorted(projects - PROJECTS)))
    for name in sorted(files):
        print("snippet " + name)


def step_install(root, work):
    files, _ = snippets(root)
    src = os.path.join(work, "dlpackpp")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "home"))
    # A checkout as a user has it: the committed tree, without build folders.
    ignore = shutil.ignore_patterns("build", ".git", "__pycache__")
    for entry in ("CMakeLists.txt", "LICENSE", "cmake", "include", "single_include", "python"):
        path = os.path.join(root, entry)
        if os.path.isdir(path):
            shutil.copytree(path, os.path.join(src, entry), ignore=ignore)
        else:
            os.makedirs(src, exist_ok=True)
            shutil.copy(path, src)
    script = os.path.join(src, "install.sh")
    with open(script, "w") as f:
        f.write(files.get("readme/install.sh") or fail("README.md marks no readme/install.sh"))
    run_script(src, "install.sh", env_for(work))
    installed_prefix(work)
    # The pip wheel's layout (pyproject.toml: wheel.install-dir = "dlpackpp", the package's
    # Python files beside): the same install rules, so dlpackpp.get_include() works for the
    # torch recipes without scikit-build-core; .ci/packages.sh checks the real wheel.
    package = os.path.join(work, "site", "dlpackpp")
    shutil.copytree(os.path.join(root, "python", "dlpackpp"), package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    run(["cmake", "--install", os.path.join(src, "build", "install"), "--prefix", package],
        src, env_for(work))


def step_readme(root, work):
    installed_prefix(work)
    files, _ = snippets(root)
    folder = write_project(work, files, "readme")
    shutil.copy(os.path.join(root, "examples", "quick_start.cpp"), os.path.join(folder, "main.cpp"))
    run_script(folder, "build.sh", env_for(work))


def pybind11_found():
    if have("pybind11"):
        return "pybind11 from " + os.path.dirname(importlib.util.find_spec("pybind11").origin)
    for base in ("/usr/lib", "/usr/share", "/usr/local/lib", "/usr/local/share"):
        if glob.glob(os.path.join(base, "cmake", "pybind11", "pybind11Config.cmake")):
            return "pybind11 from " + os.path.join(base, "cmake", "pybind11")
    return None


def step_pybind11(root, work):
    installed_prefix(work)
    where = pybind11_found()
    if not where:
        skip("no pybind11 for %s (pip install pybind11, or apt-get install pybind11-dev)" %
             sys.executable)
    need_numpy()
    print(where)
    files, _ = snippets(root)
    run_script(write_project(work, files, "pybind11"), "build.sh", env_for(work))


def step_nanobind(root, work):
    installed_prefix(work)
    if not have("nanobind"):
        skip("nanobind is not importable by %s (pip install nanobind)" % sys.executable)
    need_numpy()
    files, _ = snippets(root)
    run_script(write_project(work, files, "nanobind"), "build.sh", env_for(work))


def step_pip(root, work):
    installed_prefix(work)
    if not have("scikit_build_core"):
        skip("scikit-build-core is not importable by %s (pip install scikit-build-core)" %
             sys.executable)
    need_numpy()
    files, _ = snippets(root)
    env = env_for(work)
    # dlpackpp is on no index: where the docs point pip at its wheel, this build (no isolation,
    # no index) finds the same CMake package where the README installed it.
    env["CMAKE_PREFIX_PATH"] = installed_prefix(work)
    built = []
    for project, module in (("pybind11", "pybind11"), ("nanobind", "nanobind")):
        if not have(module):
            print("%s is not importable: its pyproject.toml is not built" % module)
            continue
        folder = write_project(work, files, project)
        target = os.path.join(work, "pip-" + project)
        run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
             "--no-index", "--target", target, "."], folder, env)
        use_env = dict(env, PYTHONPATH=target)
        run([sys.executable, "use.py"], folder, use_env)
        built.append(project)
    if not built:
        skip("neither pybind11 nor nanobind is importable by " + sys.executable)


def step_torch(root, work):
    installed_prefix(work)
    try:
        import torch
        from torch.utils import cpp_extension
    except ImportError as e:
        skip("PyTorch is not importable by %s (%s)" % (sys.executable, e))
    if int(torch.__version__.split(".")[0]) < 2 or not cpp_extension.include_paths():
        skip("PyTorch %s has no C++ extension headers; the recipes need the PyPI wheel (2.x)" %
             torch.__version__)
    if not cpp_extension.is_ninja_available():
        skip("ninja is not installed (pip install ninja, or apt-get install ninja-build)")
    if not have("setuptools"):
        skip("setuptools is not importable by " + sys.executable)
    files, _ = snippets(root)
    folder = write_project(work, files, "torch")
    env = env_for(work)
    env["PYTHONPATH"] = os.path.join(work, "site")  # the dlpackpp package, as the wheel lays it out
    env["TORCH_EXTENSIONS_DIR"] = os.path.join(work, "torch-jit")
    run([sys.executable, "jit.py"], folder, env)
    target = os.path.join(work, "pip-torch")
    run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
         "--no-index", "--target", target, "."], folder, env)
    env["PYTHONPATH"] = target + os.pathsep + env["PYTHONPATH"]
    run([sys.executable, "use_torch.py"], folder, env)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        fail("usage: check_snippets.py <step> <source root> <work folder>")
    step, root, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    globals()["step_" + step](root, work)
    print("docs %s: ok" % step)
