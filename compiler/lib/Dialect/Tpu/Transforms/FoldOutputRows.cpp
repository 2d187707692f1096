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
//   - from an RGB stem whose kernel rows are already channels (a
//     tpu.fold_rows, tpu-fold-stem-rows), the fold takes the rows of R
//     passes at once: kernel KH + (R - 1) * S rows, stride R * S. For a 3x3
//     stem and R = 4 the loads read each input row 1.5 times instead of 3;
//   - from an input folded the same way (the previous conv of the chain), a
//     conv over the R * C folded channels whose taps pick, for each block and
//     kernel row, the block and folded row holding that input row; a conv of
//     H stride S computes R / S rows per pass;
//   - pointwise ops in between run on the folded tensor as they are, with
//     per-channel operands repeated per block.
// The chain goes on through the one reader of each result that can run
// folded. Every other reader, and the readers of the chain's last result,
// read it through a tpu.unfold_rows: the layer group computing it stores
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
#include "kiln/LayerGroup/GroupSearch.h"
#include "kiln/LayerGroup/Slicing.h"
#include "kiln/Support/Names.h"
#include "kiln/abi/cost.h"
#include "mlir/Dialect/Quant/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

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
  auto weight = b.create<top::WeightOp>(kiln::derivedLoc(like, "_row_folded", "weight"),
                                        RankedTensorType::get(shape, repeatedElement(like, rows)),
                                        data);
  // The roofline's minimum DDR bytes count the weight the model has.
  weight->setAttr(tpu::TpuDialect::modelBytesAttrName(),
                  b.getI64IntegerAttr(tpu::tensorBytes(cast<RankedTensorType>(like.getType()))));
  return weight;
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

/// Constant filter and bias (or none) of a plain or quantized dtype, the
/// filter's 0 being the value 0.
bool hasFoldableWeights(Operation *op) {
  auto filter = op->getOperand(1).getDefiningOp<top::WeightOp>();
  if (!filter || !weightData(filter) || !zeroIsZero(filter))
    return false;
  Value bias = op->getOperand(2);
  if (isa<NoneType>(bias.getType()))
    return true;
  auto biasOp = bias.getDefiningOp<top::WeightOp>();
  return biasOp && weightData(biasOp);
}

/// Where kernel rows land between rows folded by inRows and R = inRows * S.
/// A deconv of H stride S: input block b's row i, kernel row ky, writes
/// output row S*(inRows*i + b) + ky - pad, which is block t - R*d of folded
/// row i + d, t = S*b + ky - pad, d = floor(t / R). A conv reading folded
/// rows is the case S = 1 read the other way: output block r, kernel row k
/// reads block t - R*d of folded row i + d, t = r - pad + k. Either way the
/// folded op has H stride 1, kernel rows for d in [first, last] and pads
/// -first and last.
struct FoldedTaps {
  int64_t first = 0, last = 0;
  FoldedTaps(int64_t kh, int64_t stride, int64_t pad, int64_t inRows) {
    int64_t rows = inRows * stride;
    first = floorDiv(-pad, rows);
    last = floorDiv(stride * (inRows - 1) + kh - 1 - pad, rows);
  }
  int64_t height() const { return last - first + 1; }
};

/// A deconv that computes whole folded rows: every output row of the
/// result's height S*H is written, and the folded kernel needs no negative
/// padding.
bool isFoldableDeconv(tpu::Deconv2DOp deconv) {
  auto in = rankedType(deconv.getInput()), out = rankedType(deconv.getOutput());
  if (!in || !out || in.getRank() != 4 || !in.hasStaticShape() || !out.hasStaticShape())
    return false;
  ArrayRef<int64_t> k = deconv.getKernelShape(), st = deconv.getStrides(),
                    pads = deconv.getPads();
  FoldedTaps taps(k[0], st[0], pads[0], 1);
  return deconv.getGroup() == 1 && st[0] > 1 && deconv.getDilations()[0] == 1 &&
         out.getDimSize(2) == in.getDimSize(2) * st[0] && taps.first <= 0 && taps.last >= 0 &&
         hasFoldableWeights(deconv);
}

/// A conv this pass can fold: one group, undilated in H, a constant filter
/// and bias of a plain or quantized dtype, and one-row steps in H unless
/// `anyStride` (a conv inside a chain, foldFactors).
bool isFoldableConv(tpu::Conv2DOp conv, bool anyStride = false) {
  auto in = rankedType(conv.getInput()), out = rankedType(conv.getOutput());
  if (!in || !out || in.getRank() != 4 || !in.hasStaticShape() || !out.hasStaticShape() ||
      conv.getGroup() != 1 || (!anyStride && conv.getStrides()[0] != 1) ||
      conv.getDilations()[0] != 1)
    return false;
  return hasFoldableWeights(conv);
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

/// A conv of the chain reading the folded result of the previous one: its
/// output has the input's height divided by its H stride (which must divide
/// the rows folded, foldFactors).
bool isFoldableInnerConv(Operation *op, Value v) {
  auto conv = dyn_cast<tpu::Conv2DOp>(op);
  return conv && conv.getInput() == v && isFoldableConv(conv, /*anyStride=*/true) &&
         rankedType(conv.getOutput()).getDimSize(2) * conv.getStrides()[0] ==
             rankedType(v).getDimSize(2);
}

/// The ops folded with `first`: it, then the one user of each result that
/// can run folded (its other users read it unfolded, from DDR).
SmallVector<Operation *> chainFrom(Operation *first) {
  SmallVector<Operation *> chain{first};
  Value v = first->getResult(0);
  while (true) {
    Operation *next = nullptr;
    bool several = false;
    for (Operation *user : v.getUsers()) {
      auto deconv = dyn_cast<tpu::Deconv2DOp>(user);
      if (!isFoldableInnerConv(user, v) && !isFoldablePointwise(user, v) &&
          !(deconv && deconv.getInput() == v && isFoldableDeconv(deconv)))
        continue;
      several |= next && next != user;
      next = user;
    }
    if (!next || several)
      break;
    chain.push_back(next);
    v = next->getResult(0);
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

/// For a conv of H stride S on input rows folded by R (output rows folded
/// by R / S): W'[r*O + o, r'*I + i, dy - first, x] = W[o, i, k, x] where
/// R*dy + r' = S*r - pad + k.
std::vector<uint8_t> foldedFilter(const std::vector<uint8_t> &w, ArrayRef<int64_t> shape,
                                  int64_t rows, int64_t stride, int64_t pad, size_t bytes) {
  int64_t oc = shape[0], ic = shape[1], kh = shape[2], kw = shape[3], outRows = rows / stride;
  FoldedTaps taps(kh, stride, pad, outRows);
  int64_t tall = taps.height();
  std::vector<uint8_t> out(outRows * oc * rows * ic * tall * kw * bytes, 0);
  for (int64_t r = 0; r < outRows; ++r)
    for (int64_t k = 0; k < kh; ++k) {
      int64_t t = stride * r - pad + k, dy = floorDiv(t, rows), block = t - rows * dy;
      for (int64_t o = 0; o < oc; ++o)
        for (int64_t i = 0; i < ic; ++i)
          std::memcpy(
              &out[((((r * oc + o) * rows + block) * ic + i) * tall + dy - taps.first) * kw *
                   bytes],
              &w[(((o * ic + i) * kh + k) * kw) * bytes], kw * bytes);
    }
  return out;
}

/// A stem conv's folded input (tpu-fold-stem-rows): the fold_rows its one-row
/// kernel reads, directly or through a cast (a null fold: the conv is no
/// such stem).
struct StemRows {
  tpu::FoldRowsOp fold;
  tpu::CastOp cast; ///< null if the conv reads the fold directly
  int64_t kernelH = 0, strideH = 0, channels = 0; ///< the fold's, and its input's channels
  /// Input rows a pass of `rows` output rows reads: the fold's kernel rows
  /// then `stride` more per extra output row.
  int64_t kernelRows(int64_t rows) const { return kernelH + (rows - 1) * strideH; }
};

StemRows stemRowsOf(tpu::Conv2DOp conv) {
  Value in = conv.getInput();
  auto cast = in.getDefiningOp<tpu::CastOp>();
  if (cast)
    in = cast.getInput();
  auto fold = in.getDefiningOp<tpu::FoldRowsOp>();
  ArrayRef<int64_t> pads = conv.getPads();
  // Consecutive kernel rows: the rows of R passes overlap into one window.
  if (!fold || conv.getKernelShape()[0] != 1 || pads[0] != 0 || pads[2] != 0 ||
      fold.getDilationH() != 1 || fold.getStrideH() > fold.getKernelH())
    return {};
  return {fold, cast, int64_t(fold.getKernelH()), int64_t(fold.getStrideH()),
          rankedType(fold.getInput()).getDimSize(1)};
}

/// A clone of the conv or deconv `op` reading `input` through `filter`, its
/// bias (or requant table) repeated per row block, its result folded.
template <typename OpTy>
OpTy cloneFolded(OpBuilder &b, OpTy op, Value input, Value filter, int64_t rows) {
  Value bias = op.getBias();
  if (auto biasOp = bias.getDefiningOp<top::WeightOp>())
    bias = tileWeight(b, biasOp, 0, rows);
  auto folded = cast<OpTy>(b.clone(*op));
  folded->setLoc(kiln::derivedLoc(op, "_row_folded", "conv"));
  folded->setOperands({input, filter, bias});
  folded.getOutput().setType(foldedType(rankedType(op.getOutput()), rows));
  return folded;
}

/// A stem's conv computing `rows` rows per pass: its fold_rows gets the
/// kernel rows of a pass, stride `rows` times the conv's, and block r's
/// filter reads them shifted by r strides:
///   W'[r*O + o, (r*s + ky)*C + c, 0, x] = W[o, ky*C + c, 0, x].
/// The new fold (and cast) go to `prelude`.
Operation *foldStemConv(OpBuilder &b, tpu::Conv2DOp conv, StemRows stem, int64_t rows,
                        SmallVectorImpl<Operation *> &prelude) {
  auto filterOp = conv.getFilter().getDefiningOp<top::WeightOp>();
  auto filterType = cast<RankedTensorType>(filterOp.getType());
  auto [bytes, element] = *weightData(filterOp);
  size_t size = bytes.size() / filterType.getNumElements();
  int64_t oc = filterType.getDimSize(0), kh = stem.kernelH, c = stem.channels,
          kw = filterType.getDimSize(3), s = stem.strideH, tall = stem.kernelRows(rows);
  auto foldType = rankedType(stem.fold.getOutput());
  auto rowsType = foldType.clone({foldType.getDimSize(0), tall * c, foldType.getDimSize(2) / rows,
                                  foldType.getDimSize(3)});
  Value input = b.create<tpu::FoldRowsOp>(
      stem.fold.getLoc(), rowsType, stem.fold.getInput(), b.getI64IntegerAttr(tall),
      b.getI64IntegerAttr(s * rows), b.getI64IntegerAttr(1), stem.fold.getPadTopAttr());
  prelude.push_back(input.getDefiningOp());
  if (stem.cast) {
    Operation *cast = b.clone(*stem.cast);
    cast->setOperand(0, input);
    cast->getResult(0).setType(
        rowsType.clone(rankedType(stem.cast.getOutput()).getElementType()));
    prelude.push_back(cast);
    input = cast->getResult(0);
  }
  std::vector<uint8_t> folded(rows * oc * tall * c * kw * size, 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t ky = 0; ky < kh; ++ky)
        std::memcpy(&folded[(((r * oc + o) * tall + r * s + ky) * c) * kw * size],
                    &bytes[((o * kh + ky) * c) * kw * size], c * kw * size);
  Value filter = makeWeight(b, filterOp, {rows * oc, tall * c, 1, kw}, element, folded, rows);
  return cloneFolded(b, conv, input, filter, rows);
}

/// The conv computing `rows` rows per pass from input rows folded by
/// `inRows` (1: unfolded, the chain's first conv).
Operation *foldConv(OpBuilder &b, tpu::Conv2DOp conv, Value input, int64_t inRows, int64_t rows,
                    SmallVectorImpl<Operation *> &prelude) {
  if (inRows == 1)
    if (StemRows stem = stemRowsOf(conv); stem.fold)
      return foldStemConv(b, conv, stem, rows, prelude);
  auto filterOp = conv.getFilter().getDefiningOp<top::WeightOp>();
  auto filterType = cast<RankedTensorType>(filterOp.getType());
  auto [bytes, element] = *weightData(filterOp);
  size_t size = bytes.size() / filterType.getNumElements();
  ArrayRef<int64_t> k = conv.getKernelShape(), st = conv.getStrides(), pads = conv.getPads();
  int64_t oc = filterType.getDimSize(0), ic = filterType.getDimSize(1);
  FoldedTaps taps(k[0], st[0], pads[0], rows);
  Value filter =
      inRows == 1
          ? makeWeight(b, filterOp, {rows * oc, ic, k[0] + rows - 1, k[1]}, element,
                       shiftedFilter(bytes, filterType.getShape(), rows, size), rows)
          : makeWeight(b, filterOp, {rows * oc, inRows * ic, taps.height(), k[1]}, element,
                       foldedFilter(bytes, filterType.getShape(), inRows, st[0], pads[0], size),
                       rows);
  auto newConv = cloneFolded(b, conv, input, filter, rows);
  if (inRows == 1) {
    newConv.setKernelShape({k[0] + rows - 1, k[1]});
    newConv.setStrides({rows, st[1]});
  } else {
    newConv.setKernelShape({taps.height(), k[1]});
    newConv.setStrides({1, st[1]});
    newConv.setPads({-taps.first, pads[1], taps.last, pads[3]});
  }
  return newConv;
}

/// The deconv on input rows folded by `inRows` (1: unfolded) and output
/// rows folded by inRows * S (FoldedTaps): a deconv with H stride 1 whose
/// filter W'[block*O + o, b*C + c, d - first, x] = W[o, c, ky, x].
Operation *foldDeconv(OpBuilder &b, tpu::Deconv2DOp deconv, Value input, int64_t inRows) {
  auto filterOp = deconv.getFilter().getDefiningOp<top::WeightOp>();
  auto filterType = cast<RankedTensorType>(filterOp.getType());
  auto [bytes, element] = *weightData(filterOp);
  size_t size = bytes.size() / filterType.getNumElements();
  ArrayRef<int64_t> k = deconv.getKernelShape(), st = deconv.getStrides(),
                    pads = deconv.getPads(), dil = deconv.getDilations();
  int64_t oc = filterType.getDimSize(0), ic = filterType.getDimSize(1),
          kh = filterType.getDimSize(2), kw = filterType.getDimSize(3), rows = inRows * st[0];
  FoldedTaps taps(kh, st[0], pads[0], inRows);
  int64_t tall = taps.height();
  std::vector<uint8_t> folded(rows * oc * inRows * ic * tall * kw * size, 0);
  for (int64_t blk = 0; blk < inRows; ++blk)
    for (int64_t ky = 0; ky < kh; ++ky) {
      int64_t t = st[0] * blk + ky - pads[0], d = floorDiv(t, rows), out = t - rows * d;
      for (int64_t o = 0; o < oc; ++o)
        for (int64_t i = 0; i < ic; ++i)
          std::memcpy(&folded[(((((out * oc + o) * inRows + blk) * ic + i) * tall) + d -
                               taps.first) *
                              kw * size],
                      &bytes[(((o * ic + i) * kh + ky) * kw) * size], kw * size);
    }
  Value filter =
      makeWeight(b, filterOp, {rows * oc, inRows * ic, tall, kw}, element, folded, rows);
  auto newDeconv = cloneFolded(b, deconv, input, filter, rows);
  newDeconv.setKernelShape({tall, k[1]});
  newDeconv.setStrides({1, st[1]});
  newDeconv.setPads({-taps.first, pads[1], taps.last, pads[3]});
  newDeconv.setDilations({1, dil[1]});
  return newDeconv;
}

/// The rows each op of the chain computes per pass when the first one
/// computes `rows`: a deconv multiplies them by its H stride, a conv divides
/// them by its own (0 from a conv whose stride does not divide them on).
SmallVector<int64_t> foldFactors(ArrayRef<Operation *> chain, int64_t rows) {
  SmallVector<int64_t> factors;
  for (auto [i, op] : llvm::enumerate(chain)) {
    if (i > 0) {
      if (auto deconv = dyn_cast<tpu::Deconv2DOp>(op))
        rows *= deconv.getStrides()[0];
      else if (auto conv = dyn_cast<tpu::Conv2DOp>(op))
        rows = rows % conv.getStrides()[0] ? 0 : rows / conv.getStrides()[0];
    }
    factors.push_back(rows);
  }
  return factors;
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

/// Row counts per chain costed by the group search (compile time).
constexpr size_t kRowCountsCosted = 3;

/// TIU cycles of the TIU ops among `ops`.
uint64_t tiuCycles(ArrayRef<Operation *> ops) {
  SmallVector<Operation *> tiu;
  for (Operation *op : ops)
    if (op->hasTrait<tpu::RunsOnTiu>())
      tiu.push_back(op);
  std::optional<std::vector<kiln_tiu_cmd>> records = codegen::tryTiuRecords(tiu);
  if (!records)
    return UINT64_MAX;
  uint64_t cycles = 0;
  for (const kiln_tiu_cmd &record : *records)
    cycles += kiln_tiu_cycles(&record);
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

/// A chain built folded, beside the original until committed.
struct FoldedChain {
  SmallVector<Operation *> prelude; ///< a stem's new fold_rows and cast
  SmallVector<Operation *> ops;     ///< the chain's ops, folded
  /// Each chain result read outside the chain, and the unfold_rows those
  /// readers get instead.
  SmallVector<std::pair<Value, Operation *>> unfolds;

  /// Every op built, producers first.
  SmallVector<Operation *> all() const {
    SmallVector<Operation *> built(prelude);
    built.append(ops.begin(), ops.end());
    for (auto [value, unfold] : unfolds)
      built.push_back(unfold);
    return built;
  }

  /// The readers outside `chain` read the unfolded results.
  void redirect(ArrayRef<Operation *> chain) {
    llvm::SmallPtrSet<Operation *, 8> inside(chain.begin(), chain.end());
    for (auto [value, unfold] : unfolds)
      value.replaceUsesWithIf(unfold->getResult(0),
                              [&](OpOperand &use) { return !inside.contains(use.getOwner()); });
  }

  /// Undoes redirect and erases what was built.
  void discard() {
    for (auto [value, unfold] : unfolds)
      unfold->getResult(0).replaceAllUsesWith(value);
    eraseAll(all());
  }
};

/// The chain's ops (the first ends a stem, stemRowsOf, whose ops go to the
/// prelude) folded for `rows`, each result read outside the chain unfolded
/// just before its first such reader.
FoldedChain buildFolded(ArrayRef<Operation *> chain, int64_t rows) {
  FoldedChain built;
  SmallVector<int64_t> factors = foldFactors(chain, rows);
  llvm::SmallPtrSet<Operation *, 8> inside(chain.begin(), chain.end());
  Value from, to;
  int64_t inRows = 1;
  for (auto [op, factor] : llvm::zip(chain, factors)) {
    OpBuilder b(op);
    Operation *folded;
    if (auto deconv = dyn_cast<tpu::Deconv2DOp>(op))
      folded = built.ops.empty() ? foldDeconv(b, deconv, deconv.getInput(), 1)
                                 : foldDeconv(b, deconv, to, inRows);
    else if (auto conv = dyn_cast<tpu::Conv2DOp>(op))
      folded = foldConv(b, conv, built.ops.empty() ? conv.getInput() : to, inRows, factor,
                        built.prelude);
    else
      folded = foldPointwise(b, op, from, to, factor);
    folded->setAttr(tpu::TpuDialect::foldedRowsAttrName(), b.getI64IntegerAttr(factor));
    if (isa<tpu::Conv2DOp, tpu::Deconv2DOp>(op))
      folded->setAttr(tpu::TpuDialect::modelMacsAttrName(),
                      b.getI64IntegerAttr(tpu::modelMacs(op)));
    built.ops.push_back(folded);
    from = op->getResult(0);
    to = folded->getResult(0);
    inRows = factor;
    // Just before the first reader outside the chain, so the ops between
    // may still group.
    Operation *firstUser = nullptr;
    for (Operation *user : from.getUsers())
      if (!inside.contains(user) && (!firstUser || user->isBeforeInBlock(firstUser)))
        firstUser = user;
    if (!firstUser)
      continue;
    OpBuilder at(firstUser);
    built.unfolds.push_back({from, at.create<tpu::UnfoldRowsOp>(op->getLoc(), from.getType(), to,
                                                                at.getI64IntegerAttr(factor))});
  }
  return built;
}

/// Modelled cycles of the layer groups the group search would form from the
/// runs of TIU ops holding any of `ops`; nullopt if a run cannot be grouped.
std::optional<uint64_t> groupedCycles(Block &block, ArrayRef<Operation *> ops,
                                      unsigned maxGroupOps) {
  // A trial may not fit; the real search reports what does not.
  ScopedDiagnosticHandler quiet(block.getParentOp()->getContext(),
                                [](Diagnostic &) { return success(); });
  auto records = [](ArrayRef<Operation *> run) { return codegen::tryTiuRecords(run); };
  llvm::SmallPtrSet<Operation *, 8> wanted(ops.begin(), ops.end());
  uint64_t cycles = 0;
  for (ArrayRef<Operation *> run : lg::tiuRuns(block)) {
    // The ops within a group's reach of the wanted ones: farther groups are
    // the same either way.
    size_t lo = run.size(), hi = 0;
    for (auto [i, op] : llvm::enumerate(run))
      if (wanted.contains(op)) {
        lo = std::min(lo, i);
        hi = i + 1;
      }
    if (lo >= hi)
      continue;
    lo = lo > maxGroupOps ? lo - maxGroupOps : 0;
    hi = std::min<size_t>(run.size(), hi + maxGroupOps);
    // With and without LMEM reuse: the layer-group pass keeps the faster.
    FailureOr<lg::GroupSplits> groups =
        lg::searchGroups(run.slice(lo, hi - lo), maxGroupOps, records);
    if (failed(groups))
      return std::nullopt;
    uint64_t fixed = 0, reuse = 0;
    for (const lg::GroupChoice &group : groups->fixed)
      fixed += group.cycles;
    for (const lg::GroupChoice &group : groups->reuse)
      reuse += group.cycles;
    cycles += std::min(fixed, reuse);
  }
  return cycles;
}

/// `ops` and their readers: what folding regroups.
SmallVector<Operation *> touchedBy(ArrayRef<Operation *> ops) {
  llvm::SetVector<Operation *> touched(ops.begin(), ops.end());
  for (Operation *op : ops)
    for (Operation *user : op->getUsers())
      touched.insert(user);
  return touched.takeVector();
}

/// Folds the chain starting at `first` by the row count with the fewest TIU
/// cycles, if the layer groups formed around it then run faster; returns the
/// ops it replaced.
SmallVector<Operation *> foldChain(Operation *first, unsigned maxGroupOps) {
  auto deconv = dyn_cast<tpu::Deconv2DOp>(first);
  auto conv = dyn_cast<tpu::Conv2DOp>(first);
  if (deconv ? !isFoldableDeconv(deconv) : !conv || !isFoldableConv(conv))
    return {};
  SmallVector<Operation *> longest = chainFrom(first);
  int64_t height = rankedType(first->getResult(0)).getDimSize(2);
  // A deconv folds by its stride, a conv by any R that divides the rows.
  int64_t minRows = deconv ? deconv.getStrides()[0] : 2;
  int64_t maxRows = deconv ? minRows : KILN_NPU_NUM;
  // The ops folded by `rows`: the chain while each computes two rows or
  // more per pass and their folded channels fit the lanes.
  auto chainFor = [&](int64_t rows) {
    ArrayRef<Operation *> ops = longest;
    SmallVector<int64_t> factors = foldFactors(ops, rows);
    size_t n = 0;
    while (n < ops.size() && factors[n] >= 2 &&
           factors[n] * rankedType(ops[n]->getResult(0)).getDimSize(1) <= KILN_NPU_NUM)
      ++n;
    return SmallVector<Operation *>(ops.take_front(n));
  };
  // A stem's cast is part of its TIU work, folded or not.
  StemRows stem = conv ? stemRowsOf(conv) : StemRows();
  auto withStemCast = [&](ArrayRef<Operation *> ops) {
    SmallVector<Operation *> all;
    if (stem.cast)
      all.push_back(stem.cast);
    all.append(ops.begin(), ops.end());
    return all;
  };
  // Row counts that save TIU cycles, most saved first.
  SmallVector<std::pair<uint64_t, int64_t>> saving;
  for (int64_t rows = minRows; rows <= maxRows; ++rows) {
    SmallVector<Operation *> ops = chainFor(rows);
    if (ops.empty())
      break;
    // A stem's folded rows must still fit the lanes its loads fill.
    if (height % rows || (stem.fold && stem.kernelRows(rows) * stem.channels > KILN_NPU_NUM))
      continue;
    uint64_t unfolded = tiuCycles(withStemCast(ops));
    FoldedChain built = buildFolded(ops, rows);
    SmallVector<Operation *> foldedOps(built.prelude);
    foldedOps.append(built.ops.begin(), built.ops.end());
    uint64_t cycles = tiuCycles(foldedOps);
    built.discard();
    if (unfolded != UINT64_MAX && cycles < unfolded)
      saving.push_back({unfolded - cycles, rows});
  }
  llvm::sort(saving, [](auto a, auto b) { return a.first > b.first; });
  // Fewer TIU cycles may still cost more: unfolding happens on the way to
  // DDR, so a result that a layer group could have kept in LMEM makes a
  // round trip, each row block is a store command of its own, and the
  // groups around the chain change. The few most promising row counts are
  // costed as the group search would group them.
  Block &block = *first->getBlock();
  uint64_t bestGain = 0;
  int64_t bestRows = 0;
  for (auto [saved, rows] : ArrayRef(saving).take_front(kRowCountsCosted)) {
    SmallVector<Operation *> chain = chainFor(rows);
    std::optional<uint64_t> before =
        groupedCycles(block, touchedBy(withStemCast(chain)), maxGroupOps);
    FoldedChain built = buildFolded(chain, rows);
    built.redirect(chain);
    std::optional<uint64_t> after = groupedCycles(block, touchedBy(built.all()), maxGroupOps);
    built.discard();
    if (before && after && *after < *before && *before - *after > bestGain) {
      bestGain = *before - *after;
      bestRows = rows;
    }
  }
  if (!bestRows)
    return {};
  SmallVector<Operation *> chain = chainFor(bestRows);
  FoldedChain built = buildFolded(chain, bestRows);
  built.redirect(chain);
  SmallVector<Operation *> replaced(chain);
  eraseAll(chain);
  // The stem's old fold and cast, if nothing else reads them.
  if (stem.cast && stem.cast->use_empty())
    stem.cast->erase();
  if (stem.fold && stem.fold->use_empty())
    stem.fold->erase();
  return replaced;
}

struct FoldOutputRowsPass : public tpu::impl::TpuFoldOutputRowsBase<FoldOutputRowsPass> {
  using TpuFoldOutputRowsBase::TpuFoldOutputRowsBase;

  void runOnOperation() override {
    SmallVector<Operation *> starts;
    getOperation().walk([&](Operation *op) {
      if (isa<tpu::Conv2DOp, tpu::Deconv2DOp>(op))
        starts.push_back(op);
    });
    llvm::DenseSet<Operation *> erased;
    for (Operation *start : starts)
      if (!erased.contains(start))
        for (Operation *op : foldChain(start, std::max(1u, unsigned(maxGroupOps))))
          erased.insert(op);
  }
};
} // namespace
