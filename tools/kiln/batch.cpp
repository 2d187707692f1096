// kiln batch: run many kiln commands in one process (tools/fuzz_compiler.py
// drives it). Each line on stdin is a command line without the leading
// `kiln` (arguments split on whitespace, so paths must not hold spaces);
// after a command finishes, its exit status is printed on a line of its own
//     @@kiln-batch rc=N
// with stdout and stderr flushed first, so a reader that merges both streams
// sees all of a command's output before its status. A command that crashes
// ends the process: the reader restarts it after the last status it saw.
#include "Commands.h"

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

using namespace kiln::cli;

int kiln::cli::batchMain(const Args &args) {
  if (!args.empty())
    return fail("batch takes no arguments; it reads one command per line on stdin");
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    Args argv;
    for (std::string w; words >> w;)
      argv.push_back(w);
    if (argv.empty())
      continue;
    std::string cmd = argv.front();
    argv.erase(argv.begin());
    int rc;
    if (cmd == "compile")
      rc = compileMain(argv);
    else if (cmd == "calibrate")
      rc = calibrateMain(argv);
    else if (cmd == "run")
      rc = runMain(argv);
    else if (cmd == "compare")
      rc = compareMain(argv);
    else
      rc = fail("batch: unknown command '" + cmd + "' (compile, calibrate, run, compare)");
    std::fflush(stderr);
    std::fflush(stdout);
    std::printf("\n@@kiln-batch rc=%d\n", rc);
    std::fflush(stdout);
  }
  return 0;
}
