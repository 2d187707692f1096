// The subcommands of the kiln CLI (DESIGN.md section 8). Each is an
// llvm::cl::SubCommand defined beside its code, with its options
// (llvm::cl::sub) there too; main.cpp parses a command line and runs the
// subcommand it names.
#ifndef KILN_TOOLS_KILN_COMMANDS_H
#define KILN_TOOLS_KILN_COMMANDS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace kiln::cli {
extern llvm::cl::SubCommand compileCommand, runCommand, inspectCommand, compareCommand,
    calibrateCommand, cutCommand, batchCommand, combineCommand;
int compileMain();
int runMain();
int inspectMain();
int compareMain();
int calibrateMain();
int cutMain();
int combineMain();
/// Commands read from stdin, one per line, run in this process (batch.cpp).
int batchMain();

/// The category of every kiln option: --help lists these (and the generic
/// --help and --version), not the options LLVM's libraries register.
llvm::cl::OptionCategory &options();

/// Parses `args` (a command line without the leading `kiln`) from the
/// options' defaults and runs the subcommand it names: its exit code, or 2
/// after the parser's message for a malformed command line.
int runCommandLine(llvm::ArrayRef<std::string> args);

/// Prints "kiln: error: MESSAGE" and returns 2 (usage or input error).
int fail(const std::string &message);
} // namespace kiln::cli

#endif
