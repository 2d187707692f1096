// kiln: compile ONNX models for BM1684X, run them on the cmodel, inspect and
// compare the results.
#include "Commands.h"

#include <cstdio>
#include <cstring>

using namespace kiln::cli;

static const char *kUsage =
    "usage: kiln <command> [options]\n"
    "  compile CONFIG.yaml [-o OUT.bmodel] [--emit-top] [--emit-tpu]\n"
    "  run MODEL.bmodel --input IN.npz --output OUT.npz [--stats STATS.json]\n"
    "  inspect MODEL.bmodel [--json]\n"
    "  compare A.npz B.npz [--tolerance COS,EUCLID]\n"
    "  calibrate CONFIG.yaml [-o TABLE] [--samples N]\n"
    "  cut MODEL.onnx --from T1[,T2..] --to T3[,T4..] -o SUB.onnx "
    "[--values RUN.npz]\n"
    "  batch   (commands on stdin, one per line; tools/fuzz_compiler.py)\n";

int kiln::cli::fail(const std::string &message) {
  std::fprintf(stderr, "kiln: error: %s\n", message.c_str());
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  Args args(argv + 2, argv + argc);
  if (cmd == "compile")
    return compileMain(args);
  if (cmd == "run")
    return runMain(args);
  if (cmd == "inspect")
    return inspectMain(args);
  if (cmd == "compare")
    return compareMain(args);
  if (cmd == "calibrate")
    return calibrateMain(args);
  if (cmd == "cut")
    return cutMain(args);
  if (cmd == "batch")
    return batchMain(args);
  std::fputs(kUsage, stderr);
  return fail("unknown command '" + cmd + "'");
}
