//===- FoldOutputRows.cpp - Narrow convs compute several rows per pass ---===//
//
// Each output channel of a conv is a lane: a conv with 16 or 24 output
// channels leaves most of the 64 lanes idle. Computing R output rows per
// pass as R blocks of channels,
//   Y'[n, r * O + o, i, x] = Y[n, o, R * i + r, x],
// puts R times the lanes to work:
//   - from an input in rows, the conv gets a kernel kh + R - 1 rows tall and
//     stride R; block r's filter rows are the original ones shifted down by
//     r (zero taps elsewhere);
//   - from an input folded the same way (the previous conv of the chain), a
//     conv over the R * C folded channels whose taps pick, for each block and
//     kernel row, the block and folded row holding that input row;
//   - pointwise ops in between run on the folded tensor as they are, with
//     per-channel operands repeated per block.
// The chain ends in a tpu.unfold_rows: the layer group computing it stores
// each block into its rows of the result (lane-offset stores), so no
// command moves the rows back. Kept where the chip's cost model says the
// chain's TIU work shrinks. The zero taps are charged like any other. INT8
// sums are exact; float sums add the same products (and exact zeros), the
// folded conv's in its own order, which the Tpu interpreter and the cmodel
// share.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Tpu/Transforms/Passes.h"

#include "kiln/Codegen/TiuRecord.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/LayerGroup/Slicing.h"
#include "kiln/Support/Names.h"
#include "kiln/abi/cost.h"
#include "mlir/Dialect/Quant/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

#include <cstring>

namespace kiln::tpu {
#define GEN_PASS_DEF_TPUFOLDOUTPUTROWS
#include "kiln/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace kiln::tpu

using namespace mlir;
using namespace kiln;

namespace {

int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

RankedTensorType rankedType(Value v) { return dyn_cast<RankedTensorType>(v.getType()); }

/// [n, c * rows, h / rows, w] of an [n, c, h, w] type.
RankedTensorType foldedType(RankedTensorType t, int64_t rows) {
  return t.clone({t.getDimSize(0), t.getDimSize(1) * rows, t.getDimSize(2) / rows,
                  t.getDimSize(3)});
}

/// A weight's bytes in its chip dtype, and the element type of a dense
/// attribute holding them (a quantized weight's storage type); nullopt for
/// weights this pass does not rewrite.
std::optional<std::pair<std::vector<uint8_t>, Type>> weightData(top::WeightOp w) {
  Type element = cast<ShapedType>(w.getType()).getElementType();
  if (auto q = dyn_cast<quant::QuantizedType>(element))
    element = q.getStorageType();
  if (!isa<IntegerType, FloatType>(element))
    return std::nullopt;
  FailureOr<std::vector<uint8_t>> bytes = codegen::weightBytes(w);
  if (failed(bytes))
    return std::nullopt;
  return std::make_pair(std::move(*bytes), element);
}

/// `like`'s element type for a weight whose dimension 0 repeats it in
/// `rows` blocks: per-channel quantization parameters repeat with it.
Type repeatedElement(top::WeightOp like, int64_t rows) {
  Type element = cast<ShapedType>(like.getType()).getElementType();
  auto q = dyn_cast<quant::UniformQuantizedPerAxisType>(element);
  if (!q || q.getQuantizedDimension() != 0)
    return element;
  SmallVector<double> scales;
  SmallVector<int64_t> zeros;
  for (int64_t r = 0; r < rows; ++r) {
    scales.append(q.getScales().begin(), q.getScales().end());
    zeros.append(q.getZeroPoints().begin(), q.getZeroPoints().end());
  }
  return quant::UniformQuantizedPerAxisType::get(q.getFlags(), q.getStorageType(),
                                                 q.getExpressedType(), scales, zeros, 0,
                                                 q.getStorageTypeMin(), q.getStorageTypeMax());
}

/// A weight of `shape` holding `bytes` (dense of `storage`), typed like
/// `like` with its dimension 0 repeated `rows` times.
Value makeWeight(OpBuilder &b, top::WeightOp like, ArrayRef<int64_t> shape, Type storage,
                 const std::vector<uint8_t> &bytes, int64_t rows) {
  auto data = DenseElementsAttr::getFromRawBuffer(
      RankedTensorType::get(shape, storage),
      ArrayRef<char>(reinterpret_cast<const char *>(bytes.data()), bytes.size()));
  return b.create<top::WeightOp>(kiln::derivedLoc(like, "_row_folded", "weight"),
                                 RankedTensorType::get(shape, repeatedElement(like, rows)),
                                 data);
}

/// The weight repeated `rows` times along dimension `dim` (block r = copy r).
Value tileWeight(OpBuilder &b, top::WeightOp w, int64_t dim, int64_t rows) {
  auto data = weightData(w);
  auto type = cast<RankedTensorType>(w.getType());
  int64_t outer = 1, block = data->first.size();
  for (int64_t d = 0; d < dim; ++d)
    outer *= type.getDimSize(d);
  block /= outer;
  std::vector<uint8_t> out;
  out.reserve(data->first.size() * rows);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < rows; ++r)
      out.insert(out.end(), data->first.begin() + o * block,
                 data->first.begin() + (o + 1) * block);
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] *= rows;
  return makeWeight(b, w, shape, data->second, out, dim == 0 ? rows : 1);
}

/// Whether a stored 0 is the value 0 (the zero taps of a folded filter).
bool zeroIsZero(top::WeightOp w) {
  Type element = cast<ShapedType>(w.getType()).getElementType();
  if (auto q = dyn_cast<quant::UniformQuantizedPerAxisType>(element))
    return llvm::all_of(q.getZeroPoints(), [](int64_t z) { return z == 0; });
  if (auto q = dyn_cast<quant::UniformQuantizedType>(element))
    return q.getZeroPoint() == 0;
  return true;
}

/// A conv this pass can fold: one group, one-row steps in H, a constant
/// filter and bias of a plain or quantized dtype.
bool isFoldableConv(tpu::Conv2DOp conv) {
  auto in = rankedType(conv.getInput()), out = rankedType(conv.getOutput());
  auto filter = conv.getFilter().getDefiningOp<top::WeightOp>();
  if (!in || !out || in.getRank() != 4 || !in.hasStaticShape() || !out.hasStaticShape() ||
      conv.getGroup() != 1 || conv.getStrides()[0] != 1 || conv.getDilations()[0] != 1 ||
      !filter || !weightData(filter) || !zeroIsZero(filter))
    return false;
  if (isa<NoneType>(conv.getBias().getType()))
    return true;
  auto bias = conv.getBias().getDefiningOp<top::WeightOp>();
  return bias && weightData(bias);
}

/// Whether `op` (pointwise) can run on `v` folded: its other operands are
/// whole-read tables, scalars or per-channel weights of v's channels.
bool isFoldablePointwise(Operation *op, Value v) {
  if (!op->hasTrait<tpu::RunsOnTiu>() || !op->hasTrait<tpu::Pointwise>() ||
      op->getNumResults() != 1 || !rankedType(op->getResult(0)) ||
      rankedType(op->getResult(0)).getShape() != rankedType(v).getShape())
    return false;
  int64_t channels = rankedType(v).getDimSize(1);
  for (OpOperand &use : op->getOpOperands()) {
    Value operand = use.get();
    if (operand == v || isa<NoneType>(operand.getType()) ||
        lg::isWholeOperand(op, use.getOperandNumber()))
      continue;
    auto w = operand.getDefiningOp<top::WeightOp>();
    auto type = rankedType(operand);
    if (!w || !type || !weightData(w) ||
        isa<quant::UniformQuantizedPerAxisType>(type.getElementType()))
      return false;
    if (type.getNumElements() == 1)
      continue;
    // [..., C, 1, 1]: one value per channel.
    if (type.getRank() < 3 || type.getNumElements() != channels ||
        type.getDimSize(type.getRank() - 3) != channels)
      return false;
  }
  return llvm::count(op->getOperands(), v) == 1;
}

/// A conv of the chain reading the folded result of the previous one: it
/// must keep the rows (the output has the input's height).
bool isFoldableInnerConv(Operation *op, Value v) {
  auto conv = dyn_cast<tpu::Conv2DOp>(op);
  return conv && conv.getInput() == v && isFoldableConv(conv) &&
         rankedType(conv.getOutput()).getDimSize(2) == rankedType(v).getDimSize(2);
}

/// The ops folded with `first`: it, then its single user while that user can
/// run folded.
SmallVector<Operation *> chainFrom(tpu::Conv2DOp first) {
  SmallVector<Operation *> chain{first};
  Value v = first.getOutput();
  while (v.hasOneUse()) {
    Operation *user = *v.getUsers().begin();
    if (!isFoldableInnerConv(user, v) && !isFoldablePointwise(user, v))
      break;
    chain.push_back(user);
    v = user->getResult(0);
  }
  return chain;
}

/// W'[r*O + o, i, k', x] = W[o, i, k' - r, x] (0 outside the kernel).
std::vector<uint8_t> shiftedFilter(const std::vector<uint8_t> &w, ArrayRef<int64_t> shape,
                                   int64_t rows, size_t bytes) {
  int64_t oc = shape[0], ic = shape[1], kh = shape[2], kw = shape[3], tall = kh + rows - 1;
  std::vector<uint8_t> out(rows * oc * ic * tall * kw * bytes, 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t i = 0; i < ic; ++i)
        for (int64_t k = 0; k < kh; ++k)
          std::memcpy(&out[((((r * oc + o) * ic + i) * tall + k + r) * kw) * bytes],
                      &w[(((o * ic + i) * kh + k) * kw) * bytes], kw * bytes);
  return out;
}

/// Folded rows of the input a folded conv reads: output block r, kernel row k
/// reads input row R*i + r - pad + k, i.e. block (r - pad + k) mod R of
/// folded row i + floor((r - pad + k) / R).
struct FoldedTaps {
  int64_t first, last; // folded row offsets, inclusive
  FoldedTaps(int64_t kh, int64_t pad, int64_t rows)
      : first(floorDiv(-pad, rows)), last(floorDiv(rows - 1 - pad + kh - 1, rows)) {}
  int64_t height() const { return last - first + 1; }
};

/// W'[r*O + o, r'*I + i, dy - first, x] = W[o, i, k, x] where
/// R*dy + r' = r - pad + k.
std::vector<uint8_t> foldedFilter(const std::vector<uint8_t> &w, ArrayRef<int64_t> shape,
                                  int64_t rows, int64_t pad, size_t bytes) {
  int64_t oc = shape[0], ic = shape[1], kh = shape[2], kw = shape[3];
  FoldedTaps taps(kh, pad, rows);
  int64_t tall = taps.height();
  std::vector<uint8_t> out(rows * oc * rows * ic * tall * kw * bytes, 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < kh; ++k) {
      int64_t t = r - pad + k, dy = floorDiv(t, rows), block = t - rows * dy;
      for (int64_t o = 0; o < oc; ++o)
        for (int64_t i = 0; i < ic; ++i)
          std::memcpy(
              &out[((((r * oc + o) * rows + block) * ic + i) * tall + dy - taps.first) * kw *
                   bytes],
              &w[(((o * ic + i) * kh + k) * kw) * bytes], kw * bytes);
    }
  return out;
}

/// The conv on folded rows: `input` is unfolded for the chain's first conv,
/// folded for the others.
Operation *foldConv(OpBuilder &b, tpu::Conv2DOp conv, Value input, int64_t rows, bool first) {
  auto filterOp = conv.getFilter().getDefiningOp<top::WeightOp>();
  auto filterType = cast<RankedTensorType>(filterOp.getType());
  auto [bytes, element] = *weightData(filterOp);
  size_t size = bytes.size() / filterType.getNumElements();
  ArrayRef<int64_t> k = conv.getKernelShape(), st = conv.getStrides(), pads = conv.getPads();
  int64_t oc = filterType.getDimSize(0), ic = filterType.getDimSize(1);
  FoldedTaps taps(k[0], pads[0], rows);
  Value filter =
      first ? makeWeight(b, filterOp, {rows * oc, ic, k[0] + rows - 1, k[1]}, element,
                         shiftedFilter(bytes, filterType.getShape(), rows, size), rows)
            : makeWeight(b, filterOp, {rows * oc, rows * ic, taps.height(), k[1]}, element,
                         foldedFilter(bytes, filterType.getShape(), rows, pads[0], size), rows);
  Value bias;
  if (auto biasOp = conv.getBias().getDefiningOp<top::WeightOp>())
    bias = tileWeight(b, biasOp, 0, rows);
  auto newConv = cast<tpu::Conv2DOp>(b.clone(*conv));
  newConv->setLoc(kiln::derivedLoc(conv, "_row_folded", "conv"));
  newConv.getInputMutable().assign(input);
  newConv.getFilterMutable().assign(filter);
  if (bias)
    newConv.getBiasMutable().assign(bias);
  if (first) {
    newConv.setKernelShape({k[0] + rows - 1, k[1]});
    newConv.setStrides({rows, st[1]});
  } else {
    newConv.setKernelShape({taps.height(), k[1]});
    newConv.setPads({-taps.first, pads[1], taps.last, pads[3]});
  }
  newConv.getOutput().setType(foldedType(rankedType(conv.getOutput()), rows));
  return newConv;
}

Operation *foldPointwise(OpBuilder &b, Operation *op, Value from, Value to, int64_t rows) {
  SmallVector<Value> operands;
  for (OpOperand &use : op->getOpOperands()) {
    Value operand = use.get();
    auto w = operand.getDefiningOp<top::WeightOp>();
    auto type = rankedType(operand);
    if (operand == from)
      operand = to;
    else if (w && type && type.getNumElements() > 1 &&
             !lg::isWholeOperand(op, use.getOperandNumber()))
      operand = tileWeight(b, w, type.getRank() - 3, rows);
    operands.push_back(operand);
  }
  Operation *folded = b.clone(*op);
  folded->setLoc(kiln::derivedLoc(op, "_row_folded", "op"));
  folded->setOperands(operands);
  folded->getResult(0).setType(foldedType(rankedType(op->getResult(0)), rows));
  return folded;
}

uint64_t tiuCycles(ArrayRef<Operation *> ops) {
  uint64_t cycles = 0;
  for (Operation *op : ops) {
    std::optional<kiln_tiu_cmd> record = codegen::tryTiuRecord(op);
    if (!record)
      return UINT64_MAX;
    cycles += kiln_tiu_cycles(&*record);
  }
  return cycles;
}

/// Erases `ops` (users before producers) and the weights only they read.
void eraseAll(ArrayRef<Operation *> ops) {
  llvm::SetVector<Operation *> weights;
  for (Operation *op : llvm::reverse(ops)) {
    for (Value operand : op->getOperands())
      if (auto w = operand.getDefiningOp<top::WeightOp>())
        weights.insert(w);
    op->dropAllUses();
    op->erase();
  }
  for (Operation *w : weights)
    if (w->use_empty())
      w->erase();
}

/// The chain built for `rows`, ending in its unfold_rows; its ops in program
/// order (the unfold last).
SmallVector<Operation *> buildFolded(ArrayRef<Operation *> chain, int64_t rows) {
  SmallVector<Operation *> built;
  Value from, to;
  for (Operation *op : chain) {
    OpBuilder b(op);
    Operation *folded =
        built.empty() ? foldConv(b, cast<tpu::Conv2DOp>(op), cast<tpu::Conv2DOp>(op).getInput(),
                                 rows, true)
        : isa<tpu::Conv2DOp>(op) ? foldConv(b, cast<tpu::Conv2DOp>(op), to, rows, false)
                                 : foldPointwise(b, op, from, to, rows);
    built.push_back(folded);
    from = op->getResult(0);
    to = folded->getResult(0);
  }
  // Just before the first reader, so the ops between may still group.
  Operation *firstUser = nullptr;
  for (Operation *user : from.getUsers())
    if (!firstUser || user->isBeforeInBlock(firstUser))
      firstUser = user;
  OpBuilder b(firstUser);
  built.push_back(b.create<tpu::UnfoldRowsOp>(chain.back()->getLoc(), from.getType(), to,
                                              b.getI64IntegerAttr(rows)));
  return built;
}

/// Folds the chain starting at `conv` by the row count with the fewest TIU
/// cycles, if that is fewer than unfolded; returns the ops it replaced.
SmallVector<Operation *> foldChain(tpu::Conv2DOp conv) {
  if (!isFoldableConv(conv))
    return {};
  SmallVector<Operation *> chain = chainFrom(conv);
  int64_t widest = 0;
  for (Operation *op : chain)
    widest = std::max(widest, rankedType(op->getResult(0)).getDimSize(1));
  int64_t height = rankedType(conv.getOutput()).getDimSize(2);
  // Unfolding happens on the way to DDR: a result that TIU ops read, which
  // a layer group could have kept in LMEM, now makes a round trip.
  Value end = chain.back()->getResult(0);
  uint64_t roundTrip = 0;
  if (llvm::any_of(end.getUsers(), [](Operation *u) { return u->hasTrait<tpu::RunsOnTiu>(); })) {
    uint64_t bytes = tpu::tensorBytes(rankedType(end));
    roundTrip = bytes * 1000 / KILN_GDMA_MBPC_LMEM_TO_DDR + bytes * 1000 / KILN_GDMA_MBPC_DDR_TO_LMEM;
  }
  uint64_t best = tiuCycles(chain);
  if (best == UINT64_MAX || best <= roundTrip)
    return {};
  best -= roundTrip;
  int64_t bestRows = 0;
  for (int64_t rows = 2; rows * widest <= KILN_NPU_NUM; ++rows) {
    if (height % rows)
      continue;
    SmallVector<Operation *> built = buildFolded(chain, rows);
    uint64_t cycles = tiuCycles(ArrayRef<Operation *>(built).drop_back());
    eraseAll(built);
    if (cycles < best) {
      best = cycles;
      bestRows = rows;
    }
  }
  if (!bestRows)
    return {};
  SmallVector<Operation *> built = buildFolded(chain, bestRows);
  chain.back()->getResult(0).replaceAllUsesWith(built.back()->getResult(0));
  SmallVector<Operation *> replaced(chain);
  eraseAll(chain);
  return replaced;
}

struct FoldOutputRowsPass : public tpu::impl::TpuFoldOutputRowsBase<FoldOutputRowsPass> {
  void runOnOperation() override {
    SmallVector<tpu::Conv2DOp> convs;
    getOperation().walk([&](tpu::Conv2DOp conv) { convs.push_back(conv); });
    llvm::DenseSet<Operation *> erased;
    for (tpu::Conv2DOp conv : convs)
      if (!erased.contains(conv))
        for (Operation *op : foldChain(conv))
          erased.insert(op);
  }
};
} // namespace
