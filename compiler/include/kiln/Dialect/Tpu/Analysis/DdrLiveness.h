//===- DdrLiveness.h - Where and when DDR activations live ------*- C++ -*-===//
//
// The facts of the activation plan, shared by tpu-address-assign (which
// places the buffers) and codegen (which writes them into the bmodel, where
// the runtime verifier checks them). A net runs as a sequence of steps, one
// per op that runs commands (bmodel layer groups). Every DDR value lies in a
// buffer: its root, the value itself or the memory a reshape, a view or an
// in-place concat puts it in. A value holds its data from the step that
// writes it to the last step that reads its bytes; a buffer is live from the
// first write of any of its values to the last read of any of them. Net
// inputs and outputs are pinned: live for the whole run, so the caller can
// set and read them.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_TPU_ANALYSIS_DDRLIVENESS_H
#define KILN_DIALECT_TPU_ANALYSIS_DDRLIVENESS_H

#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cstdint>

namespace kiln::tpu {

/// Whether a top-level op of a net runs commands of its own (one step): not a
/// weight, a reshape, a view or an in-place concat.
bool runsCommands(mlir::Operation *op);

/// Whether the producers of concat's inputs can write them straight into its
/// result: the inputs are contiguous parts of the result (every dimension
/// before the axis is 1), of its element type, each computed by an op that
/// runs commands (possibly through reshapes) and placed in no other concat
/// (`placed`). On success their producers' values are added to `placed`.
bool claimConcatInPlace(ConcatOp concat, llvm::DenseSet<mlir::Value> &placed);

class DdrLiveness {
public:
  static constexpr int64_t kBeforeRun = -1;

  struct Buffer {
    mlir::Value root;
    uint64_t bytes = 0;
    int64_t first = 0, last = 0; // live steps, both inclusive
    bool pinned = false;         // a net input or output
  };

  /// Fails with a diagnostic on IR the plan cannot describe (an in-place
  /// concat whose inputs it cannot own). A layer group of elementwise ops
  /// whose one result has the bytes of a value it loads, read for the last
  /// time there, writes its result over that value (in place): each slice is
  /// loaded before the same rows are stored. keepTensors (every value
  /// readable after the run) rules that out.
  static mlir::FailureOr<DdrLiveness> compute(mlir::func::FuncOp func, bool keepTensors = false);

  /// The value a group writes its result over, if it runs in place.
  mlir::Value inPlaceOperand(GroupOp group) const { return inPlace.lookup(group); }

  int64_t stepCount() const { return steps; }
  /// Arguments, then the results of top-level ops in program order (weights
  /// and their views excluded).
  llvm::ArrayRef<mlir::Value> values() const { return order; }
  /// Roots in program order; weights, which live in the coefficient region,
  /// are no buffers.
  llvm::ArrayRef<Buffer> buffers() const { return bufs; }

  /// The value whose memory holds v, and v's byte offset in it.
  mlir::Value rootOf(mlir::Value v) const;
  uint64_t offsetInRoot(mlir::Value v) const;
  /// Index of v's root in buffers(), or -1 for a view of a weight.
  int64_t bufferOf(mlir::Value v) const;
  /// The step after which v holds its value (kBeforeRun for inputs).
  int64_t firstStep(mlir::Value v) const { return info.lookup(v).def; }
  /// The last step that reads v's bytes (stepCount() for outputs).
  int64_t lastStep(mlir::Value v) const;

private:
  struct Info {
    mlir::Value parent; // the value whose memory holds this one, if any
    uint64_t offset = 0; // bytes into parent
    int64_t def = kBeforeRun;
    int64_t last = INT64_MIN;
  };
  void markRead(mlir::Value v, int64_t step);
  static mlir::FailureOr<DdrLiveness>
  computeWith(mlir::func::FuncOp func, const llvm::DenseMap<mlir::Operation *, mlir::Value> &inPlace);
  mlir::Value findInPlaceOperand(GroupOp group, int64_t step) const;

  llvm::DenseMap<mlir::Value, Info> info;
  llvm::SmallVector<mlir::Value> order;
  llvm::SmallVector<Buffer> bufs;
  llvm::DenseMap<mlir::Value, int64_t> bufferIndex;
  llvm::DenseMap<mlir::Operation *, mlir::Value> inPlace;
  int64_t steps = 0;
};

} // namespace kiln::tpu

#endif
