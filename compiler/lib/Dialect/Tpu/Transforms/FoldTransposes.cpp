//===- FoldTransposes.cpp - Transposes become strides of loads ------------===//
//
// A transpose between layer groups is a DDR-to-DDR copy: read, write, and
// read again by the next group. When only TIU ops read its result (through
// reshapes and views), their groups' loads can read the input with the
// permuted strides instead. Each value those ops read becomes a
// tpu.strided_view of the copy's input, fitted from the element addresses
// the chain of copy, reshapes and views gives it. Or, when only the copy
// reads a TIU op's result, that op's group stores it through the inverse
// strides into the copy's result (the dma marked in_place). The cost model
// decides among the three: strides that move single elements cost a burst
// each, so a copy read by several groups may stay.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/Transforms/Passes.h"

#include "kiln/Dialect/Tpu/IR/DmaProgram.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/LayerGroup/StridedLoad.h"
#include "kiln/abi/cost.h"

#include "mlir/IR/Builders.h"

namespace kiln::tpu {
#define GEN_PASS_DEF_TPUFOLDTRANSPOSES
#include "kiln/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace kiln::tpu

using namespace mlir;
using namespace kiln;

namespace {

/// A value the chain gives and the TIU ops that read it.
struct Terminal {
  Value value;
  std::vector<int64_t> addresses;
  SmallVector<OpOperand *> uses;
};

/// Follows the copy's result through reshapes, views and strided views to
/// the TIU ops that read it. False if anything else reads a value on the way.
bool collect(Value v, std::vector<int64_t> addresses, SmallVectorImpl<Operation *> &chain,
             std::vector<Terminal> &terminals) {
  Terminal own{v, addresses, {}};
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    std::vector<int64_t> next;
    if (isa<tpu::ReshapeOp>(user)) {
      next = addresses;
    } else if (auto view = dyn_cast<tpu::ViewOp>(user)) {
      int64_t offset = view.getOffset();
      int64_t count = cast<RankedTensorType>(view.getType()).getNumElements();
      next.assign(addresses.begin() + offset, addresses.begin() + offset + count);
    } else if (auto strided = dyn_cast<tpu::StridedViewOp>(user)) {
      lg::StridedReading r = lg::readingOf(strided);
      int64_t count = cast<RankedTensorType>(strided.getType()).getNumElements();
      SmallVector<int64_t, 6> digit(r.sizes.size(), 0);
      next.reserve(count);
      for (int64_t f = 0; f < count; ++f) {
        int64_t at = r.offset;
        for (size_t k = 0; k < digit.size(); ++k)
          at += digit[k] * r.strides[k];
        next.push_back(addresses[at]);
        for (size_t k = digit.size(); k-- > 0;)
          if (++digit[k] < r.sizes[k])
            break;
          else
            digit[k] = 0;
      }
    } else if (user->hasTrait<tpu::RunsOnTiu>()) {
      own.uses.push_back(&use);
      continue;
    } else {
      return false;
    }
    chain.push_back(user);
    if (!collect(user->getResult(0), std::move(next), chain, terminals))
      return false;
  }
  if (!own.uses.empty())
    terminals.push_back(std::move(own));
  return true;
}

/// Cycles of moving the whole value `v` in [n, c, h, w] shape `shape`
/// through `reading` (a load, or with `toLmem` false a store); nullopt if its
/// layout cannot. A value its group may slice along H must also move in
/// parts of its rows.
std::optional<uint64_t> transferCycles(const lg::StridedReading &reading, Value v,
                                       const std::array<int64_t, 4> &shape, bool sliced,
                                       bool toLmem) {
  uint8_t dtype = tpu::dtypeOrF32(v);
  uint32_t dsize = tpu::elementBytes(v.getType());
  if (sliced && shape[2] > 1) {
    lg::Slice whole{{0, shape[0]}, {0, shape[1]}, {0, shape[2]}, {0, shape[3]}}, part = whole;
    part.h = {0, 1};
    if (!lg::stridedTransfer(reading, shape, dtype, dsize, 0, 0, whole, part, toLmem))
      return std::nullopt;
  }
  return lg::stridedTransferCycles(reading, shape, dtype, dsize, toLmem);
}

/// Cycles the loads of `v` for the op reading operand `use` take through
/// `reading` (nullopt: its layout cannot).
std::optional<uint64_t> loadCycles(const lg::StridedReading &reading, Value v, OpOperand &use) {
  Operation *user = use.getOwner();
  bool whole = lg::isWholeOperand(user, use.getOperandNumber());
  std::optional<uint64_t> asOperand = transferCycles(
      reading, v, lg::lmemShapeOf(user, use.getOperandNumber()), !whole, true);
  // A group without that reader loads it in its own shape.
  if (!asOperand || !transferCycles(reading, v, lg::nchwOf(v), true, true))
    return std::nullopt;
  return asOperand;
}

/// The reading a value has now: a strided view's, else its own elements.
lg::StridedReading currentReading(Value v) {
  if (auto strided = v.getDefiningOp<tpu::StridedViewOp>())
    return lg::readingOf(strided);
  return lg::StridedReading::dense(cast<RankedTensorType>(v.getType()).getNumElements());
}

/// Its readers load the copy's result through strides: the strided views
/// (one per value they read), and the cycles that adds to their loads.
struct LoadSide {
  SmallVector<Operation *> chain;
  std::vector<Terminal> terminals;
  std::vector<lg::StridedReading> readings;
  int64_t extra = 0;
};

std::optional<LoadSide> loadSide(tpu::DmaOp dma, std::vector<int64_t> addresses) {
  LoadSide side;
  if (!collect(dma.getResult(), std::move(addresses), side.chain, side.terminals) ||
      side.terminals.empty())
    return std::nullopt;
  for (Terminal &t : side.terminals) {
    std::optional<lg::StridedReading> reading = lg::StridedReading::fit(t.addresses);
    if (!reading)
      return std::nullopt;
    lg::StridedReading now = currentReading(t.value);
    for (OpOperand *use : t.uses) {
      std::optional<uint64_t> strided = loadCycles(*reading, t.value, *use),
                              before = loadCycles(now, t.value, *use);
      if (!strided || !before)
        return std::nullopt;
      side.extra += int64_t(*strided) - int64_t(*before);
    }
    side.readings.push_back(std::move(*reading));
  }
  return side;
}

/// The cycles a strided store of the copy's input by the TIU op computing
/// it adds to that store, if only the copy reads the input (through
/// reshapes) and the result is not returned.
std::optional<int64_t> storeSideExtra(tpu::DmaOp dma) {
  Value x = dma.getInputs()[0];
  if (!x.hasOneUse())
    return std::nullopt;
  while (auto reshape = x.getDefiningOp<tpu::ReshapeOp>()) {
    x = reshape.getInput();
    if (!x.hasOneUse())
      return std::nullopt;
  }
  Operation *def = x.getDefiningOp();
  if (!def || !def->hasTrait<tpu::RunsOnTiu>() ||
      llvm::any_of(dma->getUsers(), [](Operation *u) { return isa<func::ReturnOp>(u); }))
    return std::nullopt;
  std::optional<lg::StridedReading> scatter = lg::scatterOf(dma);
  if (!scatter)
    return std::nullopt;
  std::array<int64_t, 4> shape = lg::nchwOf(x);
  std::optional<uint64_t> strided = transferCycles(*scatter, x, shape, true, false);
  std::optional<uint64_t> dense = transferCycles(
      lg::StridedReading::dense(cast<RankedTensorType>(x.getType()).getNumElements()), x, shape,
      true, false);
  if (!strided || !dense)
    return std::nullopt;
  return int64_t(*strided) - int64_t(*dense);
}

void foldTranspose(tpu::DmaOp dma, bool keepTensors) {
  std::optional<std::vector<int64_t>> addresses = lg::permutedAddresses(dma);
  if (!addresses)
    return;
  int64_t copyCycles = 0;
  uint8_t dtype = tpu::dtypeOrF32(dma.getResult());
  for (tpu::DmaCopyAttr copy : dma.getCopies()) {
    kiln_gdma_cmd cmd = tpu::dmaCommand(copy, dtype, 0, 0);
    copyCycles += kiln_gdma_cycles(&cmd);
  }
  std::optional<LoadSide> load = loadSide(dma, std::move(*addresses));
  // With keep-tensors the input keeps its own bytes.
  std::optional<int64_t> store = keepTensors ? std::nullopt : storeSideExtra(dma);
  bool storeWins = store && *store < copyCycles && (!load || *store < load->extra);
  if (storeWins) {
    dma.setInPlace(true);
    return;
  }
  if (!load || load->extra >= copyCycles)
    return;

  Value input = dma.getInputs()[0];
  for (auto [t, reading] : llvm::zip(load->terminals, load->readings)) {
    Operation *at = t.value.getDefiningOp();
    OpBuilder b(at);
    auto view = b.create<tpu::StridedViewOp>(at->getLoc(), t.value.getType(), input,
                                             b.getI64IntegerAttr(reading.offset),
                                             b.getDenseI64ArrayAttr(reading.sizes),
                                             b.getDenseI64ArrayAttr(reading.strides));
    for (OpOperand *use : t.uses)
      use->set(view);
  }
  for (Operation *op : llvm::reverse(load->chain))
    if (op->use_empty())
      op->erase();
  if (dma->use_empty())
    dma->erase();
}

struct FoldTransposesPass : public tpu::impl::TpuFoldTransposesBase<FoldTransposesPass> {
  using TpuFoldTransposesBase::TpuFoldTransposesBase;

  void runOnOperation() override {
    SmallVector<tpu::DmaOp> dmas;
    getOperation().walk([&](tpu::DmaOp dma) { dmas.push_back(dma); });
    // Later copies first: one that reads an earlier one's result becomes a
    // strided view the earlier one then folds through.
    for (tpu::DmaOp dma : llvm::reverse(dmas))
      foldTranspose(dma, keepTensors);
  }
};
} // namespace
