//===- onnx_import_fuzzer.cpp - Fuzz the ONNX importer --------------------===//
//
// libFuzzer harness over the front door of `kiln compile`: the input's bytes
// are written as a model file and imported by importOnnx, the entry
// importConfigModel calls (libonnx's parser, checker, opset converter and
// shape inference, then the Top importer with its constant folding); a
// module that imports goes through the Top shape-inference pass under
// addIRChecks, as the first pass of kiln compile's pipeline, and the
// verifier. Built with -fsanitize=fuzzer,address,undefined by the compiler's
// sanitizer build (tests/fuzz/sanitizers.sh); with replay_main.cpp it
// replays a corpus anywhere else.
//
// Any model may be refused, but only with an error diagnostic. The harness
// aborts (a crash to libFuzzer) on a refusal without one, an error from an
// import that succeeded, an error at an unknown location, an internal error
// from addIRChecks and invalid IR; the sanitizers, libFuzzer's leak check,
// -timeout and -rss_limit_mb catch the rest.
//
//===----------------------------------------------------------------------===//
#include "fuzz_files.h"
#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Frontend/Onnx/OnnxImporter.h"
#include "kiln/Support/IRChecks.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace mlir;
using namespace kiln;

namespace {

namespace fs = std::filesystem;

/// A private directory for the model file, removed at exit. Relative
/// external-data locations resolve in it, so they name nothing.
struct Scratch {
  std::string dir, model;
  Scratch() {
    dir = kiln::fuzz::makeScratchDir("kiln_onnx_fuzz.XXXXXX");
    model = dir + "/model.onnx";
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

struct Diagnostics {
  std::vector<std::string> errors;
  bool unknownLoc = false;
};

[[noreturn]] void bug(const char *what, const Diagnostics &diags) {
  llvm::errs() << "onnx_import_fuzzer: " << what << "\n";
  for (const std::string &e : diags.errors)
    llvm::errs() << "  error: " << e << "\n";
  llvm::errs().flush();
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Scratch scratch;
  kiln::fuzz::writeInput(scratch.model, data, size);

  // A fresh context per input: types and attributes interned by one model
  // would otherwise pile up over millions of runs.
  MLIRContext ctx(MLIRContext::Threading::DISABLED);
  Diagnostics diags;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() != DiagnosticSeverity::Error)
      return success();
    diags.errors.push_back(d.str());
    diags.unknownLoc |= isa<UnknownLoc>(d.getLocation());
    return success();
  });

  ImportOptions options;
  // Frozen samples go through more of the importer than a refusal.
  options.randomOps = RandomOps::Const;
  OwningOpRef<ModuleOp> module = importOnnx(ctx, scratch.model, options);
  if (diags.unknownLoc)
    bug("an error at an unknown location", diags);
  if (!module) {
    if (diags.errors.empty())
      bug("import failed without an error", diags);
    return 0;
  }
  if (!diags.errors.empty())
    bug("import succeeded but reported errors", diags);

  std::string internal;
  llvm::raw_string_ostream internalOs(internal);
  PassManager pm(&ctx);
  IRCheckOptions checks;
  checks.os = &internalOs;
  addIRChecks(pm, checks);
  pm.addNestedPass<func::FuncOp>(top::createShapeInferPass());
  bool passed = succeeded(pm.run(*module));
  if (!internal.empty()) {
    diags.errors.push_back(internal);
    bug("internal error in the Top pipeline", diags);
  }
  if (diags.unknownLoc)
    bug("an error at an unknown location", diags);
  if (!passed) {
    if (diags.errors.empty())
      bug("shape inference failed without an error", diags);
    return 0;
  }
  if (failed(mlir::verify(*module)))
    bug("invalid Top IR after shape inference", diags);
  return 0;
}
