//===- Slicing.cpp - Layer-group slicing and LMEM sizing ------------------===//

#include "kiln/LayerGroup/Slicing.h"
#include "kiln/LayerGroup/StridedLoad.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"
#include "kiln/abi/chip.h"
#include "mlir/IR/BuiltinOps.h"

#include <cmath>

#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;
using namespace kiln::lg;

Range Range::hull(Range o) const {
  if (empty())
    return o;
  if (o.empty())
    return *this;
  int64_t lo = std::min(idx, o.idx), hi = std::max(end(), o.end());
  return {lo, hi - lo};
}

static Slice hull(Slice a, Slice b) {
  if (a.empty())
    return b;
  if (b.empty())
    return a;
  return {a.n.hull(b.n), a.c.hull(b.c), a.h.hull(b.h), a.w.hull(b.w)};
}

uint64_t lg::alignLmem(uint64_t bytes) {
  return (bytes + KILN_EU_BYTES - 1) / KILN_EU_BYTES * KILN_EU_BYTES;
}

std::array<int64_t, 4> lg::nchwOf(Value v) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  std::array<int64_t, 4> out = {1, 1, 1, 1};
  // Above 4-D (only casts, which apply-precision puts where a 5-D value
  // meets the net boundary: lowering merges the dimensions of every other
  // TIU op) the leading dimensions fold into N.
  if (shape.size() > 4) {
    size_t extra = shape.size() - 4;
    for (size_t i = 0; i < 4; ++i)
      out[i] = shape[extra + i];
    for (size_t i = 0; i < extra; ++i)
      out[0] *= shape[i];
    return out;
  }
  size_t off = 4 - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    out[off + i] = shape[i];
  return out;
}

bool lg::isWholeOperand(Operation *op, unsigned operandNumber) {
  auto sliceable = dyn_cast<tpu::SliceableOp>(op);
  return sliceable && sliceable.readsWholeOperand(operandNumber);
}

/// Filters are laid out [1, oc, ic/group, kh*kw] and biases [1, oc, 1, 1]
/// (INT8 requant tables [1, oc, 1, 3]) so output channel o sits on lane o % 64
/// beside the outputs it produces.
std::array<int64_t, 4> lg::lmemShapeOf(Operation *op, int operandNumber) {
  if (operandNumber < 0)
    return nchwOf(op->getResult(0));
  Value v = op->getOperand(operandNumber);
  if (op->hasTrait<tpu::HasFilter>() && operandNumber >= 1) {
    auto shape = cast<RankedTensorType>(v.getType()).getShape();
    if (operandNumber == 1)
      return {1, shape[0], shape[1], shape[2] * shape[3]};
    int64_t rest = 1;
    for (int64_t d : shape.drop_front())
      rest *= d;
    return {1, shape[0], 1, rest};
  }
  return nchwOf(v);
}

bool lg::emitsChipCommands(Operation *op) {
  // The attribute sits on the module and its functions (a function cloned
  // to try a rewrite out keeps it).
  StringAttr chip;
  for (Operation *p = op ? op->getParentOp() : nullptr; p && !chip; p = p->getParentOp())
    chip = p->getAttrOfType<StringAttr>(kIsaAttr);
  return chip && chip.getValue() == "bm1684x";
}

uint32_t lg::chipFilterIcAlign(Operation *op, int operandNumber) {
  // A transposed conv runs as an sCONV too (Bm1684xLowering.cpp).
  int64_t groups = 0;
  if (auto conv = dyn_cast_or_null<tpu::Conv2DOp>(op))
    groups = conv.getGroup();
  else if (auto deconv = dyn_cast_or_null<tpu::Deconv2DOp>(op))
    groups = deconv.getGroup();
  if (groups != 1 || operandNumber != 1 || !emitsChipCommands(op))
    return 1;
  switch (tpu::dtypeOrF32(op->getOperand(0))) {
  case KILN_DTYPE_F16: case KILN_DTYPE_BF16: return KILN_CONV_ICP_F16;
  case KILN_DTYPE_INT8: return KILN_CONV_ICP_INT8;
  default: return 1;
  }
}

uint64_t lg::chipScratchBytes(Operation *producer, int64_t n, int64_t c, int64_t h, int64_t w) {
  if (!producer || producer->getNumResults() != 1 || !emitsChipCommands(producer))
    return 0;
  auto int32 = [](int64_t n, int64_t c, int64_t h, int64_t w) {
    return kiln_lmem_lane_bytes(n, c, h, w, 4);
  };
  if (auto resize = dyn_cast<tpu::ResizeOp>(producer)) {
    // Its input rows resized along W, then the second products of a run
    // (Bm1684xLowering.cpp): rows of the input this slice reads, at most.
    auto inShape = cast<RankedTensorType>(resize.getInput().getType()).getShape();
    auto outShape = cast<RankedTensorType>(resize.getType()).getShape();
    const int64_t inH = inShape[inShape.size() - 2], outH = outShape[outShape.size() - 2];
    const int64_t rows = std::min<int64_t>(inH, (h * inH + outH - 1) / outH + 2);
    const uint32_t bytes = tpu::elementBytes(resize.getType());
    const uint64_t mid = kiln_lmem_lane_bytes(n, c, rows, w, bytes);
    return mid + std::max<uint64_t>(mid, kiln_lmem_lane_bytes(n, c, h, w, bytes));
  }
  if (isa<tpu::Conv2DOp, tpu::Deconv2DOp>(producer) &&
      tpu::elementBytes(producer->getResult(0).getType()) == 2) {
    // A 16-bit filter formed in the group, or a grouped conv's larger than
    // 1x1: its copy in the chip's layout (Bm1684xLowering.cpp
    // withChipFilter), per lane group of the slice.
    Value filter = producer->getOperand(1);
    auto f = cast<RankedTensorType>(filter.getType()).getShape();
    const bool formed = chipFilterIcAlign(producer, 1) > 1 && !filter.getDefiningOp<tpu::LoadOp>();
    const bool grouped = chipFilterIcAlign(producer, 1) == 1 && f[2] * f[3] > 1;
    if (formed || grouped)
      return (c + KILN_NPU_NUM - 1) / KILN_NPU_NUM *
             kiln_lmem_plane_stride((f[1] + KILN_CONV_ICP_F16 - 1) / KILN_CONV_ICP_F16 *
                                        KILN_CONV_ICP_F16,
                                    f[2] * f[3], tpu::elementBytes(filter.getType()));
  }
  if (!tpu::isInt8Type(producer->getResult(0).getType())) {
    if (auto active = dyn_cast<tpu::ActiveOp>(producer)) {
      using top::ActiveMode;
      const ActiveMode mode = active.getMode();
      // A leaky relu's a * x or a hard swish's gate, beside the result.
      if (mode == ActiveMode::LeakyRelu || mode == ActiveMode::HardSwish)
        return kiln_lmem_lane_bytes(n, c, h, w, tpu::elementBytes(active.getType()));
      // The SFU's functions (Bm1684xLowering.cpp special()), in f32: a
      // 16-bit input widened, a silu's sigmoid, elu's min(x, 0) or erf's
      // four tensors, then exp's f32 and int32 tensors and its
      // coefficients, or a sqrt's 1/sqrt(x) or a reciprocal's ones.
      const bool erf = mode == ActiveMode::Erf || mode == ActiveMode::Gelu;
      const bool elu = mode == ActiveMode::Elu || mode == ActiveMode::Selu;
      const bool log = mode == ActiveMode::Log || mode == ActiveMode::Softplus;
      const bool exp = erf || elu || log || mode == ActiveMode::Exp ||
                       mode == ActiveMode::Sigmoid || mode == ActiveMode::Silu ||
                       mode == ActiveMode::Tanh;
      const bool one = mode == ActiveMode::Sqrt || mode == ActiveMode::Reciprocal;
      if (!exp && !one && mode != ActiveMode::Rsqrt)
        return 0;
      const uint64_t tensors =
          (tpu::elementBytes(active.getType()) != 4) +
          (mode == ActiveMode::Silu || elu || mode == ActiveMode::Softplus) + (erf ? 4 : 0) +
          (log ? 3 : exp ? 2 : one);
      return tensors * kiln_lmem_lane_bytes(n, c, h, w, 4) + (exp ? KILN_EU_BYTES : 0);
    }
    // A float eltwise operand of one channel, broadcast to every lane; a
    // 16-bit division's operands and result widened to f32; a prelu's
    // negative part.
    uint64_t bytes = 0;
    if (auto eltwise = dyn_cast<tpu::EltwiseOp>(producer)) {
      for (Value in : producer->getOperands())
        if (auto t = dyn_cast<RankedTensorType>(in.getType());
            t && t.getRank() >= 3 && t.getShape()[t.getRank() - 3] == 1 && c > 1)
          bytes += kiln_lmem_lane_bytes(n, c, h, w, tpu::elementBytes(in.getType()));
      if (eltwise.getKind() == tpu::EltwiseKind::Div && tpu::elementBytes(eltwise.getType()) != 4)
        bytes += 3 * kiln_lmem_lane_bytes(n, c, h, w, 4);
      if (eltwise.getKind() == tpu::EltwiseKind::PRelu) // min(x, 0) * slope
        bytes += kiln_lmem_lane_bytes(n, c, h, w, tpu::elementBytes(eltwise.getType()));
    }
    return bytes;
  }
  if (isa<tpu::Conv2DOp, tpu::Deconv2DOp>(producer))
    // One image's 64 output channels at a time, and their requant table.
    return int32(1, 1, h, w) + KILN_EU_BYTES;
  if (isa<tpu::EltwiseOp>(producer))
    return 2 * int32(n, c, h, w);
  if (isa<tpu::ActiveOp>(producer)) // a table that rescales: q as int32
    return int32(n, c, h, w);
  if (auto cast = dyn_cast<tpu::CastOp>(producer)) // a float quantized: x / scale
    return tpu::isInt8Type(cast.getInput().getType()) ? 0 : int32(n, c, h, w);
  if (auto pool = dyn_cast<tpu::Pool2DOp>(producer)) {
    if (pool.getKind() != tpu::PoolKind::Avg && pool.getKind() != tpu::PoolKind::Sum)
      return 0;
    // The sums of whole input planes, then one per channel.
    auto in = cast<RankedTensorType>(pool.getInput().getType()).getShape();
    return int32(n, c, 1, in[in.size() - 2] * in.back()) + int32(n, c, 1, 1);
  }
  return 0;
}

bool lg::isFilterView(Operation *op) {
  auto reshape = dyn_cast_or_null<tpu::ReshapeOp>(op);
  if (!reshape || reshape->use_empty() || !reshape.getInput().getDefiningOp())
    return false;
  std::array<int64_t, 4> layout = nchwOf(reshape.getInput());
  return llvm::all_of(reshape->getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    return user->hasTrait<tpu::HasFilter>() && use.getOperandNumber() == 1 &&
           lmemShapeOf(user, 1) == layout;
  });
}

/// Only whole-operand uses by ops of this group count: elsewhere the value is
/// an activation.
static std::array<int64_t, 4>
lmemShapeFor(Value v, const llvm::SmallPtrSetImpl<Operation *> &members,
             bool &wholeOnly) {
  for (OpOperand &use : v.getUses()) {
    if (!members.contains(use.getOwner()) ||
        !isWholeOperand(use.getOwner(), use.getOperandNumber()))
      continue;
    wholeOnly = true;
    return lmemShapeOf(use.getOwner(), use.getOperandNumber());
  }
  return nchwOf(v);
}

/// The tpu.unfold_rows that v's stored bytes feed, directly or (inside a
/// materialized group) through its store and the group's result; else null.
static Operation *unfoldOf(Value v) {
  for (Operation *user : v.getUsers()) {
    if (isa<tpu::UnfoldRowsOp>(user))
      return user;
    auto store = dyn_cast<tpu::StoreOp>(user);
    if (!store)
      continue;
    for (OpOperand &use : store.getOutput().getUses())
      if (auto yield = dyn_cast<tpu::YieldOp>(use.getOwner()))
        for (Operation *outer : yield->getParentOp()->getResult(use.getOperandNumber()).getUsers())
          if (isa<tpu::UnfoldRowsOp>(outer))
            return outer;
  }
  return nullptr;
}

GroupGraph GroupGraph::fromOps(ArrayRef<Operation *> ops) {
  GroupGraph g;
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  // A member's result read through a filter view is the member's value.
  auto throughView = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (isFilterView(def) && members.contains(def->getOperand(0).getDefiningOp()))
      return def->getOperand(0);
    return v;
  };
  auto usedOutside = [&](Value v) {
    return llvm::any_of(v.getUsers(), [&](Operation *user) {
      if (isFilterView(user))
        return llvm::any_of(user->getUsers(),
                            [&](Operation *u) { return !members.contains(u); });
      return !members.contains(user);
    });
  };
  auto addVal = [&](Value v, bool external) {
    auto it = g.index.find(v);
    if (it != g.index.end())
      return it->second;
    Val val;
    val.value = v;
    val.external = external;
    val.lmemShape = lmemShapeFor(v, members, val.wholeOnly);
    for (OpOperand &use : v.getUses())
      if (members.contains(use.getOwner()))
        val.icAlign = std::max(val.icAlign,
                               chipFilterIcAlign(use.getOwner(), use.getOperandNumber()));
    val.dsize = tpu::elementBytes(v.getType());
    if (external) {
      // Inside a materialized group, what its load reads.
      Value source = v;
      if (auto load = v.getDefiningOp<tpu::LoadOp>())
        source = load.getInput();
      val.foldRows = source.getDefiningOp<tpu::FoldRowsOp>();
      val.stridedView = source.getDefiningOp<tpu::StridedViewOp>();
    }
    val.escaping = !external && usedOutside(v);
    if (val.escaping) {
      val.unfoldRows = unfoldOf(v);
      if (tpu::DmaOp dma = scatteringDma(v))
        val.scatter = scatterOf(dma);
    }
    g.vals.push_back(val);
    g.index[v] = g.vals.size() - 1;
    return (int)g.vals.size() - 1;
  };
  for (Operation *op : ops) {
    if (isFilterView(op))
      continue; // read through, above
    Node node{op, {}, -1};
    for (Value operand : op->getOperands()) {
      if (isa<NoneType>(operand.getType())) {
        node.operands.push_back(-1);
        continue;
      }
      operand = throughView(operand);
      Operation *def = operand.getDefiningOp();
      node.operands.push_back(addVal(operand, !def || !members.contains(def)));
    }
    node.result = addVal(op->getResult(0), false);
    g.nodes.push_back(node);
  }
  return g;
}

/// The part of an input axis of length `in` that a window needs for the
/// output part `out`, and the zero padding before and after it that falls
/// outside the input.
struct AxisRead {
  Range part;
  int64_t padBefore = 0, padAfter = 0;
};
static AxisRead windowRead(Range out, int64_t in, const tpu::HWindow &window) {
  AxisRead r;
  if (out.empty())
    return r;
  int64_t start = out.idx * window.stride - window.padTop;
  int64_t end = (out.end() - 1) * window.stride - window.padTop +
                (window.kernel - 1) * window.dilation + 1;
  int64_t a = std::max<int64_t>(0, start), b = std::min(in, end);
  r.part = {a, b - a};
  r.padBefore = a - start;
  r.padAfter = end - b;
  return r;
}

static int64_t floorDiv(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/// Input rows a transposed conv reads for output rows `out`: output row y
/// gets input row iy through tap ky when y = iy * s + ky * d - padTop. The
/// slice's own crop (Read.padTop) places its first output row.
static GroupSlicing::Read deconvRead(Slice out, Range inC, Range inW, int64_t in,
                                     int64_t k, int64_t s, int64_t d, int64_t padTop) {
  GroupSlicing::Read r;
  if (out.empty())
    return r;
  int64_t first = floorDiv(out.h.idx + padTop - (k - 1) * d, s);
  int64_t last = floorDiv(out.h.end() - 1 + padTop, s) + 1;
  // Rows that no input reaches (output padding) still need one row read.
  first = std::clamp<int64_t>(first, 0, in - 1);
  last = std::clamp<int64_t>(last, first + 1, in);
  r.rows = {out.n, inC, {first, last - first}, inW};
  r.padTop = padTop + out.h.idx - first * s;
  return r;
}

/// Source row of output row o under the resize's coordinate transform.
static double resizeSource(tpu::ResizeOp op, int64_t o, int64_t in, int64_t out) {
  double scale = op.getScales()[0];
  switch (op.getCoordMode()) {
  case top::ResizeCoordMode::Asymmetric:
    return o / scale;
  case top::ResizeCoordMode::AlignCorners:
    return in * scale > 1 ? (double)o * (in - 1) / (in * scale - 1) : 0.0;
  case top::ResizeCoordMode::PytorchHalfPixel:
    if (out <= 1)
      return 0.0;
    [[fallthrough]];
  default:
    return (o + 0.5) / scale - 0.5;
  }
}

/// Input rows a resize reads for output rows `out`, with a row of margin for
/// rounding and the linear neighbour.
static Range resizeRows(tpu::ResizeOp op, Range out) {
  int64_t in = cast<RankedTensorType>(op.getInput().getType()).getShape()[2];
  int64_t full = cast<RankedTensorType>(op.getType()).getShape()[2];
  int64_t first = (int64_t)std::floor(resizeSource(op, out.idx, in, full)) - 1;
  int64_t last = (int64_t)std::floor(resizeSource(op, out.end() - 1, in, full)) + 3;
  first = std::clamp<int64_t>(first, 0, in - 1);
  last = std::clamp<int64_t>(last, first + 1, in);
  return {first, last - first};
}

bool lg::isChannelSliceable(Operation *op) {
  auto sliceable = dyn_cast<tpu::SliceableOp>(op);
  return !sliceable || sliceable.isChannelSliceable();
}

bool lg::isWidthSliceable(Operation *op) {
  auto sliceable = dyn_cast<tpu::SliceableOp>(op);
  return !sliceable || sliceable.isWidthSliceable();
}

int64_t lg::maxWidthSlices(const GroupGraph &g) {
  for (const auto &node : g.nodes)
    if (!isWidthSliceable(node.op))
      return 1;
  int64_t most = 1;
  for (const auto &val : g.vals) {
    if (val.foldRows || val.unfoldRows || val.stridedView || val.scatter)
      return 1;
    if (val.escaping)
      most = std::max(most, val.lmemShape[3]);
  }
  return most;
}

int64_t lg::maxChannelSlices(const GroupGraph &g) {
  int64_t most = 1;
  for (const auto &node : g.nodes)
    if (!isChannelSliceable(node.op))
      return 1;
  for (const auto &val : g.vals)
    if (val.escaping)
      most = std::max<int64_t>(most, (val.lmemShape[1] + KILN_NPU_NUM - 1) / KILN_NPU_NUM);
  return most;
}

SmallVector<GroupSlicing::Read, 3> lg::readsOf(const GroupGraph &g,
                                               const GroupGraph::Node &node, Slice out) {
  SmallVector<GroupSlicing::Read, 3> reads(node.operands.size());
  if (out.empty())
    return reads;
  auto whole = [&](int val) {
    auto &s = g.vals[val].lmemShape;
    return Slice{{0, s[0]}, {0, s[1]}, {0, s[2]}, {0, s[3]}};
  };
  // Filters, biases and requant tables: the output channels' rows.
  auto perOutputChannel = [&](int val) {
    Slice rows = whole(val);
    rows.c = out.c;
    return rows;
  };
  auto sliceable = dyn_cast<tpu::SliceableOp>(node.op);
  std::optional<tpu::HWindow> window;
  if (sliceable)
    window = sliceable.getHWindow();
  if (window) {
    const auto &in = g.vals[node.operands[0]].lmemShape;
    Range inC = sliceable.mixesChannels() ? Range{0, in[1]} : out.c;
    // Columns: a window of them for a part of the output's; for all of
    // them every input column with the op's own pads (as the whole op
    // reads them, whatever columns its window skips).
    AxisRead columns{{0, in[3]}};
    std::optional<tpu::HWindow> wWindow = sliceable.getWWindow();
    if (wWindow && out.w.len < g.vals[node.result].lmemShape[3])
      columns = windowRead(out.w, in[3], *wWindow);
    if (window->transposed) {
      reads[0] = deconvRead(out, inC, columns.part, in[2], window->kernel, window->stride,
                            window->dilation, window->padTop);
    } else {
      AxisRead rows = windowRead(out.h, in[2], *window);
      reads[0].rows = {out.n, inC, rows.part, columns.part};
      reads[0].padTop = rows.padBefore;
      reads[0].padBottom = rows.padAfter;
    }
    reads[0].padLeft = columns.padBefore;
    reads[0].padRight = columns.padAfter;
    // Filters and biases: the output channels' rows.
    for (size_t i = 1; i < node.operands.size(); ++i)
      if (node.operands[i] >= 0)
        reads[i].rows = perOutputChannel(node.operands[i]);
    return reads;
  }
  if (auto resize = dyn_cast<tpu::ResizeOp>(node.op)) {
    int64_t width = g.vals[node.operands[0]].lmemShape[3];
    reads[0].rows = {out.n, out.c, resizeRows(resize, out.h), {0, width}};
    return reads;
  }
  // Elementwise: same rows, except broadcast dimensions of size 1 and
  // operands read whole (tables).
  for (auto [i, val] : llvm::enumerate(node.operands)) {
    if (val < 0)
      continue;
    if (isWholeOperand(node.op, i)) {
      reads[i].rows = whole(val);
      continue;
    }
    auto &s = g.vals[val].lmemShape;
    reads[i].rows = {s[0] == 1 ? Range{0, 1} : out.n, s[1] == 1 ? Range{0, 1} : out.c,
                     s[2] == 1 ? Range{0, 1} : out.h, s[3] == 1 ? Range{0, 1} : out.w};
  }
  return reads;
}

static Range part(int64_t i, int64_t extent, int64_t parts) {
  int64_t lo = i * extent / parts, hi = (i + 1) * extent / parts;
  return {lo, hi - lo};
}

Range lg::rowPart(int64_t i, int64_t extent, int64_t parts, bool tapered) {
  if (!tapered || parts < 3)
    return part(i, extent, parts);
  // Boundary k of parts - 1 whole shares: k - 1/2 of them, rounded.
  auto boundary = [&](int64_t k) {
    if (k <= 0)
      return int64_t(0);
    if (k >= parts)
      return extent;
    return (extent * (2 * k - 1) + parts - 1) / (2 * (parts - 1));
  };
  return {boundary(i), boundary(i + 1) - boundary(i)};
}

/// Part i of `parts` of the channels [0, channels), in whole lane groups.
static Range channelPart(int64_t i, int64_t channels, int64_t parts) {
  int64_t groups = (channels + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
  Range lanes = part(i, groups, parts);
  int64_t lo = lanes.idx * KILN_NPU_NUM;
  return {lo, std::min(lanes.end() * (int64_t)KILN_NPU_NUM, channels) - lo};
}

GroupSlicing lg::computeSlicing(const GroupGraph &g, int64_t nSlices, int64_t cSlices,
                                int64_t hSlices, int64_t wSlices, bool taperedH) {
  GroupSlicing r;
  r.nSlices = nSlices;
  r.cSlices = cSlices;
  r.hSlices = hSlices;
  r.wSlices = wSlices;
  int64_t count = nSlices * cSlices * hSlices * wSlices;
  r.hold.assign(g.vals.size(), std::vector<Slice>(count));
  r.store.assign(g.vals.size(), std::vector<Slice>(count));
  r.reads.assign(g.nodes.size(), {});
  for (auto &perNode : r.reads)
    perNode.resize(count);
  for (int64_t s = 0; s < count; ++s) {
    int64_t wi = s % wSlices, hi = s / wSlices % hSlices, ci = s / (wSlices * hSlices) % cSlices,
            ni = s / (wSlices * hSlices * cSlices);
    for (auto [v, val] : llvm::enumerate(g.vals)) {
      if (!val.escaping)
        continue;
      Slice own{part(ni, val.lmemShape[0], nSlices),
                channelPart(ci, val.lmemShape[1], cSlices),
                rowPart(hi, val.lmemShape[2], hSlices, taperedH),
                part(wi, val.lmemShape[3], wSlices)};
      r.store[v][s] = own.empty() ? Slice{} : own;
      r.hold[v][s] = r.store[v][s];
    }
    // Consumers come after producers, so walking backwards sees every
    // reader of a value before the op that computes it.
    for (int64_t n = g.nodes.size() - 1; n >= 0; --n) {
      const auto &node = g.nodes[n];
      auto reads = readsOf(g, node, r.hold[node.result][s]);
      for (auto [i, val] : llvm::enumerate(node.operands))
        if (val >= 0)
          r.hold[val][s] = hull(r.hold[val][s], reads[i].rows);
      r.reads[n][s] = std::move(reads);
    }
  }
  for (int64_t s = 0; s < count && wSlices > 1; ++s) {
    for (auto [v, val] : llvm::enumerate(g.vals))
      if (!r.store[v][s].empty() && !(r.store[v][s].w == r.hold[v][s].w))
        r.columnsMatch = false;
    for (auto [n, node] : llvm::enumerate(g.nodes))
      for (auto [i, v] : llvm::enumerate(node.operands))
        if (v >= 0 && !r.reads[n][s][i].rows.empty() &&
            !(r.reads[n][s][i].rows.w == r.hold[v][s].w))
          r.columnsMatch = false;
  }
  // Nodes come in program order: operands before the values they compute.
  // Computed values count only on their way to a filter, bias or table (a
  // filter formed in LMEM); other ops run in every slice, as their plans
  // were costed.
  r.invariant.assign(g.vals.size(), false);
  for (size_t v = 0; v < g.vals.size(); ++v)
    r.invariant[v] = g.vals[v].external && r.isHeld(v);
  std::vector<bool> candidate(g.vals.size()), formsWhole(g.vals.size());
  for (const auto &node : g.nodes)
    candidate[node.result] =
        r.isHeld(node.result) &&
        llvm::all_of(node.operands, [&](int v) { return v < 0 || r.invariant[v] || candidate[v]; });
  for (size_t n = g.nodes.size(); n-- > 0;) {
    const auto &node = g.nodes[n];
    for (auto [i, v] : llvm::enumerate(node.operands))
      if (v >= 0 && candidate[v] &&
          (isWholeOperand(node.op, i) || (candidate[node.result] && formsWhole[node.result])))
        formsWhole[v] = true;
  }
  for (size_t v = 0; v < g.vals.size(); ++v)
    if (candidate[v] && formsWhole[v])
      r.invariant[v] = true;
  for (size_t v = 0; v < g.vals.size(); ++v)
    r.lane.push_back(r.laneBytes(g, v));
  for (int64_t slice = 0; slice < count; ++slice)
    if (!r.sliceEmpty(slice))
      r.order.push_back(slice);
  return r;
}

bool GroupSlicing::isHeld(int val) const {
  const Slice *first = nullptr;
  for (const Slice &s : hold[val]) {
    if (s.empty())
      continue;
    if (first && !(*first == s))
      return false;
    first = &s;
  }
  return true;
}

bool GroupSlicing::sliceEmpty(int slice) const {
  for (const auto &perVal : store)
    if (!perVal[slice].empty())
      return false;
  return true;
}

uint64_t GroupSlicing::laneBytes(const GroupGraph &g, int val) const {
  if ((size_t)val < lane.size())
    return lane[val];
  uint64_t most = 0;
  for (const Slice &s : hold[val])
    if (!s.empty())
      most = std::max(most, kiln_lmem_lane_bytes(s.n.len, s.c.len,
                                                 llvm::alignTo(s.h.len, g.vals[val].icAlign),
                                                 s.w.len, g.vals[val].dsize) +
                                (g.vals[val].external
                                     ? 0
                                     : chipScratchBytes(g.vals[val].value.getDefiningOp(),
                                                        s.n.len, s.c.len, s.h.len, s.w.len)));
  return alignLmem(most);
}

uint64_t lg::lmemLaneBytes(const GroupGraph &g, const GroupSlicing &s,
                           int64_t buffers) {
  uint64_t total = 0;
  for (size_t v = 0; v < g.vals.size(); ++v)
    total += s.laneBytes(g, v) * (s.invariant[v] ? 1 : buffers);
  return total;
}

