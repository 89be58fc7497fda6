# SPDX-License-Identifier: Apache-2.0
"""Checks that the kit's HTML report renders: opens it in headless Chromium, takes a
screenshot and fails unless the picture is not blank and shows the matrix's outcome colours,
and unless the page's DOM names every target of the JSON report in its banner, its own table
and the matrix, and has the environment block, matrix cells that open and a rerun command
for every failed check.

    check_html.py REPORT.html REPORT.json SCREENSHOT.png

Prints "DLPACKPP_TEST_SKIPPED: ..." when no chromium is installed."""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

# The outcome colours the page paints (_report.py): pass, copy, refuse, wrong, crash.
COLOURS = {"pass": (0x2E, 0x7D, 0x32), "copy": (0x7C, 0xB3, 0x42), "refuse": (0xF9, 0xA8, 0x25),
           "wrong": (0xC6, 0x28, 0x28), "crash": (0x6A, 0x1B, 0x9A)}


def chromium():
    """The path of a Chromium-like browser, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def run_chromium(browser, *args):
    """Runs the browser headless on a fresh profile."""
    with tempfile.TemporaryDirectory() as profile:
        command = [browser, "--headless=new", "--no-sandbox", "--disable-gpu",
                   "--window-size=1200,800", "--user-data-dir=" + profile] + list(args)
        return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=120)


def pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s is not a PNG" % path)
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                sys.exit("unexpected PNG format: depth %d, colour type %d" % (depth, colour))
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, up_left = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc
                                      else up_left)) & 0xFF
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        previous = line
    return width, height, rows


def main(html_path, json_path, png_path):
    """Runs the check or mode named on the command line."""
    browser = chromium()
    if browser is None:
        print("DLPACKPP_TEST_SKIPPED: no chromium (apt-get install chromium)")
        return
    with open(json_path) as f:
        report = json.load(f)
    names = [t["name"] for t in report["targets"]]
    url = "file://" + os.path.abspath(html_path)
    done = run_chromium(browser, "--screenshot=" + os.path.abspath(png_path), url)
    if not os.path.isfile(png_path):
        sys.exit("chromium took no screenshot (exit %d): %s" % (done.returncode,
                                                                done.stderr[-2000:]))
    width, height, rows = pixels(png_path)
    seen = {}
    painted = 0
    for row in rows:
        for rgb in row:
            if min(rgb) < 235:
                painted += 1
            for outcome, colour in COLOURS.items():
                if rgb == colour:
                    seen[outcome] = seen.get(outcome, 0) + 1
    if painted < width * height // 100:
        sys.exit("the screenshot is blank: %d of %d pixels painted" % (painted, width * height))
    expected = {cell["outcome"] for cell in report["matrix"]}
    if report["matrix"] and not seen:
        sys.exit("the screenshot shows none of the matrix's outcome colours %s" % sorted(expected))
    dom = run_chromium(browser, "--dump-dom", url).stdout
    missing = [n for n in names if "<h2 class=\"target\">%s " % n not in dom]
    if report["matrix"]:
        missing += ["matrix column " + n for n in names if "<th>%s</th>" % n not in dom]
    if "id=\"matrix\"" not in dom and report["matrix"]:
        missing.append("the matrix table")
    if report["matrix"] and "<details>" not in dom:
        missing.append("matrix cells that open to their cases")
    for block in ("banners", "environment"):
        if "id=\"%s\"" % block not in dom:
            missing.append("the %s block" % block)
    missing += ["the banner of " + n for n in names if "<b>%s <small>" % n not in dom]
    missing += ["the rerun command of %s %s" % (t["name"], c["id"]) for t in report["targets"]
                for c in t["checks"] if "rerun" in c and "--only %s</code>" % c["id"] not in dom]
    if missing:
        sys.exit("the rendered page lacks: " + ", ".join(missing))
    print("%s rendered: %dx%d, %d%% painted, matrix colours %s, every target named (%s)" % (
        html_path, width, height, 100 * painted // (width * height),
        ", ".join("%s %d px" % kv for kv in sorted(seen.items())), ", ".join(names)))


if __name__ == "__main__":
    main(*sys.argv[1:4])
