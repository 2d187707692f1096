// kiln batch: run many kiln commands in one process (tools/fuzz_compiler.py
// drives it). Each line on stdin is a command line without the leading
// `kiln` (arguments split on whitespace, so paths must not hold spaces),
// parsed afresh from the options' defaults; after a command finishes, its
// exit status is printed on a line of its own
//     @@kiln-batch rc=N
// with stdout and stderr flushed first, so a reader that merges both streams
// sees all of a command's output before its status. A command that crashes
// ends the process: the reader restarts it after the last status it saw.
// So do --help and --version (llvm::cl prints and exits).
#include "Commands.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace kiln::cli;

llvm::cl::SubCommand kiln::cli::batchCommand(
    "batch", "Run commands read from stdin, one per line, in this process; each ends with a "
             "line `@@kiln-batch rc=N`");

int kiln::cli::batchMain() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::vector<std::string> args;
    for (std::string w; words >> w;)
      args.push_back(w);
    if (args.empty())
      continue;
    const int rc = args.front() == batchCommand.getName()
                       ? fail("batch: a batch line cannot start another batch")
                       : runCommandLine(args);
    llvm::outs().flush(); // --emit-top, inspect --json
    std::fflush(stderr);
    std::fflush(stdout);
    std::printf("\n@@kiln-batch rc=%d\n", rc);
    std::fflush(stdout);
  }
  return 0;
}
