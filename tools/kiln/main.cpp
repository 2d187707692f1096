// kiln: compile ONNX models for BM1684X, run them on the cmodel, inspect and
// compare the results.
#include "Commands.h"

#include "kiln/Target/Bmodel/BmodelWriter.h"
#include "kiln/abi/version.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace kiln::cli;
namespace cl = llvm::cl;

namespace {
cl::SubCommand versionCommand("version", "Print the compiler, bmodel format and firmware ABI "
                                         "versions (as --version does)");

void printVersion(llvm::raw_ostream &os) {
  os << kiln::bmodel::kCompilerVersion << " (LLVM/MLIR " LLVM_VERSION_STRING ")\n"
     << "  bmodel format " << KILN_BMODEL_FORMAT_MAJOR << "." << KILN_BMODEL_FORMAT_MINOR
     << "\n  firmware ABI " << KILN_ABI_VERSION_MAJOR << "." << KILN_ABI_VERSION_MINOR << "\n";
}

const struct {
  cl::SubCommand *command;
  int (*run)();
} kCommands[] = {
    {&compileCommand, compileMain},     {&runCommand, runMain},
    {&inspectCommand, inspectMain},     {&compareCommand, compareMain},
    {&calibrateCommand, calibrateMain}, {&cutCommand, cutMain},
    {&batchCommand, batchMain},         {&combineCommand, combineMain},
    {&versionCommand, [] {
       printVersion(llvm::outs());
       return 0;
     }},
};
} // namespace

cl::OptionCategory &kiln::cli::options() {
  static cl::OptionCategory category("kiln options");
  return category;
}

int kiln::cli::fail(const std::string &message) {
  std::fprintf(stderr, "kiln: error: %s\n", message.c_str());
  return 2;
}

int kiln::cli::runCommandLine(llvm::ArrayRef<std::string> args) {
  // llvm::cl keeps what the last command line set (kiln batch parses many).
  cl::ResetAllOptionOccurrences();
  std::vector<const char *> argv{"kiln"};
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (!cl::ParseCommandLineOptions(int(argv.size()), argv.data(),
                                   "compile ONNX models for BM1684X, run them on the cmodel, "
                                   "inspect and compare the results\n",
                                   &os, nullptr, /*LongOptionsUseDoubleDash=*/true)) {
    std::fputs(errors.c_str(), stderr);
    return 2;
  }
  for (const auto &c : kCommands)
    if (*c.command)
      return c.run();
  std::string names;
  for (const auto &c : kCommands)
    names += (names.empty() ? "" : ", ") + c.command->getName().str();
  return fail("expected a command (" + names + "); kiln --help describes them");
}

int main(int argc, char **argv) {
  cl::SetVersionPrinter(printVersion);
  cl::HideUnrelatedOptions(options());
  for (cl::SubCommand *sub : cl::getRegisteredSubcommands())
    cl::HideUnrelatedOptions(options(), *sub);
  return runCommandLine(std::vector<std::string>(argv + 1, argv + argc));
}
