// `kiln compile` with `verify:` in the config: the reference, the Top
// interpreter, the Tpu interpreter and the cmodel, each compared with the
// level before it; on a failure (or --compare-all) layer by layer, naming
// the first layer whose output diverges.
#ifndef KILN_TOOLS_KILN_VERIFY_H
#define KILN_TOOLS_KILN_VERIFY_H

#include "kiln/Config/Config.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cli {
struct VerifyOptions {
  bool compareAll = false; ///< per-layer table of every level, not only on failure
  std::string dtype;       ///< the config's quantize: picks the level tolerances
};

/// Returns 0 when every level passes, 1 otherwise (after printing why).
/// topIR is the Top IR lowering started from, tpuIR the Tpu IR before layer
/// groups, bmodel the compiled net.
int verifyLevels(const config::DeployConfig &cfg, mlir::ModuleOp topIR, mlir::ModuleOp tpuIR,
                 const std::vector<uint8_t> &bmodel, const VerifyOptions &options);
} // namespace kiln::cli

#endif
