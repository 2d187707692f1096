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

std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos)
      comma = s.size();
    if (comma > pos)
      out.push_back(s.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

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

int kiln::cli::cutMain(const Args &args) {
  std::string model, output, valuesPath;
  std::vector<std::string> from, to;
  for (size_t i = 0; i < args.size(); ++i) {
    auto next = [&]() -> const std::string * {
      return i + 1 < args.size() ? &args[++i] : nullptr;
    };
    const std::string &a = args[i];
    if (a == "--from" || a == "--to" || a == "-o" || a == "--output" ||
        a == "--values") {
      const std::string *v = next();
      if (!v)
        return fail("cut: " + a + " expects a value");
      if (a == "--from")
        for (auto &n : splitList(*v))
          from.push_back(n);
      else if (a == "--to")
        for (auto &n : splitList(*v))
          to.push_back(n);
      else if (a == "--values")
        valuesPath = *v;
      else
        output = *v;
    } else if (!a.empty() && a[0] == '-') {
      return fail("cut: unknown option '" + a + "'");
    } else if (model.empty()) {
      model = a;
    } else {
      return fail("cut expects one model, got '" + model + "' and '" + a + "'");
    }
  }
  if (model.empty() || from.empty() || to.empty() || output.empty())
    return fail("cut expects MODEL.onnx --from T1[,T2..] --to T3[,T4..] -o "
                "SUB.onnx [--values RUN.npz]");

  // Read the values first: a bad dump should not leave a half-done cut.
  std::vector<host::Array> values;
  if (!valuesPath.empty())
    if (auto err = host::readNpz(valuesPath, values); !err.empty())
      return fail(err);

  onnx_frontend::CutResult result;
  if (auto err = onnx_frontend::cutModel(model, from, to, output, result);
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
