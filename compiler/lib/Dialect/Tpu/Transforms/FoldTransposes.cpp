//===- FoldTransposes.cpp - Transposes become strides of loads ------------===//
//
// A transpose between layer groups is a DDR-to-DDR copy: read, write, and
// read again by the next group. When only TIU ops read its result (through
// reshapes and views), their groups' loads can read the input with the
// permuted strides instead. Each value those ops read becomes a
// tpu.strided_view of the copy's input, fitted from the element addresses
// the chain of copy, reshapes and views gives it. The cost model decides:
// strides that move single elements cost a burst each, so a copy read by
// several groups may stay.
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

/// Element addresses are enumerated, so only tensors up to this size.
constexpr int64_t kMaxElements = int64_t(1) << 20;

/// The input element each result element of `dma` copies, if it is one
/// strided copy of every input element onto its whole result (a transpose).
std::optional<std::vector<int64_t>> permutedAddresses(tpu::DmaOp dma) {
  auto type = cast<RankedTensorType>(dma.getType());
  if (dma.getInputs().size() != 1 || dma.getProgram().size() != 1 || !type.hasStaticShape() ||
      type.getNumElements() > kMaxElements)
    return std::nullopt;
  auto in = cast<RankedTensorType>(dma.getInputs()[0].getType());
  if (!in.hasStaticShape() || in.getElementType() != type.getElementType() ||
      in.getNumElements() != type.getNumElements())
    return std::nullopt;
  auto copy = cast<tpu::DmaCopyAttr>(dma.getProgram()[0]);
  if (copy.isFill() || copy.getSrc() != 0 || copy.getDstOffset() != 0)
    return std::nullopt;
  ArrayRef<int64_t> shape = copy.getShape(), src = copy.getSrcStrides(),
                    dst = copy.getDstStrides();
  int64_t dense = 1;
  for (int d = 3; d >= 0; --d) {
    if (shape[d] > 1 && (dst[d] != dense || src[d] <= 0))
      return std::nullopt;
    dense *= shape[d];
  }
  if (dense != type.getNumElements())
    return std::nullopt;
  std::vector<int64_t> addresses;
  addresses.reserve(dense);
  for (int64_t n = 0; n < shape[0]; ++n)
    for (int64_t c = 0; c < shape[1]; ++c)
      for (int64_t h = 0; h < shape[2]; ++h)
        for (int64_t w = 0; w < shape[3]; ++w)
          addresses.push_back(copy.getSrcOffset() + n * src[0] + c * src[1] + h * src[2] +
                              w * src[3]);
  return addresses;
}

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

/// Cycles the loads of `v` by the op reading operand `use` take through
/// `reading` (nullopt: its layout cannot).
std::optional<uint64_t> loadCycles(const lg::StridedReading &reading, Value v, OpOperand &use) {
  uint8_t dtype = tpu::dtypeOrF32(v);
  uint32_t dsize = tpu::elementBytes(v.getType());
  std::optional<uint64_t> asOperand =
      lg::stridedLoadCycles(reading, lg::lmemShapeOf(use.getOwner(), use.getOperandNumber()),
                            dtype, dsize);
  // A group without that reader loads it in its own shape.
  if (!asOperand || !lg::stridedLoadCycles(reading, lg::nchwOf(v), dtype, dsize))
    return std::nullopt;
  return asOperand;
}

/// The reading a value has now: a strided view's, else its own elements.
lg::StridedReading currentReading(Value v) {
  if (auto strided = v.getDefiningOp<tpu::StridedViewOp>())
    return lg::readingOf(strided);
  return lg::StridedReading::dense(cast<RankedTensorType>(v.getType()).getNumElements());
}

void foldTranspose(tpu::DmaOp dma) {
  std::optional<std::vector<int64_t>> addresses = permutedAddresses(dma);
  if (!addresses)
    return;
  SmallVector<Operation *> chain;
  std::vector<Terminal> terminals;
  if (!collect(dma.getResult(), std::move(*addresses), chain, terminals) || terminals.empty())
    return;
  uint64_t copyCycles = 0;
  uint8_t dtype = tpu::dtypeOrF32(dma.getResult());
  for (tpu::DmaCopyAttr copy : dma.getCopies()) {
    kiln_gdma_cmd cmd = tpu::dmaCommand(copy, dtype, 0, 0);
    copyCycles += kiln_gdma_cycles(&cmd);
  }
  // Strided loads against the copy plus the loads the readers have now.
  std::vector<lg::StridedReading> readings;
  int64_t extra = 0;
  for (Terminal &t : terminals) {
    std::optional<lg::StridedReading> reading = lg::StridedReading::fit(t.addresses);
    if (!reading)
      return;
    lg::StridedReading now = currentReading(t.value);
    for (OpOperand *use : t.uses) {
      std::optional<uint64_t> strided = loadCycles(*reading, t.value, *use),
                              before = loadCycles(now, t.value, *use);
      if (!strided || !before)
        return;
      extra += int64_t(*strided) - int64_t(*before);
    }
    readings.push_back(std::move(*reading));
  }
  if (extra >= int64_t(copyCycles))
    return;

  Value input = dma.getInputs()[0];
  for (auto [t, reading] : llvm::zip(terminals, readings)) {
    Operation *at = t.value.getDefiningOp();
    OpBuilder b(at);
    auto view = b.create<tpu::StridedViewOp>(at->getLoc(), t.value.getType(), input,
                                             b.getI64IntegerAttr(reading.offset),
                                             b.getDenseI64ArrayAttr(reading.sizes),
                                             b.getDenseI64ArrayAttr(reading.strides));
    for (OpOperand *use : t.uses)
      use->set(view);
  }
  for (Operation *op : llvm::reverse(chain))
    if (op->use_empty())
      op->erase();
  if (dma->use_empty())
    dma->erase();
}

struct FoldTransposesPass : public tpu::impl::TpuFoldTransposesBase<FoldTransposesPass> {
  void runOnOperation() override {
    SmallVector<tpu::DmaOp> dmas;
    getOperation().walk([&](tpu::DmaOp dma) { dmas.push_back(dma); });
    // Later copies first: one that reads an earlier one's result becomes a
    // strided view the earlier one then folds through.
    for (tpu::DmaOp dma : llvm::reverse(dmas))
      foldTranspose(dma);
  }
};
} // namespace
