// Files the front-door fuzzers hand to the code under test: a private
// scratch directory and the input written to a fresh file each run.
#ifndef KILN_TESTS_FUZZ_FUZZ_FILES_H
#define KILN_TESTS_FUZZ_FUZZ_FILES_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <stdlib.h>

namespace kiln::fuzz {

/// A new directory under the temp dir named after `pattern` (ending in
/// XXXXXX); aborts if it cannot be made.
inline std::string makeScratchDir(const char *pattern) {
  std::string path = (std::filesystem::temp_directory_path() / pattern).string();
  if (!mkdtemp(path.data())) {
    std::perror("fuzzer: mkdtemp");
    std::abort();
  }
  return path;
}

/// Writes the input to `path` as a new file (truncating one on ext4 flushes
/// it on close, auto_da_alloc: milliseconds a run); aborts on failure.
inline void writeInput(const std::string &path, const uint8_t *data, size_t size) {
  std::remove(path.c_str());
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    std::abort();
  bool ok = std::fwrite(data, 1, size, f) == size;
  ok &= std::fclose(f) == 0;
  if (!ok)
    std::abort();
}

} // namespace kiln::fuzz

#endif
