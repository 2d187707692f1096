#include "kiln/Dialect/Tpu/IR/TpuOps.h"
#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/DmaProgram.h"

#include "kiln/Support/ShapeRules.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/cost.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace kiln::tpu;

#include "kiln/Dialect/Tpu/IR/TpuDialect.cpp.inc"
#include "kiln/Dialect/Tpu/IR/TpuEnums.cpp.inc"
#include "kiln/Dialect/Tpu/IR/TpuInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "kiln/Dialect/Tpu/IR/TpuAttrs.cpp.inc"

LogicalResult RequantAttr::verify(function_ref<InFlightDiagnostic()> emitError, int32_t,
                                  int32_t, int32_t rshift) {
  if (rshift < 0 || rshift > 63)
    return emitError() << "requant rshift " << rshift << " is not in [0, 63]";
  return success();
}

LogicalResult DmaCopyAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t src,
                                  int64_t srcOffset, int64_t dstOffset, ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> srcStrides, ArrayRef<int64_t> dstStrides,
                                  uint32_t bits) {
  if (src < kSelf)
    return emitError() << "copy source " << src << " is not an operand, fill or self";
  if (shape.size() != 4 || srcStrides.size() != 4 || dstStrides.size() != 4)
    return emitError() << "copy needs 4 dimensions and 4 strides on each side";
  if (llvm::any_of(shape, [](int64_t d) { return d < 1; }))
    return emitError() << "copy shape [" << shape << "] must be positive";
  if (srcOffset < 0 || dstOffset < 0 || llvm::any_of(srcStrides, [](int64_t s) { return s < 0; }) ||
      llvm::any_of(dstStrides, [](int64_t s) { return s < 0; }))
    return emitError() << "copy offsets and strides must not be negative";
  // A fill reads nothing; only a fill has a value.
  if (src == kFill ? srcOffset != 0 || llvm::any_of(srcStrides, [](int64_t s) { return s != 0; })
                   : bits != 0)
    return emitError() << (src == kFill ? "a fill has no source offset or strides"
                                        : "only a fill has bits");
  return success();
}

/// `[d0, d1, ...]`
static void printDims(AsmPrinter &printer, StringRef name, ArrayRef<int64_t> dims) {
  printer << ", " << name << " = [" << dims << "]";
}

static ParseResult parseDims(AsmParser &parser, StringRef name, SmallVectorImpl<int64_t> &dims) {
  return failure(parser.parseComma() || parser.parseKeyword(name) || parser.parseEqual() ||
                 parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
                   return parser.parseInteger(dims.emplace_back());
                 }));
}

void DmaCopyAttr::print(AsmPrinter &printer) const {
  printer << "<src = ";
  if (isFill())
    printer << "fill";
  else if (getSrc() == kSelf)
    printer << "self";
  else
    printer << getSrc();
  if (!isFill())
    printer << ", src_offset = " << getSrcOffset();
  printer << ", dst_offset = " << getDstOffset();
  printDims(printer, "shape", getShape());
  if (!isFill())
    printDims(printer, "src_strides", getSrcStrides());
  printDims(printer, "dst_strides", getDstStrides());
  if (isFill())
    printer.getStream() << ", bits = " << llvm::format_hex(getBits(), 10, /*Upper=*/true);
  printer << ">";
}

Attribute DmaCopyAttr::parse(AsmParser &parser, Type) {
  auto loc = parser.getCurrentLocation();
  int64_t src = 0, srcOffset = 0, dstOffset = 0;
  uint32_t bits = 0;
  SmallVector<int64_t> shape, srcStrides, dstStrides;
  if (parser.parseLess() || parser.parseKeyword("src") || parser.parseEqual())
    return {};
  if (succeeded(parser.parseOptionalKeyword("fill")))
    src = kFill;
  else if (succeeded(parser.parseOptionalKeyword("self")))
    src = kSelf;
  else if (parser.parseInteger(src))
    return {};
  bool fill = src == kFill;
  if (!fill && (parser.parseComma() || parser.parseKeyword("src_offset") ||
                parser.parseEqual() || parser.parseInteger(srcOffset)))
    return {};
  if (parser.parseComma() || parser.parseKeyword("dst_offset") || parser.parseEqual() ||
      parser.parseInteger(dstOffset) || parseDims(parser, "shape", shape))
    return {};
  if (fill)
    srcStrides.assign(shape.size(), 0);
  else if (parseDims(parser, "src_strides", srcStrides))
    return {};
  if (parseDims(parser, "dst_strides", dstStrides))
    return {};
  if (fill && (parser.parseComma() || parser.parseKeyword("bits") || parser.parseEqual() ||
               parser.parseInteger(bits)))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<DmaCopyAttr>(loc, parser.getContext(), src, srcOffset, dstOffset,
                                        shape, srcStrides, dstStrides, bits);
}

//===----------------------------------------------------------------------===//
// Layer-group plans
//===----------------------------------------------------------------------===//

llvm::hash_code kiln::tpu::hash_value(const SliceRange &range) {
  return llvm::hash_combine(llvm::hash_combine_range(range.offsets.begin(), range.offsets.end()),
                            llvm::hash_combine_range(range.sizes.begin(), range.sizes.end()));
}

AsmPrinter &kiln::tpu::operator<<(AsmPrinter &printer, const SliceRange &range) {
  printer << "(";
  for (int d = 0; d < 4; ++d)
    printer << (d ? ", " : "") << range.offsets[d] << "+" << range.sizes[d];
  return printer << ")";
}

bool kiln::tpu::liveTogether(int64_t aFirst, int64_t aLast, bool aWhole, int64_t bFirst,
                             int64_t bLast, bool bWhole, int64_t period) {
  if (aWhole || bWhole)
    return true;
  // Instances of the previous and next cycle may reach into this one.
  for (int64_t shift : {-period, int64_t(0), period})
    if (aFirst <= bLast + shift && bFirst + shift <= aLast)
      return true;
  return false;
}

/// `(offset+size, ...)` of four dimensions.
static ParseResult parseSliceRange(AsmParser &parser, SliceRange &range) {
  if (parser.parseLParen())
    return failure();
  for (int d = 0; d < 4; ++d)
    if ((d && parser.parseComma()) || parser.parseInteger(range.offsets[d]) ||
        parser.parsePlus() || parser.parseInteger(range.sizes[d]))
      return failure();
  return parser.parseRParen();
}

/// `, name = [...]`, a list that may be empty.
template <typename T>
static ParseResult parseList(AsmParser &parser, StringRef name, SmallVectorImpl<T> &list,
                             function_ref<ParseResult(T &)> parseElement,
                             bool leadingComma = true) {
  if ((leadingComma && parser.parseComma()) || parser.parseKeyword(name) || parser.parseEqual())
    return failure();
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                        [&] { return parseElement(list.emplace_back()); });
}

static ParseResult parseIntList(AsmParser &parser, StringRef name, SmallVectorImpl<int64_t> &list,
                                bool leadingComma = true) {
  return parseList<int64_t>(
      parser, name, list, [&](int64_t &v) { return parser.parseInteger(v); }, leadingComma);
}

template <typename T>
static void printList(AsmPrinter &printer, StringRef name, ArrayRef<T> list) {
  printer << ", " << name << " = [" << list << "]";
}

uint32_t ValuePlanAttr::banksOf(uint32_t ping, uint32_t pong, uint32_t bytes) {
  return kiln_lmem_bank_mask(ping, uint64_t(ping) + bytes) |
         kiln_lmem_bank_mask(pong, uint64_t(pong) + bytes);
}

void ValuePlanAttr::print(AsmPrinter &printer) const {
  printer << "<shape = [" << getShape() << "]";
  if (getInvariant())
    printer << ", invariant";
  printer << ", lmem = [" << getPing() << ", " << getPong() << "], bytes = " << getBytes()
          << ", live = [" << getLiveFirst() << ", " << getLiveLast() << "]";
  SmallVector<int64_t> banks;
  for (unsigned b = 0; b < KILN_LMEM_BANKS; ++b)
    if ((getBanks() >> b) & 1)
      banks.push_back(b);
  printList<int64_t>(printer, "banks", banks);
  printList(printer, "hold", getHold());
  printList(printer, "store", getStore());
  printer << ">";
}

Attribute ValuePlanAttr::parse(AsmParser &parser, Type) {
  auto loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape, lmem, live, banks;
  SmallVector<SliceRange> hold, store;
  uint32_t bytes = 0;
  auto range = [&](SliceRange &r) { return parseSliceRange(parser, r); };
  if (parser.parseLess() || parseIntList(parser, "shape", shape, /*leadingComma=*/false))
    return {};
  bool invariant = succeeded(parser.parseOptionalComma()) &&
                   succeeded(parser.parseOptionalKeyword("invariant"));
  if ((invariant && parser.parseComma()) || parseIntList(parser, "lmem", lmem, false) ||
      parser.parseComma() || parser.parseKeyword("bytes") || parser.parseEqual() ||
      parser.parseInteger(bytes) || parseIntList(parser, "live", live) ||
      parseIntList(parser, "banks", banks) ||
      parseList<SliceRange>(parser, "hold", hold, range) ||
      parseList<SliceRange>(parser, "store", store, range) || parser.parseGreater())
    return {};
  if (lmem.size() != 2 || live.size() != 2) {
    parser.emitError(loc, "a value plan's lmem and live are [ping, pong] and [first, last]");
    return {};
  }
  uint32_t mask = 0;
  for (int64_t b : banks) {
    if (b < 0 || b >= KILN_LMEM_BANKS) {
      parser.emitError(loc, "LMEM bank ") << b << " is not in [0, " << KILN_LMEM_BANKS << ")";
      return {};
    }
    mask |= 1u << b;
  }
  for (int64_t addr : lmem)
    if (addr < 0 || addr > UINT32_MAX) {
      parser.emitError(loc, "LMEM offset ") << addr << " is not a 32-bit offset";
      return {};
    }
  return parser.getChecked<ValuePlanAttr>(loc, parser.getContext(), shape, invariant,
                                          uint32_t(lmem[0]), uint32_t(lmem[1]), bytes, live[0],
                                          live[1], mask, hold, store);
}

LogicalResult ValuePlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                    ArrayRef<int64_t> shape, bool invariant, uint32_t ping,
                                    uint32_t pong, uint32_t bytes, int64_t liveFirst,
                                    int64_t liveLast, uint32_t banks, ArrayRef<SliceRange> hold,
                                    ArrayRef<SliceRange> store) {
  if (shape.size() != 4 || llvm::any_of(shape, [](int64_t d) { return d < 1; }))
    return emitError() << "a value plan's shape [" << shape << "] must be 4 positive dimensions";
  for (ArrayRef<SliceRange> ranges : {hold, store})
    for (const SliceRange &r : ranges)
      for (int d = 0; d < 4; ++d)
        if (r.offsets[d] < 0 || r.sizes[d] < 0 || r.offsets[d] + r.sizes[d] > shape[d])
          return emitError() << "slice range " << r.offsets[d] << "+" << r.sizes[d]
                             << " of dimension " << d << " lies outside the value's shape ["
                             << shape << "]";
  if (!store.empty() && store.size() != hold.size())
    return emitError() << "a value plan stores " << store.size() << " slices but holds "
                       << hold.size();
  for (uint32_t at : {ping, pong})
    if (uint64_t(at) + bytes > KILN_LMEM_BYTES_PER_LANE)
      return emitError() << "LMEM buffer [" << at << ", " << uint64_t(at) + bytes
                         << ") passes a lane's " << KILN_LMEM_BYTES_PER_LANE << " bytes";
  if (invariant && ping != pong)
    return emitError() << "an invariant value has one buffer: ping " << ping << " != pong "
                       << pong;
  if (liveFirst > liveLast)
    return emitError() << "a value plan's lifetime [" << liveFirst << ", " << liveLast
                       << "] is empty";
  if (banks != banksOf(ping, pong, bytes))
    return emitError() << "a value plan's banks differ from those its LMEM buffers touch";
  return success();
}

int64_t GroupPlanAttr::getSliceCount() const {
  int64_t count = 1;
  for (int64_t n : getSlices())
    count *= n;
  return count;
}

void GroupPlanAttr::print(AsmPrinter &printer) const {
  printer << "<slices = [" << getSlices() << "], buffers = " << getBuffers();
  printList(printer, "order", getOrder());
  printer << ", values = [";
  llvm::interleaveComma(getValues(), printer,
                        [&](ValuePlanAttr v) { printer.printAttribute(v); });
  printer << "]>";
}

Attribute GroupPlanAttr::parse(AsmParser &parser, Type) {
  auto loc = parser.getCurrentLocation();
  SmallVector<int64_t> slices, order;
  SmallVector<ValuePlanAttr> values;
  int64_t buffers = 0;
  if (parser.parseLess() || parseIntList(parser, "slices", slices, /*leadingComma=*/false) ||
      parser.parseComma() || parser.parseKeyword("buffers") || parser.parseEqual() ||
      parser.parseInteger(buffers) || parseIntList(parser, "order", order) ||
      parseList<ValuePlanAttr>(parser, "values", values,
                               [&](ValuePlanAttr &v) { return parser.parseAttribute(v); }) ||
      parser.parseGreater())
    return {};
  return parser.getChecked<GroupPlanAttr>(loc, parser.getContext(), slices, buffers, order,
                                          values);
}

LogicalResult GroupPlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                    ArrayRef<int64_t> slices, int64_t buffers,
                                    ArrayRef<int64_t> order, ArrayRef<ValuePlanAttr> values) {
  if (slices.size() != 4 || llvm::any_of(slices, [](int64_t n) { return n < 1; }))
    return emitError() << "a group plan's slices [" << slices
                       << "] must be 4 positive counts [n, c, h, w]";
  if (buffers != 1 && buffers != 2)
    return emitError() << "a group plan has 1 or 2 buffers, not " << buffers;
  int64_t count = 1;
  for (int64_t n : slices)
    count *= n;
  for (auto [i, slice] : llvm::enumerate(order))
    if (slice < 0 || slice >= count || (i > 0 && slice <= order[i - 1]))
      return emitError() << "a group plan's order must list slices of [0, " << count
                         << ") once each, ascending";
  for (auto [v, value] : llvm::enumerate(values)) {
    if ((int64_t)value.getHold().size() != count)
      return emitError() << "value " << v << " holds " << value.getHold().size()
                         << " slices, the plan has " << count;
    if (buffers == 1 && value.getPing() != value.getPong())
      return emitError() << "value " << v << " has a pong buffer in a plan with one buffer";
  }
  return success();
}

void TpuDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/Dialect/Tpu/IR/TpuOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kiln/Dialect/Tpu/IR/TpuAttrs.cpp.inc"
      >();
}

/// `tpu.folded_rows` says an op's one 4-D result holds R rows per row as R
/// channel blocks. The module facts tpu-address-assign records
/// (tpu.coeff_size, tpu.neuron_size, tpu.activation_peak, tpu.keep_tensors)
/// are plain integers and units.
LogicalResult TpuDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() == foldedRowsAttrName()) {
    auto rows = dyn_cast<IntegerAttr>(attr.getValue());
    if (!rows || rows.getInt() < 2)
      return op->emitError("'tpu.folded_rows' must be an integer of at least 2");
    auto type = op->getNumResults() == 1
                    ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                    : RankedTensorType();
    if (!type || type.getRank() != 4 || type.getDimSize(1) % rows.getInt() != 0)
      return op->emitError("'tpu.folded_rows' needs one 4-D result whose channels "
                           "are whole row blocks");
    return success();
  }
  if (attr.getName() == modelBytesAttrName()) {
    auto bytes = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<top::WeightOp>(op) || !bytes || bytes.getInt() < 1)
      return op->emitError("'tpu.model_bytes' must be a positive integer on a top.weight");
    return success();
  }
  if (attr.getName() == modelMacsAttrName()) {
    auto macs = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<Conv2DOp, Deconv2DOp>(op) || !macs || macs.getInt() < 1)
      return op->emitError("'tpu.model_macs' must be a positive integer on a conv or deconv");
    return success();
  }
  return success();
}

#define GET_OP_CLASSES
#include "kiln/Dialect/Tpu/IR/TpuOps.cpp.inc"

uint64_t kiln::tpu::modelMacs(Operation *op) {
  if (auto macs = op->getAttrOfType<IntegerAttr>(TpuDialect::modelMacsAttrName()))
    return macs.getInt();
  if (auto conv = dyn_cast<Conv2DOp>(op)) {
    auto out = cast<RankedTensorType>(conv.getType()).getShape();
    auto filter = cast<RankedTensorType>(conv.getFilter().getType()).getShape();
    return (uint64_t)out[0] * out[1] * out[2] * out[3] * filter[1] * filter[2] * filter[3];
  }
  if (auto deconv = dyn_cast<Deconv2DOp>(op)) {
    auto in = cast<RankedTensorType>(deconv.getInput().getType()).getShape();
    auto filter = cast<RankedTensorType>(deconv.getFilter().getType()).getShape();
    return (uint64_t)in[0] * in[1] * in[2] * in[3] * (filter[0] / deconv.getGroup()) *
           filter[2] * filter[3];
  }
  return 0;
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto inner = getInput().getDefiningOp<ReshapeOp>();
  if (!inner)
    return {};
  if (inner.getInput().getType() == getType())
    return inner.getInput();
  getInputMutable().assign(inner.getInput());
  return getResult();
}

/// Ops that move their input's elements keep its element type.
static LogicalResult verifySameElements(Operation *op, RankedTensorType in,
                                        RankedTensorType out, StringRef moves) {
  if (in.getElementType() == out.getElementType())
    return success();
  return op->emitOpError(moves) << " its input's elements: element types "
                                << in.getElementType() << " and " << out.getElementType()
                                << " differ";
}

/// Views keep their input's elements and need static shapes.
static LogicalResult verifyStaticView(Operation *op, RankedTensorType in, RankedTensorType out,
                                      StringRef moves) {
  if (failed(verifySameElements(op, in, out, moves)))
    return failure();
  if (!in.hasStaticShape() || !out.hasStaticShape())
    return op->emitOpError("needs static shapes");
  return success();
}

LogicalResult ViewOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (failed(verifyStaticView(*this, in, out, "views")))
    return failure();
  const int64_t offset = static_cast<int64_t>(getOffset());
  if (offset < 0 || offset + out.getNumElements() > in.getNumElements())
    return emitOpError("elements [")
           << offset << ", " << offset + out.getNumElements()
           << ") lie outside the input's " << in.getNumElements();
  return success();
}

/// Row moves (fold_rows, unfold_rows) keep the element type of static 4-D
/// tensors.
static LogicalResult verifyRowMove(Operation *op, RankedTensorType in, RankedTensorType out) {
  if (failed(verifySameElements(op, in, out, "moves")))
    return failure();
  if (in.getRank() != 4 || out.getRank() != 4 || !in.hasStaticShape() || !out.hasStaticShape())
    return op->emitOpError("needs static 4-D shapes");
  return success();
}

LogicalResult FoldRowsOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (failed(verifyRowMove(*this, in, out)))
    return failure();
  auto kernel = int64_t(getKernelH()), stride = int64_t(getStrideH()),
       dilation = int64_t(getDilationH()), padTop = int64_t(getPadTop());
  if (kernel < 1 || stride < 1 || dilation < 1 || padTop < 0)
    return emitOpError("needs kernel_h, stride_h and dilation_h >= 1 and pad_top >= 0");
  int64_t channels = in.getDimSize(1) * kernel;
  if (out.getDimSize(0) != in.getDimSize(0) || out.getDimSize(1) != channels ||
      out.getDimSize(3) != in.getDimSize(3))
    return emitOpError("result must be [N, C * kernel_h, rows, W] of the input's N, C, W");
  if (channels > KILN_NPU_NUM)
    return emitOpError("folds ") << channels << " channels; its loads place at most "
                                 << KILN_NPU_NUM << " (one lane each)";
  return success();
}

LogicalResult UnfoldRowsOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (failed(verifyRowMove(*this, in, out)))
    return failure();
  int64_t rows = getRows();
  if (in.getDimSize(0) != out.getDimSize(0) || in.getDimSize(1) != out.getDimSize(1) * rows ||
      out.getDimSize(2) != in.getDimSize(2) * rows || in.getDimSize(3) != out.getDimSize(3))
    return emitOpError("input must be [N, C * rows, H / rows, W] of the result's [N, C, H, W]");
  if (in.getDimSize(1) > KILN_NPU_NUM)
    return emitOpError("unfolds ") << in.getDimSize(1) << " channels; its stores take at most "
                                   << KILN_NPU_NUM << " (one lane each)";
  return success();
}

LogicalResult StridedViewOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (failed(verifyStaticView(*this, in, out, "reads")))
    return failure();
  ArrayRef<int64_t> sizes = getSizes(), strides = getStrides();
  if (sizes.empty() || sizes.size() != strides.size())
    return emitOpError("needs as many strides as sizes, at least one");
  int64_t count = 1, last = int64_t(getOffset());
  for (auto [size, stride] : llvm::zip(sizes, strides)) {
    if (size < 1 || stride < 0)
      return emitOpError("needs sizes >= 1 and strides >= 0");
    count *= size;
    last += (size - 1) * stride;
  }
  if (count != out.getNumElements())
    return emitOpError("sizes hold ") << count << " elements, the result "
                                      << out.getNumElements();
  if (int64_t(getOffset()) < 0 || last >= in.getNumElements())
    return emitOpError("reads element ") << last << ", outside the input's "
                                         << in.getNumElements();
  return success();
}

SmallVector<Value> GroupOp::getPlannedValues() {
  Block &body = getBody().front();
  SmallVector<Value> values;
  llvm::SmallDenseSet<Value, 16> seen;
  auto add = [&](Value v) {
    if (seen.insert(v).second)
      values.push_back(v);
  };
  for (Operation &op : body) {
    // Loads are reached as operands; reshapes in a body are filter views.
    if (isa<LoadOp, StoreOp, YieldOp, ReshapeOp>(op))
      continue;
    for (Value operand : op.getOperands()) {
      if (isa<NoneType>(operand.getType()))
        continue;
      auto view = operand.getDefiningOp<ReshapeOp>();
      add(view && view->getBlock() == &body ? view.getInput() : operand);
    }
    for (Value result : op.getResults())
      add(result);
  }
  return values;
}

LogicalResult GroupOp::verify() {
  GroupPlanAttr plan = getPlan();
  SmallVector<Value> values = getPlannedValues();
  ArrayRef<ValuePlanAttr> planned = plan.getValues();
  if (planned.size() != values.size())
    return emitOpError("plan describes ") << planned.size() << " values, the body defines "
                                          << values.size();
  int64_t computeOps = 0;
  for (Operation &op : getBody().front())
    computeOps += !isa<LoadOp, StoreOp, YieldOp, ReshapeOp>(op);
  for (auto [v, value] : llvm::enumerate(values)) {
    int64_t elements = 1;
    for (int64_t d : planned[v].getShape())
      elements *= d;
    auto type = cast<RankedTensorType>(value.getType());
    if (type.hasStaticShape() && elements != type.getNumElements())
      return emitOpError("plan's value ") << v << " has " << elements << " elements, "
                                          << type << " has " << type.getNumElements();
    auto load = value.getDefiningOp<LoadOp>();
    if (load && load.getPrefetchGroups() && !planned[v].getInvariant())
      return emitOpError("plan's value ") << v << " is prefetched but not invariant";
  }
  // What the LMEM layouts guarantee: buffers live at the same position
  // share no bytes. Slice k's buffer is k % buffers, live from its write to
  // its last access; a step of a slice has computeOps + 2 positions.
  struct Buffer {
    int64_t value, lo, hi, first, last;
    bool whole;
  };
  int64_t step = computeOps + 2, period = step * plan.getBuffers();
  SmallVector<Buffer> buffers;
  for (auto [v, value] : llvm::enumerate(planned)) {
    if (value.getBytes() == 0)
      continue;
    bool single = value.getInvariant() || plan.getBuffers() == 1;
    for (int64_t b = 0; b < (single ? 1 : 2); ++b) {
      int64_t at = b ? value.getPong() : value.getPing();
      buffers.push_back({int64_t(v), at, at + value.getBytes(), value.getLiveFirst() + b * step,
                         value.getLiveLast() + b * step, value.getInvariant()});
    }
  }
  for (auto [i, a] : llvm::enumerate(buffers))
    for (const Buffer &b : ArrayRef(buffers).drop_front(i + 1))
      if (a.lo < b.hi && b.lo < a.hi &&
          liveTogether(a.first, a.last, a.whole, b.first, b.last, b.whole, period))
        return emitOpError("plan's values ")
               << a.value << " and " << b.value << " share LMEM bytes ["
               << std::max(a.lo, b.lo) << ", " << std::min(a.hi, b.hi)
               << ") while both are live";
  return success();
}

//===----------------------------------------------------------------------===//
// Compute and data movement ops. Element types may differ between operands
// and results (INT8 quantization, casts): only shapes and attributes are
// checked, and shape arithmetic only where the shapes are static.
//===----------------------------------------------------------------------===//

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static bool allStatic(std::initializer_list<Value> values) {
  return llvm::all_of(values, [](Value v) {
    return cast<RankedTensorType>(v.getType()).hasStaticShape();
  });
}

/// `output` has `input`'s shape.
static LogicalResult verifySameShape(Operation *op, Value input, Value output) {
  if (shapeOf(input) != shapeOf(output))
    return op->emitOpError("result shape [")
           << shapeOf(output) << "] differs from the input's [" << shapeOf(input) << "]";
  return success();
}

/// The result's spatial extents for a conv-like op: out[i] == expected[i],
/// or with `atLeast` out[i] >= expected[i] (deconv: output_padding).
static LogicalResult verifySpatial(Operation *op, ArrayRef<int64_t> out,
                                   ArrayRef<int64_t> expected, bool atLeast) {
  for (int i = 0; i < 2; ++i)
    if (atLeast ? out[2 + i] < expected[i] : out[2 + i] != expected[i])
      return op->emitOpError("result ")
             << (i == 0 ? "height " : "width ") << out[2 + i]
             << (atLeast ? " is below the window arithmetic's " : " differs from the window arithmetic's ")
             << expected[i];
  return success();
}

/// tpu.conv2d and tpu.deconv2d: 4-D input, filter [oc, ic/group, kh, kw]
/// and result; window attributes; channels and the result's spatial size.
template <typename OpT> static LogicalResult verifyConvLike(OpT op, bool transposed) {
  auto in = shapeOf(op.getInput()), filter = shapeOf(op.getFilter()),
       out = shapeOf(op.getOutput());
  if (in.size() != 4 || filter.size() != 4 || out.size() != 4)
    return op.emitOpError("expects a 4-D input, filter and result, got ranks ")
           << in.size() << ", " << filter.size() << ", " << out.size();
  ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                    pads = op.getPads(), dilations = op.getDilations();
  if (auto problem = kiln::checkWindowAttrs(kernel, strides, pads, dilations))
    return op.emitOpError(*problem);
  if (!allStatic({op.getInput(), op.getFilter(), op.getOutput()}))
    return success();
  if (kernel != filter.drop_front(2))
    return op.emitOpError("kernel_shape [")
           << kernel << "] does not match the filter's [" << filter.drop_front(2) << "]";
  int64_t group = op.getGroup();
  if (group < 1 || filter[0] % group != 0 || in[1] != filter[1] * group)
    return op.emitOpError("input channels ")
           << in[1] << " do not match filter [" << filter << "] with group " << group;
  if (out[0] != in[0] || out[1] != filter[0])
    return op.emitOpError("result [")
           << out << "] must have the input's batch " << in[0] << " and the filter's "
           << filter[0] << " channels";
  if (auto bias = dyn_cast<RankedTensorType>(op.getBias().getType());
      bias && bias.hasStaticShape() && bias.getNumElements() != filter[0] &&
      bias.getNumElements() != 3 * filter[0])
    return op.emitOpError("bias has ")
           << bias.getNumElements() << " elements for " << filter[0]
           << " output channels (expects oc, or oc x 3 for an INT8 table)";
  int64_t expected[2];
  for (int i = 0; i < 2; ++i)
    expected[i] = transposed ? kiln::deconvOut(in[2 + i], kernel[i], strides[i], dilations[i],
                                               pads[i], pads[i + 2])
                             : kiln::windowOut(in[2 + i], kernel[i], strides[i], dilations[i],
                                               pads[i], pads[i + 2], false);
  return verifySpatial(op, out, expected, transposed);
}

LogicalResult Conv2DOp::verify() { return verifyConvLike(*this, false); }
LogicalResult Deconv2DOp::verify() { return verifyConvLike(*this, true); }

LogicalResult Pool2DOp::verify() {
  auto in = shapeOf(getInput()), out = shapeOf(getOutput());
  if (in.size() != 4 || out.size() != 4)
    return emitOpError("expects a 4-D input and result, got ranks ")
           << in.size() << " and " << out.size();
  int64_t dilations[2] = {1, 1};
  if (auto problem = kiln::checkWindowAttrs(getKernelShape(), getStrides(), getPads(), dilations))
    return emitOpError(*problem);
  if (!allStatic({getInput(), getOutput()}))
    return success();
  if (out[0] != in[0] || out[1] != in[1])
    return emitOpError("result [") << out << "] must keep the input's batch and channels ["
                                   << in.take_front(2) << "]";
  int64_t expected[2];
  for (int i = 0; i < 2; ++i)
    expected[i] = kiln::windowOut(in[2 + i], getKernelShape()[i], getStrides()[i], 1,
                                  getPads()[i], getPads()[i + 2], false);
  return verifySpatial(*this, out, expected, false);
}

LogicalResult EltwiseOp::verify() {
  size_t bad = 0;
  auto shape = kiln::broadcastShapes(shapeOf(getLhs()), shapeOf(getRhs()), bad);
  if (!shape)
    return emitOpError("operands [")
           << shapeOf(getLhs()) << "] and [" << shapeOf(getRhs())
           << "] do not broadcast in dimension " << bad;
  if (allStatic({getLhs(), getRhs(), getOutput()}) && ArrayRef<int64_t>(*shape) != shapeOf(getOutput()))
    return emitOpError("result [") << shapeOf(getOutput()) << "] is not the operands' broadcast ["
                                   << ArrayRef<int64_t>(*shape) << "]";
  return success();
}

LogicalResult ReluOp::verify() { return verifySameShape(*this, getInput(), getOutput()); }

LogicalResult ActiveOp::verify() {
  if (getTable()) {
    auto table = cast<RankedTensorType>(getTable().getType());
    if (!table.hasStaticShape() || table.getNumElements() != 256)
      return emitOpError("table must have 256 entries, got type ") << table;
  }
  return verifySameShape(*this, getInput(), getOutput());
}

LogicalResult CastOp::verify() {
  return verifySameShape(*this, getInput(), getOutput());
}

LogicalResult ResizeOp::verify() {
  auto in = shapeOf(getInput()), out = shapeOf(getOutput());
  if (in.size() != 4 || out.size() != 4)
    return emitOpError("expects a 4-D input and result, got ranks ")
           << in.size() << " and " << out.size();
  if (out[0] != in[0] || out[1] != in[1])
    return emitOpError("result [") << out << "] must keep the input's batch and channels ["
                                   << in.take_front(2) << "]";
  ArrayRef<double> scales = getScales();
  if (scales.size() != 2 || !(scales[0] > 0) || !(scales[1] > 0))
    return emitOpError("expects 2 positive scales");
  return success();
}

LogicalResult DmaOp::verify() {
  const int64_t numInputs = getInputs().size();
  for (auto [i, copy] : llvm::enumerate(getCopies()))
    if (copy.getSrc() >= numInputs)
      return emitOpError("copy ") << i << " reads source " << copy.getSrc() << "; there are "
                                  << numInputs << " inputs";
  if (getInPlace()) {
    auto out = cast<RankedTensorType>(getType());
    if (numInputs != 1 || getProgram().size() != 1 || (*getCopies().begin()).isFill() ||
        !out.hasStaticShape() ||
        cast<RankedTensorType>(getInputs()[0].getType()).getNumElements() !=
            out.getNumElements())
      return emitOpError("in place needs one copy of every element of one input");
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << in.getNumElements() << " elements to " << out.getNumElements();
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("expects at least one input");
  auto out = shapeOf(getOutput());
  const int64_t rank = out.size(), axis = getAxis();
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ") << axis << " is out of range for rank " << rank;
  int64_t sum = 0;
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    auto s = shapeOf(v);
    if ((int64_t)s.size() != rank)
      return emitOpError("input ") << i << " has rank " << s.size() << ", the result " << rank;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && s[d] != out[d])
        return emitOpError("input ") << i << " dimension " << d << " is " << s[d]
                                     << ", the result's " << out[d];
    sum += s[axis];
  }
  if (sum != out[axis] && !ShapedType::isDynamic(out[axis]))
    return emitOpError("inputs give ") << sum << " along axis " << axis
                                       << ", the result has " << out[axis];
  return success();
}

LogicalResult LoadOp::verify() { return verifySameShape(*this, getInput(), getOutput()); }
LogicalResult StoreOp::verify() { return verifySameShape(*this, getInput(), getOutput()); }

LogicalResult YieldOp::verify() {
  auto group = cast<GroupOp>((*this)->getParentOp());
  if (getOperandTypes() != group.getResultTypes())
    return emitOpError("yields ") << getNumOperands() << " values of types "
                                  << getOperandTypes() << " for the group's results "
                                  << group.getResultTypes();
  return success();
}

//===----------------------------------------------------------------------===//
// SliceableOpInterface
//===----------------------------------------------------------------------===//

/// Each output channel reads its own input channel.
static bool isDepthwise(Conv2DOp conv) {
  auto in = cast<RankedTensorType>(conv.getInput().getType()).getShape();
  auto out = cast<RankedTensorType>(conv.getType()).getShape();
  int64_t groups = conv.getGroup();
  return groups > 1 && groups == in[1] && groups == out[1];
}

std::optional<HWindow> Conv2DOp::getHWindow() {
  return HWindow{getKernelShape()[0], getStrides()[0], getDilations()[0], getPads()[0]};
}
std::optional<HWindow> Conv2DOp::getWWindow() {
  return HWindow{getKernelShape()[1], getStrides()[1], getDilations()[1], getPads()[1]};
}
bool Conv2DOp::readsWholeOperand(unsigned operandNumber) { return operandNumber >= 1; }
bool Conv2DOp::mixesChannels() { return !isDepthwise(*this); }
bool Conv2DOp::isChannelSliceable() { return getGroup() == 1 || isDepthwise(*this); }

std::optional<HWindow> Deconv2DOp::getHWindow() {
  return HWindow{getKernelShape()[0], getStrides()[0], getDilations()[0], getPads()[0],
                 /*transposed=*/true};
}
bool Deconv2DOp::readsWholeOperand(unsigned operandNumber) { return operandNumber >= 1; }
bool Deconv2DOp::mixesChannels() { return true; }
bool Deconv2DOp::isChannelSliceable() { return getGroup() == 1; }
// Columns stay whole: a part of the output would need the input columns and
// left crop that layer groups compute only for rows (deconvRead).
bool Deconv2DOp::isWidthSliceable() { return false; }

std::optional<HWindow> Pool2DOp::getHWindow() {
  return HWindow{getKernelShape()[0], getStrides()[0], /*dilation=*/1, getPads()[0]};
}
std::optional<HWindow> Pool2DOp::getWWindow() {
  return HWindow{getKernelShape()[1], getStrides()[1], /*dilation=*/1, getPads()[1]};
}

// Its command maps output columns to source columns over the whole width
// (aux gives a window of rows only).
bool ResizeOp::isWidthSliceable() { return false; }

bool ActiveOp::readsWholeOperand(unsigned operandNumber) { return operandNumber == 1; }
