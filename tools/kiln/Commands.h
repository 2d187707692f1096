// The subcommands of the kiln CLI (DESIGN.md section 8).
#ifndef KILN_TOOLS_KILN_COMMANDS_H
#define KILN_TOOLS_KILN_COMMANDS_H

#include <string>
#include <vector>

namespace kiln::cli {
using Args = std::vector<std::string>;
int compileMain(const Args &args);
int runMain(const Args &args);
int inspectMain(const Args &args);
int compareMain(const Args &args);
int calibrateMain(const Args &args);
int cutMain(const Args &args);
/// Commands read from stdin, one per line, run in this process (batch.cpp).
int batchMain(const Args &args);
/// Prints "kiln: error: MESSAGE" and returns 2 (usage or input error).
int fail(const std::string &message);
} // namespace kiln::cli

#endif
