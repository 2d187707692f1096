//===- SpreadLanes.cpp - Narrow elementwise chains over all lanes ----------===//
//
// The EU works on every lane at once, but a [N, C, H, W] tensor with C < 64
// channels occupies C lanes: a Sigmoid over a one-channel 640 x 640 map (a
// segmentation or text-detection head) runs on one lane of 64. Elementwise
// ops do not care which element sits on which lane, and a tensor's DDR
// layout is the same for [N, C, H, W] and [N, C*k, H/k, W]: so a chain of
// unary elementwise ops (activations, ReLU, casts) on such a tensor runs on
// the reshaped view, C*k lanes busy. The reshapes are DDR aliases that end
// the layer groups around the chain, so the chain's input and output go
// through DDR where they might have stayed in LMEM; the rewrite is kept only
// where the chip's cost model says the EU passes saved outweigh that trip.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/Transforms/Passes.h"

#include "kiln/Codegen/TiuRecord.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/LayerGroup/Slicing.h"
#include "kiln/abi/cost.h"
#include "mlir/IR/Builders.h"

namespace kiln::tpu {
#define GEN_PASS_DEF_TPUSPREADLANES
#include "kiln/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace kiln::tpu

using namespace mlir;
using namespace kiln;

namespace {

/// A pointwise op of one operand (an INT8 active's table, a second operand,
/// is laid out for its lanes).
bool isUnaryElementwise(Operation *op) {
  return op->hasTrait<tpu::Pointwise>() && op->getNumOperands() == 1;
}

std::optional<std::array<int64_t, 4>> shape4(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != 4 || !type.hasStaticShape())
    return std::nullopt;
  auto s = type.getShape();
  return std::array<int64_t, 4>{s[0], s[1], s[2], s[3]};
}

/// Modelled TIU cycles of the chain's commands at their current shapes.
std::optional<uint64_t> tiuCycles(ArrayRef<Operation *> chain) {
  uint64_t total = 0;
  for (Operation *op : chain) {
    std::optional<kiln_tiu_cmd> record = codegen::tryTiuRecord(op);
    if (!record)
      return std::nullopt;
    total += kiln_tiu_cycles(&*record);
  }
  return total;
}

/// A value's trip through DDR: a store and a load.
uint64_t roundTripCycles(Value v) {
  uint64_t bytes = tpu::tensorBytes(v);
  return 2 * KILN_GDMA_CMD_LATENCY + bytes * 1000 / KILN_GDMA_MBPC_LMEM_TO_DDR +
         bytes * 1000 / KILN_GDMA_MBPC_DDR_TO_LMEM;
}

void setShape(Value v, ArrayRef<int64_t> shape) {
  v.setType(RankedTensorType::get(shape, cast<RankedTensorType>(v.getType()).getElementType()));
}

/// Spreads the chain starting at `head` if that pays; true if it did.
bool spread(Operation *head) {
  std::optional<std::array<int64_t, 4>> s = shape4(head->getResult(0));
  if (!s || (*s)[1] >= KILN_NPU_NUM)
    return false;
  auto [n, c, h, w] = *s;
  // The most rows per channel that still fit the lanes.
  int64_t k = 1;
  for (int64_t d = 2; d <= h && c * d <= KILN_NPU_NUM; ++d)
    if (h % d == 0)
      k = d;
  if (k == 1)
    return false;
  SmallVector<Operation *> chain = {head};
  while (chain.back()->hasOneUse()) {
    Operation *next = *chain.back()->user_begin();
    if (!isUnaryElementwise(next) || shape4(next->getResult(0)) != s)
      break;
    chain.push_back(next);
  }
  Value in = head->getOperand(0), out = chain.back()->getResult(0);
  std::optional<uint64_t> before = tiuCycles(chain);
  if (!before)
    return false;
  // Its producer's and consumers' layer groups could have held what now goes
  // through DDR.
  uint64_t trips = 0;
  if (Operation *def = in.getDefiningOp(); def && def->hasTrait<tpu::RunsOnTiu>())
    trips += roundTripCycles(in);
  // A filter view reads its input in LMEM too, in the conv's group.
  if (llvm::any_of(out.getUsers(), [](Operation *user) {
        return user->hasTrait<tpu::RunsOnTiu>() || lg::isFilterView(user);
      }))
    trips += roundTripCycles(out);
  SmallVector<int64_t, 4> spreadShape = {n, c * k, h / k, w};
  for (Operation *op : chain)
    setShape(op->getResult(0), spreadShape);
  std::optional<uint64_t> after = tiuCycles(chain);
  if (!after || *after + trips >= *before) {
    for (Operation *op : chain)
      setShape(op->getResult(0), *s);
    return false;
  }
  OpBuilder b(head);
  auto viewType = RankedTensorType::get(spreadShape, cast<RankedTensorType>(in.getType()).getElementType());
  head->setOperand(0, b.create<tpu::ReshapeOp>(head->getLoc(), viewType, in));
  b.setInsertionPointAfter(chain.back());
  auto back = b.create<tpu::ReshapeOp>(
      chain.back()->getLoc(),
      RankedTensorType::get(*s, cast<RankedTensorType>(out.getType()).getElementType()), out);
  out.replaceAllUsesExcept(back, back);
  return true;
}

struct SpreadLanesPass : public tpu::impl::TpuSpreadLanesBase<SpreadLanesPass> {
  void runOnOperation() override {
    SmallVector<Operation *> heads;
    getOperation().walk([&](Operation *op) {
      Operation *def = op->getNumOperands() ? op->getOperand(0).getDefiningOp() : nullptr;
      // A chain starts where its input is not itself a chain member's result.
      if (isUnaryElementwise(op) && !(def && isUnaryElementwise(def) && def->hasOneUse() &&
                                      shape4(def->getResult(0)) == shape4(op->getResult(0))))
        heads.push_back(op);
    });
    for (Operation *head : heads)
      spread(head);
  }
};
} // namespace
