// SPDX-License-Identifier: Apache-2.0
// The guard on the hot paths: each guarded row of benchmarks/README.md names a case, a rank
// and the instructions committed for it (the C counterpart's and dlpackpp's), and the table
// says the tolerance: how far past the committed ratio a run may go. The README is the one
// place both live: its guard table sits between the markers
//   <!-- icount-guard:begin --> ... <!-- icount-guard:end -->
// in the form `| case | ndim | C instr. | dlpackpp instr. | ratio |`, under a line
// `Tolerance: N%`, and check() fails a row whose ratio this run passes the committed one by
// more than N%. Rows whose case starts with "Python" are the Python layer's, checked by
// python_compare/icount_guard.py (bench_python_icount_guard).
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

/// One guarded row: the case's label as the table prints it, its rank, its committed ratio
/// and the largest this run may reach (the committed one plus the tolerance).
struct Limit {
  std::string label;
  int ndim;
  double committed;
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

/// The number in `text` after `key` ("Tolerance: 3%" gives 3), or -1 where there is none.
inline double number_after(const std::string& text, const char* key) {
  const std::size_t at = text.find(key);
  if (at == std::string::npos) return -1;
  char* end = nullptr;
  const char* from = text.c_str() + at + std::char_traits<char>::length(key);
  const double value = std::strtod(from, &end);
  return end == from ? -1 : value;
}

/// The guarded rows of `readme`; exits with a message when the file, its table or its
/// tolerance is missing.
inline std::vector<Limit> read_limits(const char* readme) {
  std::ifstream in(readme);
  if (!in) {
    std::fprintf(stderr, "icount guard: cannot read %s\n", readme);
    std::exit(2);
  }
  std::vector<Limit> limits;
  double tolerance = -1;
  bool inside = false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("<!-- icount-guard:begin -->") != std::string::npos) inside = true;
    if (line.find("<!-- icount-guard:end -->") != std::string::npos) inside = false;
    if (inside && tolerance < 0) tolerance = number_after(line, "Tolerance:");
    const std::vector<std::string> cells = cells_of(line);
    if (!inside || cells.size() != 5) continue;
    char* end = nullptr;
    const long ndim = std::strtol(cells[1].c_str(), &end, 10);
    if (end == cells[1].c_str() || *end != '\0') continue;  // the header and the rule
    if (cells[0].rfind("Python", 0) == 0) continue;         // icount_guard.py's rows
    const double ratio =
        std::strtod(cells[3].c_str(), nullptr) / std::strtod(cells[2].c_str(), nullptr);
    limits.push_back({cells[0], static_cast<int>(ndim), ratio, ratio});
  }
  if (limits.empty() || tolerance < 0) {
    std::fprintf(
        stderr,
        "icount guard: no guarded rows or no \"Tolerance: N%%\" between the markers in %s\n",
        readme);
    std::exit(2);
  }
  for (Limit& limit : limits) limit.max_ratio = limit.committed * (1 + tolerance / 100);
  return limits;
}

/// Prints each guarded row with this run's figures, as the README's table has them; the
/// number of rows over their limit or missing from this run (a renamed case must not drop out
/// of the guard).
inline int check(const std::vector<Figure>& figures, const std::vector<Limit>& limits) {
  int failed = 0;
  std::printf("\nGuarded paths (committed figures and tolerance from benchmarks/README.md):\n");
  std::printf("| case | ndim | C instr. | dlpackpp instr. | ratio |\n");
  std::printf("| --- | --- | --- | --- | --- |\n");
  for (const Limit& limit : limits) {
    const Figure* found = nullptr;
    for (const Figure& f : figures) {
      if (f.label == limit.label && f.ndim == limit.ndim) found = &f;
    }
    if (found == nullptr) {
      std::printf("| %s | %d | - | - | - |  <- FAILED: not measured\n", limit.label.c_str(),
                  limit.ndim);
      ++failed;
      continue;
    }
    const double ratio = found->cpp / found->c;
    const bool over = ratio > limit.max_ratio;
    std::printf("| %s | %d | %.0f | %.0f | %.2f |", limit.label.c_str(), limit.ndim, found->c,
                found->cpp, ratio);
    if (over) {
      std::printf("  <- FAILED: over %.3f (committed %.3f + the tolerance)", limit.max_ratio,
                  limit.committed);
    }
    std::printf("\n");
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
