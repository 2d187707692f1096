// kiln combine A.bmodel B.bmodel ... -o OUT.bmodel [--container kiln|sophgo]
// Puts the nets of several bmodels into one file, as TPU-MLIR's
// `model_tool --combine` does: nets of different names side by side, each
// with its own coefficients; nets of one name (the same model compiled for
// other input shapes) as the stages of one net over one copy of the weights
// (they must have the same weights). The runtime runs a net by name and
// picks its stage from the inputs' shapes.
#include "Commands.h"

#include "Container.h"
#include "NetIo.h"

#include "kiln/Target/Bmodel/BmodelWriter.h"
#include "kiln/host/npz.h"
#include "kiln/rt/kiln_rt.h"

#include "llvm/Support/Error.h"

#include <cstdio>

using namespace kiln;
using namespace kiln::cli;

llvm::cl::SubCommand kiln::cli::combineCommand(
    "combine", "Put several bmodels' nets into one file: other names side by side, the same "
               "name as stages of one net");

namespace {
namespace cl = llvm::cl;
enum class ContainerChoice { Inputs, Kiln, Sophgo };
cl::list<std::string> inputs(cl::Positional, cl::OneOrMore, cl::desc("<A.bmodel> <B.bmodel> ..."),
                             cl::sub(combineCommand), cl::cat(cli::options()));
cl::opt<std::string> output("output", cl::Required, cl::desc("The bmodel to write"),
                            cl::value_desc("OUT.bmodel"), cl::sub(combineCommand),
                            cl::cat(cli::options()));
cl::alias outputShort("o", cl::desc("Alias for --output"), cl::aliasopt(output), cl::NotHidden);
cl::opt<ContainerChoice> containerOpt(
    "container", cl::desc("The file format to write"), cl::init(ContainerChoice::Inputs),
    cl::values(clEnumValN(ContainerChoice::Inputs, "inputs",
                          "the inputs' (when they all have one; the default)"),
               clEnumValN(ContainerChoice::Kiln, "kiln", "kiln's own"),
               clEnumValN(ContainerChoice::Sophgo, "sophgo", "Sophgo's, the one libbmrt loads")),
    cl::sub(combineCommand), cl::cat(cli::options()));
} // namespace

int kiln::cli::combineMain() {
  std::vector<bmodel::StagedNet> nets;
  size_t sophgoInputs = 0, inputBytes = 0;
  for (const std::string &path : inputs) {
    std::vector<uint8_t> file;
    if (auto err = host::readFile(path, file); !err.empty())
      return fail(err);
    inputBytes += file.size();
    std::string error;
    if (!deviceBytesFor(file, error)) // the runtime's verification of the whole file
      return fail(path + ": " + error);
    sophgoInputs += kiln_is_sophgo(file.data(), file.size()) != 0;
    auto read = bmodel::readNets(file);
    if (!read)
      return fail(path + ": " + llvm::toString(read.takeError()));
    for (bmodel::StagedNet &n : *read) {
      bmodel::StagedNet *same = nullptr;
      for (bmodel::StagedNet &have : nets)
        if (have.front().name == n.front().name)
          same = &have;
      if (!same) {
        nets.push_back(std::move(n));
        continue;
      }
      same->insert(same->end(), n.begin(), n.end());
      if (std::string err = bmodel::checkStages(*same); !err.empty())
        return fail(path + ": cannot add its net '" + n.front().name +
                    "' as stages of the one already read: " + err);
    }
  }
  bool sophgo = containerOpt == ContainerChoice::Sophgo;
  if (containerOpt == ContainerChoice::Inputs) {
    if (sophgoInputs != 0 && sophgoInputs != inputs.size())
      return fail("the inputs are in both containers: say which to write with --container");
    sophgo = sophgoInputs != 0;
  }
  std::vector<uint8_t> bytes;
  if (sophgo) {
    auto written = bmodel::serializeSophgo(nets);
    if (!written)
      return fail(llvm::toString(written.takeError()));
    bytes = std::move(*written);
  } else {
    bytes = bmodel::serialize(nets);
  }
  if (auto err = host::writeFile(output, bytes.data(), bytes.size()); !err.empty())
    return fail(err);
  std::printf("combined %zu files (%zu bytes) -> %s (%zu bytes, %s container):\n",
              inputs.size(), inputBytes, output.c_str(), bytes.size(),
              sophgo ? "Sophgo's" : "kiln's");
  for (const bmodel::StagedNet &n : nets) {
    std::printf("  net %s: %zu stage(s), coefficients %llu bytes;", n.front().name.c_str(),
                n.size(), (unsigned long long)n.front().coeffSize);
    for (size_t s = 0; s < n.size(); ++s) {
      std::string shapes;
      for (const codegen::TensorDesc &t : n[s].inputs)
        shapes += (shapes.empty() ? "" : ", ") + t.name + " " + host::shapeString(t.shape);
      std::printf(" %zu: %s%s", s, shapes.c_str(), s + 1 < n.size() ? ";" : "\n");
    }
  }
  return 0;
}
