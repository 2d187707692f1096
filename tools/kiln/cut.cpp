// kiln cut MODEL.onnx --from T1[,T2..] --to T3[,T4..] -o SUB.onnx
//   [--values RUN.npz]
//
// Writes the subgraph computing the --to tensors from the --from tensors as a
// standalone ONNX model (kiln/Frontend/Onnx/OnnxCut.h). With --values (a dump
// of named tensors: `kiln run --all-tensors` output, whose "tensor:" prefix
// is accepted, or any npz keyed by tensor name) also writes SUB.inputs.npz
// with the --from values and SUB.outputs.npz with the --to values, so a
// failing layer can be compiled, run and compared on its own.
#include "Commands.h"

#include "kiln/Frontend/Onnx/OnnxCut.h"
#include "kiln/host/npz.h"

#include <cstdio>

using namespace kiln;

namespace {

std::string describe(const onnx_frontend::ValueInfo &v) {
  std::string s = v.name + " " + onnx_frontend::elemTypeName(v.elemType) + "[";
  for (size_t i = 0; i < v.shape.size(); ++i)
    s += (i ? "," : "") + (v.shape[i] < 0 ? std::string("?")
                                          : std::to_string(v.shape[i]));
  return s + "]";
}

/// The array holding tensor `name` in a dump: `name` or `tensor:name`.
const host::Array *findValue(const std::vector<host::Array> &values,
                             const std::string &name) {
  const host::Array *prefixed = nullptr;
  for (const host::Array &a : values) {
    if (a.name == name)
      return &a;
    if (a.name == "tensor:" + name)
      prefixed = &a;
  }
  return prefixed;
}

/// SUB.onnx -> SUB.<suffix>.npz
std::string sidecar(const std::string &out, const char *suffix) {
  std::string stem = out;
  const size_t slash = stem.find_last_of('/');
  const size_t dot = stem.find_last_of('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
    stem.resize(dot);
  return stem + "." + suffix + ".npz";
}

/// Collects the dump's values of `names` (renamed to the plain tensor name);
/// `missing` lists the names the dump lacks.
std::vector<host::Array> pick(const std::vector<host::Array> &values,
                              const std::vector<onnx_frontend::ValueInfo> &want,
                              std::vector<std::string> &missing,
                              std::string &error) {
  std::vector<host::Array> out;
  for (const auto &v : want) {
    const host::Array *a = findValue(values, v.name);
    if (!a) {
      missing.push_back(v.name);
      continue;
    }
    bool shapeOk = a->shape.size() == v.shape.size();
    for (size_t i = 0; shapeOk && i < v.shape.size(); ++i)
      shapeOk = v.shape[i] < 0 || v.shape[i] == a->shape[i];
    if (!shapeOk) {
      std::string have = "[";
      for (size_t i = 0; i < a->shape.size(); ++i)
        have += (i ? "," : "") + std::to_string(a->shape[i]);
      error = "the value of '" + v.name + "' has shape " + have +
              "], the model says " + describe(v);
      return {};
    }
    out.push_back(*a);
    out.back().name = v.name;
  }
  return out;
}

} // namespace

llvm::cl::SubCommand kiln::cli::cutCommand(
    "cut", "Write the subgraph between tensors of an ONNX model as a model of its own");

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> model(cl::Positional, cl::Required, cl::desc("<MODEL.onnx>"),
                           cl::sub(cli::cutCommand), cl::cat(cli::options()));
cl::list<std::string> from("from", cl::OneOrMore, cl::CommaSeparated,
                           cl::desc("The tensors the cut starts from (its inputs)"),
                           cl::value_desc("T1[,T2..]"), cl::sub(cli::cutCommand),
                           cl::cat(cli::options()));
cl::list<std::string> to("to", cl::OneOrMore, cl::CommaSeparated,
                         cl::desc("The tensors the cut computes (its outputs)"),
                         cl::value_desc("T3[,T4..]"), cl::sub(cli::cutCommand),
                         cl::cat(cli::options()));
cl::opt<std::string> output("output", cl::Required, cl::desc("The ONNX model to write"),
                            cl::value_desc("SUB.onnx"), cl::sub(cli::cutCommand),
                            cl::cat(cli::options()));
// Aliases are hidden by default; -o is the usual spelling.
cl::alias outputShort("o", cl::desc("Alias for --output"), cl::aliasopt(output), cl::NotHidden);
cl::opt<std::string> valuesPath("values",
                                cl::desc("A dump of named tensors (kiln run --all-tensors): "
                                         "also write SUB.inputs.npz and SUB.outputs.npz"),
                                cl::value_desc("RUN.npz"), cl::sub(cli::cutCommand),
                                cl::cat(cli::options()));
} // namespace

int kiln::cli::cutMain() {
  // Read the values first: a bad dump should not leave a half-done cut.
  std::vector<host::Array> values;
  if (!valuesPath.empty())
    if (auto err = host::readNpz(valuesPath, values); !err.empty())
      return fail(err);

  onnx_frontend::CutResult result;
  if (auto err = onnx_frontend::cutModel(model, {from.begin(), from.end()},
                                         {to.begin(), to.end()}, output, result);
      !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 2;
  }
  std::printf("cut %s -> %s: %zu nodes, %zu initializers\n", model.c_str(),
              output.c_str(), result.nodes, result.initializers);
  for (const auto &v : result.inputs)
    std::printf("  input  %s\n", describe(v).c_str());
  for (const auto &v : result.outputs)
    std::printf("  output %s\n", describe(v).c_str());
  for (const auto &name : result.unusedInputs)
    std::fprintf(stderr, "kiln: warning: nothing in the cut reads --from "
                         "tensor '%s'\n",
                 name.c_str());
  if (valuesPath.empty())
    return 0;

  std::vector<std::string> missingIn, missingOut;
  std::string error;
  std::vector<host::Array> ins = pick(values, result.inputs, missingIn, error);
  if (!error.empty())
    return fail(valuesPath + ": " + error);
  std::vector<host::Array> outs =
      pick(values, result.outputs, missingOut, error);
  if (!error.empty())
    return fail(valuesPath + ": " + error);
  if (!missingIn.empty()) {
    std::string names;
    for (const auto &n : missingIn)
      names += (names.empty() ? "'" : ", '") + n + "'";
    return fail(valuesPath + " has no value for --from tensor " + names +
                " (looked for NAME and tensor:NAME)");
  }
  const std::string inPath = sidecar(output, "inputs");
  if (auto err = host::writeNpz(inPath, ins); !err.empty())
    return fail(err);
  std::printf("  wrote %s (%zu arrays)\n", inPath.c_str(), ins.size());
  for (const auto &n : missingOut)
    std::fprintf(stderr, "kiln: warning: %s has no value for --to tensor "
                         "'%s'\n",
                 valuesPath.c_str(), n.c_str());
  if (!outs.empty()) {
    const std::string outPath = sidecar(output, "outputs");
    if (auto err = host::writeNpz(outPath, outs); !err.empty())
      return fail(err);
    std::printf("  wrote %s (%zu arrays)\n", outPath.c_str(), outs.size());
  }
  return 0;
}
