//===- IRChecks.h - Invalid IR after a pass as an internal error -*- C++ -*-===//
//
// MLIR's PassManager verifies the IR after every pass (its verifier is on
// unless enableVerifier(false); kiln never turns it off). Its message alone,
// e.g. `loc("cl"): error: operand #1 does not dominate this use`, reads like
// a problem with the user's model, since kiln's locations are ONNX names.
// addIRChecks makes such a failure an internal error naming the pass and the
// op, and can write the IR the failing pass started from.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_SUPPORT_IRCHECKS_H
#define KILN_SUPPORT_IRCHECKS_H

#include "mlir/Pass/PassManager.h"

#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace kiln {
struct IRCheckOptions {
  /// Where to write the IR a failing pass started from, with the kiln-opt
  /// command that reruns the pass on it ("" = nowhere). Taking the snapshot
  /// prints the IR before every pass and runs the pipeline on one thread.
  std::string dumpPath;
  /// Where the internal-error report goes (nullptr: stderr).
  llvm::raw_ostream *os = nullptr;

  /// dumpPath from the environment variable KILN_DUMP_IR_ON_FAILURE.
  static IRCheckOptions fromEnvironment();
};

/// Instruments `pm`: a pass after which the verifier fails is reported as
///   kiln: internal error: pass 'NAME' produced invalid IR: 'OP' at LOC: MESSAGE
/// with the verifier's notes and a hint, instead of the verifier's
/// diagnostic; a pass that fails with its own diagnostics (a problem with
/// the model) is reported as before. Call once per PassManager, before run.
void addIRChecks(mlir::PassManager &pm,
                 IRCheckOptions options = IRCheckOptions::fromEnvironment());
} // namespace kiln

#endif
