// Replays files (or every file in directories) through a fuzz harness, for
// builds without libFuzzer and for reproducing a crash:
//   bmodel_fuzz_replay PATH...   (onnx_import_fuzz_replay, config_fuzz_replay)
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

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

std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i)
    collect(argv[i], &files);
  if (files.empty()) {
    fprintf(stderr, "usage: %s PATH...  (no files found)\n", argv[0]);
    return 2;
  }
  for (const std::string &path : files) {
    std::vector<uint8_t> data = readFile(path);
    LLVMFuzzerTestOneInput(data.data(), data.size());
  }
  printf("replayed %zu inputs\n", files.size());
  return 0;
}
