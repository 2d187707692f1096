//===- IRChecks.cpp - Invalid IR after a pass as an internal error --------===//
//
// A PassInstrumentation holds back the error diagnostics emitted while the
// outermost pass runs (nested passes and MLIR's verifier included). When it
// fails, the op of the innermost failed pass is verified again: if the IR is
// invalid and the verifier's errors are among those held, the verifier
// failed after that pass (the pass itself did not fail, or it would not have
// run) and they become the internal-error report; everything else was the
// passes' own and is emitted unchanged. PassManager::run hands us no hook
// between a pass and its verification, hence the comparison.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/IRChecks.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>
#include <vector>

using namespace mlir;

namespace {

std::string locationString(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << loc;
  return s;
}

/// The invalid op's name, from the "see current operation: " note MLIR
/// attaches to op errors (generic form: `%0 = "tpu.active"(...)`); "" when
/// printing ops on diagnostics is off.
std::string opNameOf(const Diagnostic &d) {
  for (const Diagnostic &note : d.getNotes()) {
    std::string s = note.str();
    StringRef text(s);
    if (!text.consume_front("see current operation: "))
      continue;
    size_t open = text.find('"');
    if (open == StringRef::npos)
      continue;
    size_t close = text.find('"', open + 1);
    if (close != StringRef::npos)
      return text.slice(open + 1, close).str();
  }
  return "";
}

std::string passName(Pass *pass) {
  return pass->getArgument().empty() ? pass->getName().str() : pass->getArgument().str();
}

/// kiln-opt's -pass-pipeline running `pass` alone on `op`, nested from the
/// top-level op down.
std::string pipelineOf(Pass *pass, Operation *op) {
  std::string pipeline;
  {
    llvm::raw_string_ostream os(pipeline);
    pass->printAsTextualPipeline(os);
  }
  for (Operation *p = op; p; p = p->getParentOp())
    pipeline = (p->getName().getStringRef() + "(" + pipeline + ")").str();
  return pipeline;
}

class IRCheckInstrumentation : public PassInstrumentation {
public:
  IRCheckInstrumentation(MLIRContext *ctx, kiln::IRCheckOptions options)
      : ctx(ctx), options(std::move(options)) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    bool outermost;
    {
      std::lock_guard<std::mutex> lock(mutex);
      outermost = depth++ == 0;
    }
    if (outermost)
      handler = ctx->getDiagEngine().registerHandler(
          [this](Diagnostic &d) { return hold(d); });
    // Pass adaptors (no argument) only run the passes they nest.
    if (!options.dumpPath.empty() && !pass->getArgument().empty())
      snapshot(op);
  }

  void runAfterPass(Pass *, Operation *) override {
    if (leave())
      finish(/*passFailed=*/false);
  }

  void runAfterPassFailed(Pass *pass, Operation *op) override {
    {
      // Adaptors fail after the pass they nest: the first one is the pass.
      std::lock_guard<std::mutex> lock(mutex);
      if (!failedPass) {
        failedPass = pass;
        failedOp = op;
        failedIR = std::move(lastIR);
      }
    }
    if (leave())
      finish(/*passFailed=*/true);
  }

private:
  MLIRContext *ctx;
  kiln::IRCheckOptions options;
  // Guards the state below; never held while calling the diagnostic engine,
  // which calls hold() under its own lock.
  std::mutex mutex;
  int depth = 0;
  DiagnosticEngine::HandlerID handler = 0;
  bool reverifying = false;
  std::vector<Diagnostic> held, verifierErrors;
  Pass *failedPass = nullptr;
  Operation *failedOp = nullptr;
  std::string lastIR, failedIR;

  /// True when the outermost pass has ended.
  bool leave() {
    std::lock_guard<std::mutex> lock(mutex);
    return --depth == 0;
  }

  LogicalResult hold(Diagnostic &d) {
    std::lock_guard<std::mutex> lock(mutex);
    if (reverifying) {
      verifierErrors.push_back(std::move(d));
      return success();
    }
    if (d.getSeverity() != DiagnosticSeverity::Error)
      return failure(); // warnings and remarks go out at once
    held.push_back(std::move(d));
    return success();
  }

  /// The whole IR before a pass, as kiln-opt reads it (the pipeline then
  /// runs on one thread, see addIRChecks).
  void snapshot(Operation *op) {
    Operation *top = op;
    while (top->getParentOp())
      top = top->getParentOp();
    std::string ir;
    llvm::raw_string_ostream os(ir);
    top->print(os, OpPrintingFlags().enableDebugInfo());
    os << "\n";
    std::lock_guard<std::mutex> lock(mutex);
    lastIR = std::move(ir);
  }

  void finish(bool passFailed) {
    bool invalid = false;
    if (passFailed && failedOp) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        reverifying = true;
      }
      invalid = failed(verify(failedOp));
      std::lock_guard<std::mutex> lock(mutex);
      reverifying = false;
    }
    ctx->getDiagEngine().eraseHandler(handler);

    auto isVerifierError = [&](const Diagnostic &d) {
      return llvm::any_of(verifierErrors, [&](const Diagnostic &v) {
        return v.getLocation() == d.getLocation() && v.str() == d.str();
      });
    };
    bool silent = held.empty();
    std::vector<Diagnostic> internal;
    for (Diagnostic &d : held) {
      if (invalid && isVerifierError(d))
        internal.push_back(std::move(d));
      else
        ctx->getDiagEngine().emit(std::move(d));
    }
    llvm::raw_ostream &os = options.os ? *options.os : llvm::errs();
    std::string name = failedPass ? passName(failedPass) : "";
    for (const Diagnostic &d : internal) {
      os << "kiln: internal error: pass '" << name << "' produced invalid IR: ";
      if (std::string op = opNameOf(d); !op.empty())
        os << "'" << op << "' ";
      os << "at " << locationString(d.getLocation()) << ": " << d.str() << "\n";
      for (const Diagnostic &note : d.getNotes())
        os << "  " << locationString(note.getLocation()) << ": note: " << note.str() << "\n";
    }
    // A pass that fails must say why; silence is a bug too.
    if (passFailed && failedPass && silent)
      os << "kiln: internal error: pass '" << name << "' failed without a diagnostic\n";
    if (!internal.empty() || (passFailed && failedPass && silent)) {
      os << "kiln: this is a bug in kiln, not a problem with the model; please report it "
            "with the model";
      if (options.dumpPath.empty())
        os << " and the IR the pass started from (KILN_DUMP_IR_ON_FAILURE=FILE writes it)";
      os << "\n";
    }
    if (passFailed && failedPass && !options.dumpPath.empty() && !failedIR.empty()) {
      std::string rerun = "kiln-opt " + options.dumpPath + " -pass-pipeline='" +
                          pipelineOf(failedPass, failedOp) + "'";
      std::error_code ec;
      llvm::raw_fd_ostream file(options.dumpPath, ec);
      if (ec) {
        os << "kiln: cannot write " << options.dumpPath << ": " << ec.message() << "\n";
      } else {
        file << "// kiln: the IR pass '" << name << "' started from; rerun it with\n//   "
             << rerun << "\n" << failedIR;
        os << "kiln: the IR pass '" << name << "' started from is in " << options.dumpPath
           << "; rerun it with\n  " << rerun << "\n";
      }
    }
    os.flush();

    std::lock_guard<std::mutex> lock(mutex);
    held.clear();
    verifierErrors.clear();
    failedPass = nullptr;
    failedOp = nullptr;
    lastIR.clear();
    failedIR.clear();
  }
};
} // namespace

kiln::IRCheckOptions kiln::IRCheckOptions::fromEnvironment() {
  IRCheckOptions options;
  if (const char *path = std::getenv("KILN_DUMP_IR_ON_FAILURE"))
    options.dumpPath = path;
  return options;
}

void kiln::addIRChecks(PassManager &pm, IRCheckOptions options) {
  // A snapshot of the whole IR is only consistent while no other thread
  // changes a sibling function.
  if (!options.dumpPath.empty())
    pm.getContext()->disableMultithreading();
  pm.addInstrumentation(
      std::make_unique<IRCheckInstrumentation>(pm.getContext(), std::move(options)));
}
