//===- ReorderDeconvFilter.cpp - Computed deconv filters to OIHW ----------===//

#include "kiln/Dialect/Top/Transforms/Passes.h"
#include "kiln/Support/Names.h"

#include "mlir/IR/Builders.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPREORDERDECONVFILTER
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

Location derivedLoc(Operation *op, StringRef suffix) {
  return kiln::derivedLoc(op, suffix, "deconv");
}

bool isSwapOfFirstTwo(TransposeOp t) {
  return t.getPerm() == ArrayRef<int64_t>{1, 0, 2, 3};
}

/// The deconv's filter as [oc, ic/group, kh, kw].
FailureOr<Value> reorderedFilter(DeconvOp op) {
  Value filter = op.getFilter();
  auto type = cast<RankedTensorType>(filter.getType());
  ArrayRef<int64_t> f = type.getShape();
  int64_t group = op.getGroup();
  if (f.size() != 4 || group < 1 || f[0] % group != 0)
    return op.emitOpError("cannot reorder filter ")
           << type << " with group " << group;
  Type elem = type.getElementType();
  OpBuilder b(op);
  if (group == 1) {
    // A transpose that swapped the two leading dims undoes this one.
    if (auto t = filter.getDefiningOp<TransposeOp>(); t && isSwapOfFirstTwo(t))
      return t.getInput();
    auto swapped = RankedTensorType::get({f[1], f[0], f[2], f[3]}, elem);
    return b
        .create<TransposeOp>(derivedLoc(op, "_filter_oihw"), swapped, filter,
                             ArrayRef<int64_t>{1, 0, 2, 3})
        .getOutput();
  }
  // Per group: [g, ic/g, oc/g, kh, kw] -> [g, oc/g, ic/g, kh, kw].
  int64_t icg = f[0] / group, ocg = f[1];
  SmallVector<int64_t> grouped = {group, icg, ocg, f[2], f[3]};
  SmallVector<int64_t> swapped = {group, ocg, icg, f[2], f[3]};
  SmallVector<int64_t> oihw = {group * ocg, icg, f[2], f[3]};
  Value v = b.create<ReshapeOp>(derivedLoc(op, "_filter_grouped"),
                                RankedTensorType::get(grouped, elem), filter,
                                grouped);
  v = b.create<TransposeOp>(derivedLoc(op, "_filter_swapped"),
                            RankedTensorType::get(swapped, elem), v,
                            ArrayRef<int64_t>{0, 2, 1, 3, 4});
  return b
      .create<ReshapeOp>(derivedLoc(op, "_filter_oihw"),
                         RankedTensorType::get(oihw, elem), v, oihw)
      .getOutput();
}

struct ReorderDeconvFilterPass
    : public kiln::top::impl::TopReorderDeconvFilterBase<
          ReorderDeconvFilterPass> {
  void runOnOperation() override {
    SmallVector<DeconvOp> deconvs;
    getOperation().walk([&](DeconvOp op) {
      // Weights are reordered by the lowering at compile time.
      if (!op.getFilterReordered() && !op.getFilter().getDefiningOp<WeightOp>())
        deconvs.push_back(op);
    });
    for (DeconvOp op : deconvs) {
      Operation *oldProducer = op.getFilter().getDefiningOp();
      FailureOr<Value> filter = reorderedFilter(op);
      if (failed(filter))
        return signalPassFailure();
      op.getFilterMutable().assign(*filter);
      op.setFilterReordered(true);
      if (oldProducer && isa<TransposeOp>(oldProducer) &&
          oldProducer->use_empty())
        oldProducer->erase();
    }
  }
};
} // namespace

std::unique_ptr<Pass> kiln::top::createReorderDeconvFilterPass() {
  return std::make_unique<ReorderDeconvFilterPass>();
}
