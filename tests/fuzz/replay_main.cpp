// Replays files (or every file in directories) through the fuzz harness, for
// builds without libFuzzer and for reproducing a crash:
//   bmodel_fuzz_replay PATH...
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "run_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

void collect(const std::string &path, std::vector<std::string> *files) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return;
  if (S_ISREG(st.st_mode)) {
    files->push_back(path);
  } else if (DIR *dir = opendir(path.c_str())) {
    while (dirent *e = readdir(dir))
      if (e->d_name[0] != '.')
        collect(path + "/" + e->d_name, files);
    closedir(dir);
  }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i)
    collect(argv[i], &files);
  if (files.empty()) {
    fprintf(stderr, "usage: bmodel_fuzz_replay PATH...  (no files found)\n");
    return 2;
  }
  for (const std::string &path : files) {
    std::vector<uint8_t> data = kiln::fuzz::readFile(path);
    LLVMFuzzerTestOneInput(data.data(), data.size());
  }
  printf("replayed %zu inputs\n", files.size());
  return 0;
}
