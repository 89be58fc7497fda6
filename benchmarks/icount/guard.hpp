// SPDX-License-Identifier: Apache-2.0
// The guard on the hot paths: each guarded row of benchmarks/README.md names a case, a rank
// and the largest ratio of dlpackpp's instructions to the C counterpart's that it may reach.
// The README is the one place the limits live: its guard table sits between the markers
//   <!-- icount-guard:begin --> ... <!-- icount-guard:end -->
// in the form `| case | ndim | C instr. | dlpackpp instr. | ratio | limit |`, and check()
// compares this run's figures with the last column. Rows whose case starts with "Python" are
// the Python layer's, checked by python_compare/icount_guard.py (bench_python_icount_guard).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace icount_guard {

/// One measured row of the table.
struct Figure {
  std::string label;
  int ndim;
  double c;
  double cpp;
};

/// One guarded row: the case's label as the table prints it, its rank and its limit.
struct Limit {
  std::string label;
  int ndim;
  double max_ratio;
};

/// The cells of a Markdown table row, trimmed; empty for any other line.
inline std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  if (line.size() < 2 || line.front() != '|') return cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] != '|') {
      cell += line[i];
      continue;
    }
    const std::size_t first = cell.find_first_not_of(' ');
    const std::size_t last = cell.find_last_not_of(' ');
    cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    cell.clear();
  }
  return cells;
}

/// The guarded rows of `readme`; exits with a message when the file or its table is missing.
inline std::vector<Limit> read_limits(const char* readme) {
  std::ifstream in(readme);
  if (!in) {
    std::fprintf(stderr, "icount guard: cannot read %s\n", readme);
    std::exit(2);
  }
  std::vector<Limit> limits;
  bool inside = false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("<!-- icount-guard:begin -->") != std::string::npos) inside = true;
    if (line.find("<!-- icount-guard:end -->") != std::string::npos) inside = false;
    const std::vector<std::string> cells = cells_of(line);
    if (!inside || cells.size() != 6) continue;
    char* end = nullptr;
    const long ndim = std::strtol(cells[1].c_str(), &end, 10);
    if (end == cells[1].c_str() || *end != '\0') continue;  // the header and the rule
    if (cells[0].rfind("Python", 0) == 0) continue;         // icount_guard.py's rows
    limits.push_back({cells[0], static_cast<int>(ndim), std::strtod(cells[5].c_str(), nullptr)});
  }
  if (limits.empty()) {
    std::fprintf(stderr, "icount guard: no guarded rows between the markers in %s\n", readme);
    std::exit(2);
  }
  return limits;
}

/// Prints each guarded row with this run's figures and its limit; the number of rows over
/// their limit or missing from this run (a renamed case must not drop out of the guard).
inline int check(const std::vector<Figure>& figures, const std::vector<Limit>& limits) {
  int failed = 0;
  std::printf("\nGuarded paths (limits from benchmarks/README.md):\n");
  std::printf("| case | ndim | C instr. | dlpackpp instr. | ratio | limit |\n");
  std::printf("| --- | --- | --- | --- | --- | --- |\n");
  for (const Limit& limit : limits) {
    const Figure* found = nullptr;
    for (const Figure& f : figures) {
      if (f.label == limit.label && f.ndim == limit.ndim) found = &f;
    }
    if (found == nullptr) {
      std::printf("| %s | %d | - | - | - | %.2f |  <- FAILED: not measured\n", limit.label.c_str(),
                  limit.ndim, limit.max_ratio);
      ++failed;
      continue;
    }
    const double ratio = found->cpp / found->c;
    const bool over = ratio > limit.max_ratio;
    std::printf("| %s | %d | %.0f | %.0f | %.2f | %.2f |%s\n", limit.label.c_str(), limit.ndim,
                found->c, found->cpp, ratio, limit.max_ratio,
                over ? "  <- FAILED: over the limit" : "");
    if (over) ++failed;
  }
  if (failed != 0) {
    std::printf("icount guard: %d guarded path(s) grew past their limit\n", failed);
  } else {
    std::printf("icount guard: every guarded path within its limit\n");
  }
  return failed;
}

}  // namespace icount_guard
