// Writes the builder-made seed bmodels for the fuzzer into a directory:
//   make_fuzz_seeds DIR
// Compiled models (the tiny PyTorch nets, the e2e bmodels) join them at test
// time; these cover what the compiler does not emit yet: two nets in one
// file, dynamic weights, groups without LmemAlloc tables.
#include <stdio.h>

#include <string>

#include "residency_models.h"

using namespace kiln::test;

namespace {

bool write(const std::string &path, const std::vector<uint8_t> &data) {
  FILE *f = fopen(path.c_str(), "wb");
  bool ok = f && fwrite(data.data(), 1, data.size(), f) == data.size();
  if (f)
    ok = fclose(f) == 0 && ok;
  if (!ok)
    fprintf(stderr, "make_fuzz_seeds: cannot write %s\n", path.c_str());
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make_fuzz_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  NetSpec dynamic = mulAddNet();
  dynamic.inputs.push_back(tensor("w", kOut));
  dynamic.groups[0].gdma[1].src_addr = kOut;
  dynamic.residency[1].dynamic = true;
  NetSpec untabled = reluNet(4096);
  untabled.groups[0].lmem.reset();
  ModelSpec two_nets = model(mulAddNet());
  two_nets.nets.push_back(reluNet(0));

  bool ok = write(dir + "/mul_add.bmodel", buildBmodel(model(mulAddNet()))) &&
            write(dir + "/two_groups_overlap.bmodel", buildBmodel(model(twoGroupNet(0)))) &&
            write(dir + "/two_groups_apart.bmodel", buildBmodel(model(twoGroupNet(1024)))) &&
            write(dir + "/dynamic_weight.bmodel", buildBmodel(model(dynamic))) &&
            write(dir + "/untabled.bmodel", buildBmodel(model(untabled))) &&
            write(dir + "/two_nets.bmodel", buildBmodel(two_nets));
  return ok ? 0 : 1;
}
