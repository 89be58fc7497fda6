# SPDX-License-Identifier: Apache-2.0
"""``python -m dlpackpp --includedir | --cmakedir | --pkgconfigdir | --version``: prints where
the wheel put dlpackpp's files, for build scripts (``-Ddlpackpp_DIR=$(python -m dlpackpp
--cmakedir)``). Several flags print one line each, in the order given."""

import argparse
import sys

import dlpackpp


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m dlpackpp",
        description="Print where the dlpackpp wheel installed its C++ headers and build files.")
    queries = {
        "--includedir": ("the include folder (holds dlpackpp/dlpackpp.hpp)", dlpackpp.get_include),
        "--cmakedir": ("the folder of dlpackppConfig.cmake (for -Ddlpackpp_DIR=)",
                       dlpackpp.get_cmake_dir),
        "--pkgconfigdir": ("the folder of dlpackpp.pc (for PKG_CONFIG_PATH)",
                           dlpackpp.get_pkgconfig_dir),
        "--version": ("the dlpackpp version", lambda: dlpackpp.__version__),
    }
    for flag, (text, _) in queries.items():
        parser.add_argument(flag, dest="queries", action="append_const", const=flag, help=text)
    args = parser.parse_args(argv)
    if not args.queries:
        parser.print_help()
        return 2
    try:
        for flag in args.queries:
            print(queries[flag][1]())
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
