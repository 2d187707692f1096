//===- FoldStemRows.cpp - Kernel rows into channels for narrow convs ------===//
//
// The MAC array consumes 32 (F16/BF16) or 64 (INT8) input channels per cycle
// and lane; an RGB stem conv fills 3 of those slots. Folding its kernel rows
// into channels,
//   X'[n, c*KH + ky, oy, x] = X[n, c, oy*sh + ky*dh - pad_top, x]  (0 outside)
//   W'[oc, c*KH + ky, 0, kx] = W[oc, c, ky, kx]                    (a reshape)
// gives a conv with KH times the channels and a one-row kernel: the same
// MACs in KH times fewer passes when C*KH still fits the slots. Only convs
// that read the net's input (the stem) are folded. A tpu.dma
// gathers the rows (one strided copy per kernel row, fills for the padding
// rows); the rewrite is kept only when the chip's cost model says the dma plus
// the new conv run faster than the conv (TPU-MLIR folds the stem the same way
// with lane-offset loads). The sums are the same products in the same
// (c, ky, kx) order, so INT8 results are identical.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/Transforms/Passes.h"

#include "kiln/Codegen/TiuRecord.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/DmaProgram.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/LayerGroup/Schedule.h"
#include "kiln/Support/Names.h"
#include "kiln/abi/cost.h"
#include "mlir/IR/Builders.h"

namespace kiln::tpu {
#define GEN_PASS_DEF_TPUFOLDSTEMROWS
#include "kiln/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace kiln::tpu

using namespace mlir;
using namespace kiln;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Modelled cycles of `ops` run as one layer group; nullopt if one cannot be
/// encoded or they cannot be placed.
std::optional<uint64_t> groupCycles(ArrayRef<Operation *> ops) {
  std::vector<kiln_tiu_cmd> records;
  for (Operation *op : ops) {
    std::optional<kiln_tiu_cmd> record = codegen::tryTiuRecord(op);
    if (!record)
      return std::nullopt;
    records.push_back(*record);
  }
  std::optional<lg::CostedPlan> plan =
      lg::choosePlan(lg::GroupGraph::fromOps(ops), ArrayRef<kiln_tiu_cmd>(records));
  if (!plan)
    return std::nullopt;
  return plan->cycles;
}

/// Zero in the element type: the zero point of a quantized type.
uint32_t zeroBits(Type element) {
  if (tpu::isQuantType(element))
    return uint8_t(tpu::quantParamsOf(element).zeroPoint);
  return 0;
}

/// Whether the conv reads the net's input (or its cast to the compute dtype):
/// that comes from DDR in any grouping, so the gather costs no layer group
/// its LMEM residency. A narrow conv deeper in the net would lose its group
/// to the gather's DDR round trip (folding it in LMEM needs lane-offset
/// loads, planned).
bool readsNetInput(tpu::Conv2DOp conv) {
  Value in = conv.getInput();
  if (auto cast = in.getDefiningOp<tpu::CastOp>())
    in = cast.getInput();
  return isa<BlockArgument>(in);
}

/// Rewrites `conv` if that is faster; true if it did.
bool foldRows(tpu::Conv2DOp conv) {
  auto inType = dyn_cast<RankedTensorType>(conv.getInput().getType());
  auto outType = dyn_cast<RankedTensorType>(conv.getType());
  auto filterOp = conv.getFilter().getDefiningOp<top::WeightOp>();
  if (!inType || !outType || !filterOp || inType.getRank() != 4 || !inType.hasStaticShape() ||
      conv.getGroup() != 1 || !readsNetInput(conv))
    return false;
  auto data = dyn_cast<DenseElementsAttr>(filterOp.getValue());
  auto filterType = cast<RankedTensorType>(conv.getFilter().getType());
  int64_t n = inType.getDimSize(0), c = inType.getDimSize(1), h = inType.getDimSize(2),
          w = inType.getDimSize(3);
  int64_t oc = outType.getDimSize(1), oh = outType.getDimSize(2);
  ArrayRef<int64_t> k = conv.getKernelShape(), st = conv.getStrides(),
                    pads = conv.getPads(), dil = conv.getDilations();
  if (!data || k[0] < 2)
    return false;
  // Only when the folded channels take fewer passes over the channel slots.
  uint32_t pix, icp;
  kiln_conv_tiling(tpu::dtypeOrF32(inType), &pix, &icp);
  if (ceilDiv(c * k[0], icp) >= ceilDiv(c, icp) * k[0])
    return false;
  // A cast of the net's input to the compute dtype joins the unfolded conv's
  // layer group; folded, it is a group of its own, storing what the gather
  // then reads.
  auto inputCast = conv.getInput().getDefiningOp<tpu::CastOp>();
  std::optional<uint64_t> before =
      inputCast ? groupCycles({inputCast, conv}) : groupCycles({conv.getOperation()});
  std::optional<uint64_t> castAlone = inputCast ? groupCycles({inputCast.getOperation()}) : 0;
  if (!before || !castAlone)
    return false;

  // The rows: per kernel row ky, output row oy reads input row
  // oy*sh + ky*dh - pad_top; rows outside the input are zero.
  tpu::DmaProgram program;
  int64_t rows = k[0] * c;
  SmallVector<int64_t> dstStrides = {rows * oh * w, k[0] * oh * w, w, 1};
  SmallVector<int64_t> srcStrides = {c * h * w, h * w, st[0] * w, 1};
  uint32_t zero = zeroBits(inType.getElementType());
  for (int64_t ky = 0; ky < k[0]; ++ky) {
    int64_t shift = ky * dil[0] - pads[0];
    int64_t lo = std::clamp<int64_t>(ceilDiv(std::max<int64_t>(-shift, 0), st[0]), 0, oh);
    int64_t hi = h - 1 - shift < 0 ? 0 : std::min<int64_t>(oh, (h - 1 - shift) / st[0] + 1);
    hi = std::max(hi, lo);
    int64_t base = ky * oh * w;
    if (lo > 0)
      program.fillBits(base, {n, c, lo, w}, dstStrides, zero);
    if (hi > lo)
      program.copy(0, (lo * st[0] + shift) * w, base + lo * w, {n, c, hi - lo, w}, srcStrides,
                   dstStrides);
    if (hi < oh)
      program.fillBits(base + hi * w, {n, c, oh - hi, w}, dstStrides, zero);
  }

  OpBuilder b(conv);
  Location rowsLoc = kiln::derivedLoc(conv, "_folded_rows", "conv");
  auto rowsType = RankedTensorType::get({n, rows, oh, w}, inType.getElementType());
  auto gather = b.create<tpu::DmaOp>(rowsLoc, rowsType, ValueRange{conv.getInput()},
                                     b.getDenseI64ArrayAttr(program.records()));
  SmallVector<int64_t> foldedShape = {oc, rows, 1, k[1]};
  auto folded = b.create<top::WeightOp>(
      filterOp.getLoc(), filterType.clone(foldedShape),
      data.reshape(cast<ShapedType>(data.getType()).clone(foldedShape)));
  auto newConv = cast<tpu::Conv2DOp>(b.clone(*conv));
  newConv.getInputMutable().assign(gather);
  newConv.getFilterMutable().assign(folded);
  newConv.setKernelShape({1, k[1]});
  newConv.setStrides({1, st[1]});
  newConv.setPads({0, pads[1], 0, pads[3]});
  newConv.setDilations({1, dil[1]});

  // Costed with the conv's users: a result nobody reads is never computed.
  conv.replaceAllUsesWith(newConv.getOutput());
  std::optional<uint64_t> after = groupCycles({newConv.getOperation()});
  uint64_t gatherCycles =
      tpu::dmaProgramCycles(program.records(), tpu::dtypeOrF32(inType.getElementType()));
  if (!after || *castAlone + gatherCycles + *after >= *before) {
    newConv.replaceAllUsesWith(conv.getOutput());
    newConv.erase();
    folded.erase();
    gather.erase();
    return false;
  }
  conv.erase();
  if (filterOp.use_empty())
    filterOp.erase();
  return true;
}

struct FoldStemRowsPass : public tpu::impl::TpuFoldStemRowsBase<FoldStemRowsPass> {
  void runOnOperation() override {
    SmallVector<tpu::Conv2DOp> convs;
    getOperation().walk([&](tpu::Conv2DOp conv) { convs.push_back(conv); });
    for (tpu::Conv2DOp conv : convs)
      foldRows(conv);
  }
};
} // namespace
