//===- ImportNN.cpp - Convolutions, pooling, matmul, normalization --------===//
//
// 1-D convolutions and pools run as 2-D ones with H = 1: the input (and a
// conv's filter) is reshaped to 4-D and the result reshaped back.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "kiln/Support/Precision.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln::onnx_frontend {

/// Explicit [begin, end] pads for ONNX auto_pad SAME_UPPER/SAME_LOWER: the
/// output covers ceil(in / stride) windows and the odd pad goes at the end
/// (UPPER) or the beginning (LOWER).
static std::pair<int64_t, int64_t> samePads(int64_t in, int64_t kernel,
                                            int64_t stride, int64_t dilation,
                                            bool upper) {
  int64_t out = (in + stride - 1) / stride;
  int64_t total = std::max<int64_t>(0, (out - 1) * stride +
                                           (kernel - 1) * dilation + 1 - in);
  int64_t small = total / 2, large = total - small;
  return upper ? std::make_pair(small, large) : std::make_pair(large, small);
}

/// Prepends H = 1 to 1-D window attributes; pads become [0, b, 0, e].
static void to2D(SmallVector<int64_t> &kernel, SmallVector<int64_t> &strides,
                 SmallVector<int64_t> &dilations, SmallVector<int64_t> &pads) {
  if (kernel.size() != 1)
    return;
  kernel.insert(kernel.begin(), 1);
  strides.insert(strides.begin(), 1);
  dilations.insert(dilations.begin(), 1);
  pads = {0, pads[0], 0, pads[1]};
}

FailureOr<Importer::Window> Importer::readWindow(const Node &node,
                                                 ArrayRef<int64_t> spatial,
                                                 ArrayRef<int64_t> kernelDflt) {
  size_t rank = spatial.size();
  Window w;
  w.kernel = getInts(node, "kernel_shape", kernelDflt);
  w.strides = getInts(node, "strides", SmallVector<int64_t>(rank, 1));
  w.dilations = getInts(node, "dilations", SmallVector<int64_t>(rank, 1));
  w.pads = getInts(node, "pads", SmallVector<int64_t>(2 * rank, 0));
  if (w.kernel.size() != rank || w.strides.size() != rank ||
      w.dilations.size() != rank || w.pads.size() != 2 * rank)
    return nodeError(node) << "expects " << rank << " kernel_shape, strides "
                           << "and dilations entries and " << 2 * rank
                           << " pads for input spatial shape "
                           << shapeStr(spatial);
  if (llvm::any_of(w.strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(w.dilations, [](int64_t d) { return d < 1; }) ||
      llvm::any_of(w.kernel, [](int64_t k) { return k < 1; }))
    return nodeError(node) << "kernel_shape, strides and dilations must be "
                           << "positive";
  const OnnxAttr *autoPad = node.attr("auto_pad");
  StringRef mode = autoPad ? StringRef(autoPad->s) : "NOTSET";
  if (mode == "VALID") {
    w.pads.assign(2 * rank, 0);
  } else if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
    for (size_t i = 0; i < rank; ++i)
      std::tie(w.pads[i], w.pads[i + rank]) =
          samePads(spatial[i], w.kernel[i], w.strides[i], w.dilations[i],
                   mode == "SAME_UPPER");
  } else if (mode != "NOTSET") {
    return unsupportedAttr(node, *autoPad);
  }
  to2D(w.kernel, w.strides, w.dilations, w.pads);
  return w;
}

/// [n, c, w] -> [n, c, 1, w] for a 1-D op (unchanged when already 4-D).
static SmallVector<int64_t> with2DSpatial(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> out(shape.begin(), shape.end());
  if (out.size() == 3)
    out.insert(out.begin() + 2, 1);
  return out;
}

/// Rejects 3-D and other ranks than 1-D and 2-D with the error format for
/// attributes (the window's extent is what kiln does not take).
static bool isSupportedSpatialRank(size_t rank) {
  return rank == 3 || rank == 4;
}

static std::string spatialOf(ArrayRef<int64_t> filter) {
  return shapeStr(filter.size() > 2 ? filter.drop_front(2) : filter);
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// Conv and ConvTranspose: X, W and the optional bias (top.none if absent).
LogicalResult Importer::convOperands(const Node &node, Value &input,
                                     Value &filter, Value &bias) {
  input = operand(node, 0);
  filter = input ? operand(node, 1) : Value();
  if (!filter)
    return failure();
  bias = hasInput(node, 2) ? operand(node, 2) : none();
  return success(bias != nullptr);
}

LogicalResult Importer::importConv(const Node &node) {
  Value input, filter, bias;
  if (failed(convOperands(node, input, filter, bias)))
    return failure();
  auto in = cast<RankedTensorType>(input.getType()).getShape();
  auto w = cast<RankedTensorType>(filter.getType()).getShape();
  if (!isSupportedSpatialRank(in.size()) || w.size() != in.size())
    return unsupportedAttr(node, "kernel_shape", spatialOf(w),
                           "(only 1-D and 2-D convolution, input " +
                               shapeStr(in) + ")");
  FailureOr<Window> win = readWindow(node, in.drop_front(2), w.drop_front(2));
  if (failed(win))
    return failure();
  SmallVector<int64_t> filter4 = with2DSpatial(w);
  if (ArrayRef<int64_t>(win->kernel) !=
      ArrayRef<int64_t>(filter4).drop_front(2))
    return nodeError(node) << "kernel_shape " << shapeStr(win->kernel)
                           << " does not match the filter " << shapeStr(w);
  int64_t group = getInt(node, "group", 1);
  bool is1D = in.size() == 3;
  Value input4 =
      reshape(node, subLoc(node, "input_2d"), input, with2DSpatial(in));
  Value filter4d = reshape(node, subLoc(node, "filter_2d"), filter, filter4);
  if (!input4 || !filter4d)
    return failure();
  Value conv = create<top::ConvOp>(
      node, is1D ? subLoc(node, "2d") : nodeLoc(node), input4, filter4d, bias,
      win->kernel, win->strides, win->pads, win->dilations, uint64_t(group));
  if (!conv || !is1D)
    return setValue(node, 0, conv);
  auto out = cast<RankedTensorType>(conv.getType()).getShape();
  return setValue(node, 0,
                  reshape(node, nodeLoc(node), conv, {out[0], out[1], out[3]}));
}

LogicalResult Importer::importConvTranspose(const Node &node) {
  Value input, filter, bias;
  if (failed(convOperands(node, input, filter, bias)))
    return failure();
  auto in = cast<RankedTensorType>(input.getType()).getShape();
  auto w = cast<RankedTensorType>(filter.getType()).getShape();
  if (!isSupportedSpatialRank(in.size()) || w.size() != in.size())
    return unsupportedAttr(node, "kernel_shape", spatialOf(w),
                           "(only 1-D and 2-D transposed convolution, input " +
                               shapeStr(in) + ")");
  size_t rank = in.size() - 2;
  ArrayRef<int64_t> spatial = in.drop_front(2);
  SmallVector<int64_t> kernel = getInts(node, "kernel_shape", w.drop_front(2));
  SmallVector<int64_t> strides =
      getInts(node, "strides", SmallVector<int64_t>(rank, 1));
  SmallVector<int64_t> dilations =
      getInts(node, "dilations", SmallVector<int64_t>(rank, 1));
  SmallVector<int64_t> outPad =
      getInts(node, "output_padding", SmallVector<int64_t>(rank, 0));
  SmallVector<int64_t> pads =
      getInts(node, "pads", SmallVector<int64_t>(2 * rank, 0));
  SmallVector<int64_t> outShape = getInts(node, "output_shape", {});
  if (kernel.size() != rank || strides.size() != rank ||
      dilations.size() != rank || outPad.size() != rank ||
      pads.size() != 2 * rank)
    return nodeError(node) << "window attributes do not match input "
                           << shapeStr(in);
  if (ArrayRef<int64_t>(kernel) != w.drop_front(2))
    return nodeError(node) << "kernel_shape " << shapeStr(kernel)
                           << " does not match the filter " << shapeStr(w);
  // output_shape may include N and C.
  if (outShape.size() == rank + 2)
    outShape.erase(outShape.begin(), outShape.begin() + 2);
  if (!outShape.empty() && outShape.size() != rank)
    return unsupportedAttr(node, *node.attr("output_shape"));

  std::string autoPad = getString(node, "auto_pad", "NOTSET");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (!same && autoPad != "NOTSET" && autoPad != "VALID")
    return unsupportedAttr(node, *node.attr("auto_pad"));
  if (autoPad == "VALID")
    pads.assign(2 * rank, 0);
  // A requested output size (output_shape, or in * stride for SAME) sets the
  // pads: the total trimmed from the full result, split as the spec says.
  // When the request is larger than the full result, the extra rows are
  // output padding (they only get the bias), as ONNX Runtime does.
  if (!outShape.empty() || same) {
    for (size_t i = 0; i < rank; ++i) {
      int64_t full = strides[i] * (spatial[i] - 1) + outPad[i] +
                     (kernel[i] - 1) * dilations[i] + 1;
      int64_t target = outShape.empty() ? spatial[i] * strides[i] : outShape[i];
      int64_t total = full - target;
      if (total < 0) {
        pads[i] = pads[i + rank] = 0;
        outPad[i] -= total;
        continue;
      }
      bool upper = autoPad == "SAME_UPPER";
      pads[i] = upper ? total / 2 : total - total / 2;
      pads[i + rank] = total - pads[i];
    }
  }
  to2D(kernel, strides, dilations, pads);
  if (outPad.size() == 1)
    outPad.insert(outPad.begin(), 0);
  int64_t group = getInt(node, "group", 1);
  bool is1D = rank == 1;
  Value input4 =
      reshape(node, subLoc(node, "input_2d"), input, with2DSpatial(in));
  Value filter4 =
      reshape(node, subLoc(node, "filter_2d"), filter, with2DSpatial(w));
  if (!input4 || !filter4)
    return failure();
  Value deconv = create<top::DeconvOp>(
      node, is1D ? subLoc(node, "2d") : nodeLoc(node), input4, filter4, bias,
      kernel, strides, pads, dilations, outPad, uint64_t(group),
      /*filter_reordered=*/false, /*do_relu=*/false);
  if (!deconv || !is1D)
    return setValue(node, 0, deconv);
  auto out = cast<RankedTensorType>(deconv.getType()).getShape();
  return setValue(
      node, 0, reshape(node, nodeLoc(node), deconv, {out[0], out[1], out[3]}));
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

LogicalResult Importer::importPool(const Node &node) {
  bool isMax = node.opType == "MaxPool";
  if (isMax) {
    if (const OnnxAttr *order = node.attr("storage_order"))
      if (order->i != 0)
        return unsupportedAttr(node, *order);
    if (hasOutput(node, 1))
      return nodeError(node) << "the Indices output is not supported";
  }
  if (const OnnxAttr *d = node.attr("dilations"))
    if (llvm::any_of(d->ints, [](int64_t v) { return v != 1; }))
      return unsupportedAttr(node, *d);
  Value input = operand(node, 0);
  if (!input)
    return failure();
  auto in = cast<RankedTensorType>(input.getType()).getShape();
  if (!isSupportedSpatialRank(in.size()))
    return unsupportedAttr(
        node, "kernel_shape", shapeStr(getInts(node, "kernel_shape", {})),
        "(only 1-D and 2-D pooling, input " + shapeStr(in) + ")");
  FailureOr<Window> win = readWindow(node, in.drop_front(2), {});
  if (failed(win))
    return failure();
  bool ceil = getInt(node, "ceil_mode", 0) != 0;
  bool is1D = in.size() == 3;
  Location loc = is1D ? subLoc(node, "2d") : nodeLoc(node);
  Value input4 =
      reshape(node, subLoc(node, "input_2d"), input, with2DSpatial(in));
  if (!input4)
    return failure();
  Value pool =
      isMax ? create<top::MaxPoolOp>(node, loc, input4, win->kernel,
                                     win->strides, win->pads, ceil, false)
            : create<top::AvgPoolOp>(node, loc, input4, win->kernel,
                                     win->strides, win->pads, ceil,
                                     getInt(node, "count_include_pad", 0) != 0);
  if (!pool || !is1D)
    return setValue(node, 0, pool);
  auto out = cast<RankedTensorType>(pool.getType()).getShape();
  return setValue(node, 0,
                  reshape(node, nodeLoc(node), pool, {out[0], out[1], out[3]}));
}

LogicalResult Importer::importGlobalPool(const Node &node) {
  Value input = operand(node, 0);
  if (!input)
    return failure();
  auto in = cast<RankedTensorType>(input.getType()).getShape();
  if (!isSupportedSpatialRank(in.size()))
    return nodeError(node) << "only 1-D and 2-D pooling is supported, got "
                           << "input " << shapeStr(in);
  bool is1D = in.size() == 3;
  Location loc = is1D ? subLoc(node, "2d") : nodeLoc(node);
  Value input4 =
      reshape(node, subLoc(node, "input_2d"), input, with2DSpatial(in));
  if (!input4)
    return failure();
  Value pool = node.opType == "GlobalMaxPool"
                   ? create<top::GlobalMaxPoolOp>(node, loc, input4)
                   : create<top::GlobalAvgPoolOp>(node, loc, input4);
  if (!pool || !is1D)
    return setValue(node, 0, pool);
  return setValue(node, 0,
                  reshape(node, nodeLoc(node), pool, {in[0], in[1], 1}));
}

//===----------------------------------------------------------------------===//
// Gemm and MatMul
//===----------------------------------------------------------------------===//

LogicalResult Importer::importGemm(const Node &node) {
  bool transA = getInt(node, "transA", 0) != 0;
  bool transB = getInt(node, "transB", 0) != 0;
  float alpha = getFloat(node, "alpha", 1.0f);
  float beta = getFloat(node, "beta", 1.0f);
  StringRef outName = node.outputs[0];

  Value a = operand(node, 0);
  if (!a)
    return failure();
  if (cast<RankedTensorType>(a.getType()).getRank() != 2)
    return nodeError(node)
           << "A must be 2-D, got "
           << shapeStr(cast<RankedTensorType>(a.getType()).getShape());
  if (transA)
    a = create<top::TransposeOp>(node, subLoc(node, "a_t"), a,
                                 ArrayRef<int64_t>{1, 0});
  if (!a)
    return failure();

  // alpha folds into a constant B; otherwise it scales the product.
  Value b;
  const TensorData *bData = constant(node, 1);
  bool scaleProduct = alpha != 1.0f;
  if (scaleProduct && bData && bData->isFloat()) {
    SmallVector<float> scaled(bData->f32.begin(), bData->f32.end());
    for (float &v : scaled)
      v *= alpha;
    b = derivedWeight(bData->shape, scaled, node.inputs[1]);
    scaleProduct = false;
  } else {
    b = operand(node, 1);
  }
  if (!b)
    return failure();
  ArrayRef<int64_t> bShape = cast<RankedTensorType>(b.getType()).getShape();
  if (bShape.size() != 2)
    return nodeError(node) << "B must be 2-D, got " << shapeStr(bShape);
  int64_t n = transB ? bShape[0] : bShape[1];

  // beta scales C. A constant C that is one row (or a scalar) becomes the
  // matmul's [N] bias; anything else is added after the product.
  Value bias, addend;
  if (hasInput(node, 2) && beta != 0.0f) {
    StringRef cName = node.inputs[2];
    const TensorData *c = constant(node, 2);
    if (c && c->isFloat()) {
      ArrayRef<int64_t> cShape = c->shape;
      bool isRow =
          c->numElements() == n &&
          (cShape.size() == 1 || (cShape.size() == 2 && cShape[0] == 1));
      bool isScalar = c->numElements() == 1;
      SmallVector<float> data(c->f32.begin(), c->f32.end());
      for (float &v : data)
        v *= beta;
      if (isRow && cShape.size() == 1 && beta == 1.0f)
        bias = weight(*c, cName);
      else if (isRow || isScalar)
        bias = derivedWeight({n}, isRow ? data : SmallVector<float>(n, data[0]),
                             cName);
      else
        addend = beta == 1.0f ? weight(*c, cName)
                              : derivedWeight(cShape, data, cName);
    } else {
      addend = operand(node, 2);
      if (addend && beta != 1.0f)
        addend = active(node, subLoc(node, "c_scaled"), addend,
                        top::ActiveMode::Scale, beta, 0.0);
      if (!addend)
        return failure();
    }
  }
  // A product scaled at run time takes its bias after the scaling.
  if (scaleProduct && bias) {
    addend = bias;
    bias = Value();
  }

  if (!addend && !scaleProduct)
    return setValue(node, 0,
                    create<top::MatMulOp>(node, nodeLoc(node), a, b,
                                          bias ? bias : none(), transB, false));
  // With more ops after it the matmul is an intermediate: give it its own
  // name so per-layer comparisons do not see two ops called `outName`.
  Value product =
      create<top::MatMulOp>(node, nameLoc((outName + "_matmul").str()), a, b,
                            bias ? bias : none(), transB, false);
  if (product && scaleProduct)
    product = active(node, addend ? subLoc(node, "scaled") : nodeLoc(node),
                     product, top::ActiveMode::Scale, alpha, 0.0);
  if (!product || !addend)
    return setValue(node, 0, product);
  return setValue(node, 0,
                  create<top::AddOp>(node, nodeLoc(node), product, addend));
}

LogicalResult Importer::importMatMul(const Node &node) {
  Value lhs = operand(node, 0);
  Value rhs = lhs ? operand(node, 1) : Value();
  if (!rhs)
    return failure();
  // numpy.matmul: a 1-D left operand is a row, a 1-D right one a column;
  // the added dimension is dropped from the result.
  auto a = cast<RankedTensorType>(lhs.getType()).getShape();
  auto b = cast<RankedTensorType>(rhs.getType()).getShape();
  if (a.empty() || b.empty())
    return nodeError(node) << "operands must have rank 1 or more";
  bool rowVector = a.size() == 1, columnVector = b.size() == 1;
  if (rowVector)
    lhs = reshape(node, subLoc(node, "a_2d"), lhs, {1, a[0]});
  if (columnVector && lhs)
    rhs = reshape(node, subLoc(node, "b_2d"), rhs, {b[0], 1});
  if (!lhs || !rhs)
    return failure();
  bool vectors = rowVector || columnVector;
  Value product = create<top::MatMulOp>(
      node, vectors ? subLoc(node, "matmul") : nodeLoc(node), lhs, rhs, none(),
      false, false);
  if (!product || !vectors)
    return setValue(node, 0, product);
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(product.getType()).getShape());
  if (columnVector)
    shape.pop_back();
  if (rowVector)
    shape.erase(shape.end() - (columnVector ? 1 : 2));
  return setValue(node, 0,
                  create<top::ReshapeOp>(node, nodeLoc(node), product, shape));
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

LogicalResult Importer::importBatchNorm(const Node &node) {
  if (const OnnxAttr *training = node.attr("training_mode"))
    if (training->i != 0)
      return unsupportedAttr(node, *training);
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (hasOutput(node, i))
      return nodeError(node) << "output '" << node.outputs[i]
                             << "' is not supported (inference only has Y)";
  SmallVector<Value, 5> operands;
  for (size_t i = 0; i < 5; ++i) {
    Value v = operand(node, i);
    if (!v)
      return failure();
    operands.push_back(v);
  }
  double epsilon = getFloat(node, "epsilon", 1e-5f);
  return setValue(node, 0,
                  create<top::BatchNormOp>(
                      node, nodeLoc(node), operands[0], operands[1],
                      operands[2], operands[3], operands[4], APFloat(epsilon)));
}

LogicalResult Importer::importInstanceNorm(const Node &node) {
  Value x = operand(node, 0);
  Value scale = x ? operand(node, 1) : Value();
  Value bias = scale ? operand(node, 2) : Value();
  if (!bias)
    return failure();
  auto shape = cast<RankedTensorType>(x.getType()).getShape();
  int64_t rank = shape.size();
  if (rank < 3)
    return nodeError(node) << "expects an [N, C, spatial...] input, got "
                           << shapeStr(shape);
  // y = (x - mean) / sqrt(var + eps) * scale + bias, statistics per (n, c)
  // over the spatial dimensions.
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, rank));
  SmallVector<int64_t> perChannel(rank, 1);
  perChannel[1] = shape[1];
  double epsilon = getFloat(node, "epsilon", 1e-5f);
  using top::ActiveMode;
  using top::ReduceMode;
  Value mean = create<top::ReduceOp>(node, subLoc(node, "mean"), x,
                                     ReduceMode::Mean, axes, true);
  Value centered =
      mean ? create<top::SubOp>(node, subLoc(node, "centered"), x, mean, false)
           : Value();
  Value square =
      active(node, subLoc(node, "square"), centered, ActiveMode::Square);
  Value var = square ? create<top::ReduceOp>(node, subLoc(node, "var"), square,
                                             ReduceMode::Mean, axes, true)
                     : Value();
  Value varEps = active(node, subLoc(node, "var_eps"), var, ActiveMode::Scale,
                        1.0, epsilon);
  Value rstd = active(node, subLoc(node, "rstd"), varEps, ActiveMode::Rsqrt);
  Value normalized = rstd ? create<top::MulOp>(node, subLoc(node, "normalized"),
                                               centered, rstd, false)
                          : Value();
  // The statistics run in F16 under `quantize: int8` (top-assign-precision):
  // on a nearly constant channel rstd is large and multiplies the INT8
  // rounding of `centered`.
  for (Value v : {mean, centered, square, var, varEps, rstd, normalized})
    if (Operation *def = v ? v.getDefiningOp() : nullptr;
        def && !isa<top::WeightOp>(def))
      markNormalization(def,
                        node.name.empty() ? node.outputs.front() : node.name,
                        "int8 loses nearly constant channels");
  Value scale4 = reshape(node, subLoc(node, "scale_c11"), scale, perChannel);
  Value bias4 = reshape(node, subLoc(node, "bias_c11"), bias, perChannel);
  Value scaled = normalized && scale4
                     ? create<top::MulOp>(node, subLoc(node, "scaled"),
                                          normalized, scale4, false)
                     : Value();
  if (!scaled || !bias4)
    return failure();
  return setValue(
      node, 0, create<top::AddOp>(node, nodeLoc(node), scaled, bias4, false));
}

} // namespace kiln::onnx_frontend
