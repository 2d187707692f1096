//===- FoldStemRows.cpp - Kernel rows into channels for narrow convs ------===//
//
// The MAC array consumes 32 (F16/BF16) or 64 (INT8) input channels per cycle
// and lane; an RGB stem conv fills 3 of those slots. Folding its kernel rows
// into channels,
//   X'[n, ky*C + c, oy, x] = X[n, c, oy*sh + ky*dh - pad_top, x]  (0 outside)
//   W'[oc, ky*C + c, 0, kx] = W[oc, c, ky, kx]
// gives a conv with KH times the channels and a one-row kernel: the same
// MACs in KH times fewer passes when C*KH still fits the slots. X' is a
// tpu.fold_rows of the net's input: it has no memory of its own, the conv's
// layer group loads each kernel row's block of channels straight from the
// input into lanes [ky*C, ky*C + C) (lane-offset loads, as TPU-MLIR loads a
// folded stem), so C*KH is at most 64. A cast of the input to the compute
// dtype moves after the fold and stays in the group. Only convs that read
// the net's input fold (a conv deeper in the net would have to store its
// input for the loads), and only when the chip's cost model says the group
// runs faster. INT8 sums are exact, so INT8 results are identical; float
// sums add the same products in (ky, c, kx) order.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/Transforms/Passes.h"

#include "kiln/Codegen/TiuRecord.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/LayerGroup/Schedule.h"
#include "kiln/Support/Names.h"
#include "kiln/abi/cost.h"
#include "mlir/IR/Builders.h"

#include <cstring>

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
  std::optional<std::vector<kiln_tiu_cmd>> records = codegen::tryTiuRecords(ops);
  if (!records)
    return std::nullopt;
  // Without reuse: the layer-group pass may keep that kind of plan.
  std::optional<lg::CostedPlan> plan =
      lg::choosePlans(lg::GroupGraph::fromOps(ops), ArrayRef<kiln_tiu_cmd>(*records),
                      /*reuse=*/false)
          .fixed;
  if (!plan)
    return std::nullopt;
  return plan->cycles;
}

/// The net input a conv reads, directly or through a cast to its compute
/// dtype; null otherwise. It is in DDR in any grouping, so loading it folded
/// costs no layer group its LMEM residency.
Value netInputOf(tpu::Conv2DOp conv) {
  Value in = conv.getInput();
  if (auto cast = in.getDefiningOp<tpu::CastOp>())
    in = cast.getInput();
  return isa<BlockArgument>(in) ? in : Value();
}

/// W'[oc, ky*C + c, 0, kx] = W[oc, c, ky, kx].
DenseElementsAttr foldFilter(DenseElementsAttr data, ArrayRef<int64_t> shape) {
  int64_t oc = shape[0], c = shape[1], kh = shape[2], kw = shape[3];
  auto type = cast<ShapedType>(data.getType()).clone({oc, kh * c, 1, kw});
  if (data.isSplat())
    return data.reshape(type);
  ArrayRef<char> raw = data.getRawData();
  size_t bytes = raw.size() / data.getNumElements();
  std::vector<char> out(raw.size());
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t ky = 0; ky < kh; ++ky)
        std::memcpy(&out[(((o * kh + ky) * c + ci) * kw) * bytes],
                    &raw[(((o * c + ci) * kh + ky) * kw) * bytes], kw * bytes);
  return DenseElementsAttr::getFromRawBuffer(type, out);
}

/// Rewrites `conv` if that is faster; true if it did.
bool foldRows(tpu::Conv2DOp conv) {
  auto inType = dyn_cast<RankedTensorType>(conv.getInput().getType());
  auto outType = dyn_cast<RankedTensorType>(conv.getType());
  auto filterOp = conv.getFilter().getDefiningOp<top::WeightOp>();
  Value source = netInputOf(conv);
  if (!inType || !outType || !filterOp || inType.getRank() != 4 || !inType.hasStaticShape() ||
      conv.getGroup() != 1 || !source)
    return false;
  auto data = dyn_cast<DenseElementsAttr>(filterOp.getValue());
  auto filterType = cast<RankedTensorType>(conv.getFilter().getType());
  int64_t n = inType.getDimSize(0), c = inType.getDimSize(1), w = inType.getDimSize(3);
  int64_t oh = outType.getDimSize(2);
  ArrayRef<int64_t> k = conv.getKernelShape(), st = conv.getStrides(),
                    pads = conv.getPads(), dil = conv.getDilations();
  if (!data || k[0] < 2 || c * k[0] > KILN_NPU_NUM)
    return false;
  // Only when the folded channels take fewer passes over the channel slots.
  uint32_t pix, icp;
  kiln_conv_tiling(tpu::dtypeOrF32(inType), &pix, &icp);
  if (ceilDiv(c * k[0], icp) >= ceilDiv(c, icp) * k[0])
    return false;
  auto inputCast = conv.getInput().getDefiningOp<tpu::CastOp>();
  std::optional<uint64_t> before =
      inputCast ? groupCycles({inputCast, conv}) : groupCycles({conv.getOperation()});
  if (!before)
    return false;

  OpBuilder b(conv);
  Location rowsLoc = kiln::derivedLoc(conv, "_folded_rows", "conv");
  auto sourceType = cast<RankedTensorType>(source.getType());
  auto fold = b.create<tpu::FoldRowsOp>(
      rowsLoc, sourceType.clone({n, k[0] * c, oh, w}), source, b.getI64IntegerAttr(k[0]),
      b.getI64IntegerAttr(st[0]), b.getI64IntegerAttr(dil[0]), b.getI64IntegerAttr(pads[0]));
  Value rows = fold;
  tpu::CastOp newCast;
  if (inputCast) {
    newCast = cast<tpu::CastOp>(b.clone(*inputCast));
    newCast.getInputMutable().assign(fold);
    newCast.getResult().setType(inType.clone({n, k[0] * c, oh, w}));
    rows = newCast;
  }
  auto folded = b.create<top::WeightOp>(filterOp.getLoc(),
                                        filterType.clone({filterType.getDimSize(0), k[0] * c, 1, k[1]}),
                                        foldFilter(data, filterType.getShape()));
  auto newConv = cast<tpu::Conv2DOp>(b.clone(*conv));
  newConv.getInputMutable().assign(rows);
  newConv.getFilterMutable().assign(folded);
  newConv.setKernelShape({1, k[1]});
  newConv.setStrides({1, st[1]});
  newConv.setPads({0, pads[1], 0, pads[3]});
  newConv.setDilations({1, dil[1]});

  // Costed with the conv's users: a result nobody reads is never computed.
  conv.replaceAllUsesWith(newConv.getOutput());
  std::optional<uint64_t> after =
      newCast ? groupCycles({newCast, newConv}) : groupCycles({newConv.getOperation()});
  if (!after || *after >= *before) {
    newConv.replaceAllUsesWith(conv.getOutput());
    newConv.erase();
    folded.erase();
    if (newCast)
      newCast.erase();
    fold.erase();
    return false;
  }
  conv.erase();
  if (inputCast && inputCast->use_empty())
    inputCast.erase();
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
