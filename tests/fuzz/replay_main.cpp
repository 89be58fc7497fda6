// SPDX-License-Identifier: Apache-2.0
// Runs a fuzz harness over files instead of under libFuzzer, so the seed corpus and every
// regression reproducer are ordinary tests in every build (any compiler, any sanitizer).
// Arguments are files or folders (walked recursively; missing ones are skipped). A failed
// property aborts, which fails the test; running no input at all fails too.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", file.string().c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  std::printf("replaying %s (%zu bytes)\n", file.string().c_str(), bytes.size());
  std::fflush(stdout);  // name the input before a crash can hide it
  // A copy of exactly the input's size, so reading past its end is a sanitizer error.
  std::vector<std::uint8_t> exact(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(exact.empty() ? nullptr : exact.data(), exact.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path root(argv[i]);
    std::error_code ec;
    if (fs::is_regular_file(root, ec)) {
      if (!replay(root)) return 1;
      ++count;
      continue;
    }
    if (!fs::is_directory(root, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.is_regular_file() && entry.path().filename() != "README.md") {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      if (!replay(file)) return 1;
      ++count;
    }
  }
  std::printf("%zu inputs replayed, all properties held\n", count);
  return count > 0 ? 0 : 1;
}
