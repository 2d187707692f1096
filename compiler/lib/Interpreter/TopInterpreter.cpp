//===- TopInterpreter.cpp - Runs a Top function op by op ------------------===//

#include "kiln/Interpreter/TopInterpreter.h"

#include "Kernels.h"
#include "kiln/Support/Names.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace kiln::interp {

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

int64_t Tensor::numElements() const { return product(shape); }

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

void forEachIndex(ArrayRef<int64_t> shape,
                  function_ref<void(ArrayRef<int64_t>)> fn) {
  int64_t count = product(shape);
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    fn(index);
    // Advance like an odometer, last dimension fastest.
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

} // namespace kiln::interp

using namespace kiln;
using namespace kiln::interp;

/// Whether `shape` fits `type`: same rank, equal wherever `type` is static.
static bool fitsType(RankedTensorType type, ArrayRef<int64_t> shape) {
  if (type.getRank() != static_cast<int64_t>(shape.size()))
    return false;
  for (auto [want, have] : llvm::zip(type.getShape(), shape))
    if (!ShapedType::isDynamic(want) && want != have)
      return false;
  return true;
}

/// The `kiln.name` string attribute if present, else `prefix<index>`.
static std::string nameOr(StringAttr name, StringRef prefix, unsigned index) {
  return name ? name.str() : (prefix + Twine(index)).str();
}

static FailureOr<Tensor> readWeightTensor(top::WeightOp op) {
  auto type = cast<RankedTensorType>(op.getOutput().getType());
  ElementsAttr value = op.getValue();
  // readWeight understands f32 and 8-bit integer (QDQ models' INT8 weights,
  // read as their integer values) dense and dense resource attributes only.
  Type elem = value.getElementType();
  if (!isa<DenseElementsAttr, DenseResourceElementsAttr>(value) ||
      !(elem.isF32() || elem.isInteger(8)))
    return op.emitOpError(
        "expects f32 or 8-bit integer dense or dense resource data");
  if (!type.hasStaticShape())
    return op.emitOpError("expects a static shape");
  Tensor out{type.getShape().vec(), top::readWeight(op)};
  if (static_cast<int64_t>(out.data.size()) != out.numElements())
    return op.emitOpError("holds ")
           << out.data.size() << " values but its type needs "
           << out.numElements();
  return out;
}

namespace {
/// The values of one run. top.none results have no entry: a none operand is
/// an absent optional operand.
class Interpreter {
public:
  LogicalResult bindArguments(func::FuncOp func, const TensorMap &inputs);
  LogicalResult execute(Operation *op, TensorMap *allValues);
  void collectOutputs(func::FuncOp func, func::ReturnOp ret,
                      TensorMap &outputs);
  const Tensor &valueOf(Value v) { return get(v); }

private:
  FailureOr<Tensor> evaluate(Operation *op);
  void releaseDeadOperands(Operation *op);

  /// Dominance guarantees an operand was computed before its user runs.
  const Tensor &get(Value v) {
    auto it = values.find(v);
    assert(it != values.end() && "operand has not been computed");
    return it->second;
  }
  const Tensor *getOptional(Value v) {
    return isa<NoneType>(v.getType()) ? nullptr : &get(v);
  }

  llvm::DenseMap<Value, Tensor> values;
};
} // namespace

LogicalResult Interpreter::bindArguments(func::FuncOp func,
                                         const TensorMap &inputs) {
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    std::string name =
        nameOr(func.getArgAttrOfType<StringAttr>(i, "kiln.name"), "arg", i);
    auto it = inputs.find(name);
    if (it == inputs.end())
      return func.emitError() << "missing input '" << name << "'";
    const Tensor &t = it->second;
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !fitsType(type, t.shape))
      return func.emitError()
             << "input '" << name << "' has shape [" << t.shape
             << "] but argument " << i << " is " << arg.getType();
    if (static_cast<int64_t>(t.data.size()) != t.numElements())
      return func.emitError() << "input '" << name << "' has " << t.data.size()
                              << " values for shape [" << t.shape << "]";
    values[arg] = t;
  }
  return success();
}

FailureOr<Tensor> Interpreter::evaluate(Operation *op) {
  SmallVector<const Tensor *> operands;
  for (Value v : op->getOperands())
    operands.push_back(getOptional(v));
  return evaluateOp(op, operands);
}

bool kiln::interp::readsOnlyWeights(Operation *op) {
  return op->getNumOperands() > 0 && llvm::all_of(op->getOperands(), [](Value v) {
           return v.getDefiningOp<top::WeightOp>() || v.getDefiningOp<top::NoneOp>();
         });
}

FailureOr<Tensor> kiln::interp::evaluateOnWeights(Operation *op) {
  std::vector<Tensor> tensors;
  tensors.reserve(op->getNumOperands()); // the pointers below stay valid
  SmallVector<const Tensor *> operands;
  for (Value v : op->getOperands()) {
    if (v.getDefiningOp<top::NoneOp>()) {
      operands.push_back(nullptr);
      continue;
    }
    FailureOr<Tensor> t = evaluateOp(v.getDefiningOp(), {});
    if (failed(t))
      return failure();
    tensors.push_back(std::move(*t));
    operands.push_back(&tensors.back());
  }
  return evaluateOp(op, operands);
}

FailureOr<Tensor> kiln::interp::evaluateOp(Operation *op,
                                           ArrayRef<const Tensor *> operands) {
  using Result = FailureOr<Tensor>;
  if (operands.size() != op->getNumOperands())
    return op->emitOpError("evaluated with ")
           << operands.size() << " operands, expects " << op->getNumOperands();
  // Only a top.none operand may be absent.
  for (auto [value, tensor] : llvm::zip(op->getOperands(), operands))
    if (!tensor && !isa<NoneType>(value.getType()))
      return op->emitOpError("evaluated without one of its operands");
  auto in = [&](unsigned i) -> const Tensor & { return *operands[i]; };
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([&](top::WeightOp w) { return readWeightTensor(w); })
      .Case(
          [&](top::ConvOp c) { return runConv(c, in(0), in(1), operands[2]); })
      .Case([&](top::DeconvOp d) {
        return runDeconv(d, in(0), in(1), operands[2]);
      })
      .Case([&](top::BatchNormOp b) {
        return runBatchNorm(b, in(0), in(1), in(2), in(3), in(4));
      })
      .Case([&](top::ReluOp) -> Result { return runRelu(in(0)); })
      .Case<top::AddOp, top::SubOp, top::MulOp, top::DivOp, top::PowOp,
            top::MaxOp, top::MinOp, top::PReluOp>(
          [&](Operation *binary) { return runBinary(binary, in(0), in(1)); })
      .Case([&](top::ActiveOp a) { return runActive(a, in(0)); })
      .Case([&](top::SoftmaxOp s) { return runSoftmax(s, in(0)); })
      .Case([&](top::ReduceOp r) { return runReduce(r, in(0)); })
      .Case([&](top::MaxPoolOp p) { return runMaxPool(p, in(0)); })
      .Case([&](top::AvgPoolOp p) { return runAvgPool(p, in(0)); })
      .Case([&](top::GlobalAvgPoolOp p) { return runGlobalAvgPool(p, in(0)); })
      .Case([&](top::GlobalMaxPoolOp p) { return runGlobalMaxPool(p, in(0)); })
      .Case([&](top::MatMulOp m) {
        return runMatMul(m, in(0), in(1), operands[2]);
      })
      .Case([&](top::ReshapeOp r) { return runReshape(r, in(0)); })
      .Case([&](top::ConcatOp c) { return runConcat(c, operands); })
      .Case([&](top::TransposeOp t) { return runTranspose(t, in(0)); })
      .Case([&](top::SliceOp s) { return runSlice(s, in(0)); })
      .Case([&](top::GatherOp g) { return runGather(g, in(0)); })
      .Case([&](top::ExpandOp e) { return runExpand(e, in(0)); })
      .Case([&](top::PadOp p) { return runPad(p, in(0)); })
      .Case([&](top::ResizeOp r) { return runResize(r, in(0)); })
      .Case([&](top::QuantizeLinearOp q) {
        return runQuantizeLinear(q, in(0));
      })
      .Case([&](top::DequantizeLinearOp d) {
        return runDequantizeLinear(d, in(0));
      })
      .Default([](Operation *op) -> Result {
        return op->emitOpError("is not supported by the Top interpreter");
      });
}

LogicalResult Interpreter::execute(Operation *op, TensorMap *allValues) {
  if (isa<top::NoneOp>(op))
    return success();
  FailureOr<Tensor> result = evaluate(op);
  if (failed(result))
    return failure();
  // The kernels derive shapes from the data, independently of shape
  // inference; a disagreement means the IR's types are stale or wrong.
  Value out = op->getResult(0);
  auto type = dyn_cast<RankedTensorType>(out.getType());
  if (!type || !fitsType(type, result->shape))
    return op->emitOpError("computes shape [")
           << result->shape << "] but its result type is " << out.getType();
  // Weights are constants, not layer outputs: leave them out of the dump.
  if (allValues && !isa<top::WeightOp>(op))
    if (std::string name = opName(op); !name.empty())
      (*allValues)[name] = *result;
  values[out] = std::move(*result);
  releaseDeadOperands(op);
  return success();
}

/// Frees operands this op was the last to read, so peak memory follows the
/// live activations rather than the whole network.
void Interpreter::releaseDeadOperands(Operation *op) {
  for (Value v : op->getOperands()) {
    bool dead = llvm::all_of(v.getUsers(), [&](Operation *user) {
      return user == op ||
             (user->getBlock() == op->getBlock() && user->isBeforeInBlock(op));
    });
    if (dead)
      values.erase(v);
  }
}

void Interpreter::collectOutputs(func::FuncOp func, func::ReturnOp ret,
                                 TensorMap &outputs) {
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    outputs[nameOr(func.getResultAttrOfType<StringAttr>(i, "kiln.name"), "out",
                   i)] = get(v);
}

LogicalResult kiln::interp::runTop(func::FuncOp func, const TensorMap &inputs,
                                   TensorMap &outputs, TensorMap *allValues) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitOpError("expects a body of a single block");
  Interpreter interpreter;
  if (failed(interpreter.bindArguments(func, inputs)))
    return failure();
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      interpreter.collectOutputs(func, ret, outputs);
      return success();
    }
    if (failed(interpreter.execute(&op, allValues)))
      return failure();
  }
  return func.emitOpError("has no func.return");
}

LogicalResult kiln::interp::TopRun::run(func::FuncOp func, const TensorMap &inputs) {
  func_ = func;
  values_.clear();
  outputs_.clear();
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitOpError("expects a body of a single block");
  Interpreter interpreter;
  if (failed(interpreter.bindArguments(func, inputs)))
    return failure();
  for (BlockArgument arg : func.getArguments())
    values_[arg] = interpreter.valueOf(arg);
  auto operand = [&](Value v) -> const Tensor * {
    return isa<NoneType>(v.getType()) ? nullptr : &values_.find(v)->second;
  };
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands()))
        outputs_[nameOr(func.getResultAttrOfType<StringAttr>(i, "kiln.name"), "out", i)] =
            *operand(v);
      return success();
    }
    if (isa<top::NoneOp>(op))
      continue;
    SmallVector<const Tensor *> operands;
    for (Value v : op.getOperands())
      operands.push_back(operand(v));
    FailureOr<Tensor> result = evaluateOp(&op, operands);
    if (failed(result))
      return failure();
    values_[op.getResult(0)] = std::move(*result);
  }
  return func.emitOpError("has no func.return");
}

TensorMap kiln::interp::TopRun::namedValues() const {
  TensorMap named;
  func::FuncOp func = func_; // a handle: its accessors are not const
  for (Operation &op : func.getBody().front())
    if (op.getNumResults() == 1 && !isa<top::WeightOp, top::NoneOp>(op))
      if (std::string name = opName(&op); !name.empty())
        if (auto it = values_.find(op.getResult(0)); it != values_.end())
          named[name] = it->second;
  return named;
}

LogicalResult kiln::interp::TopRun::rerunWith(const std::string &name, const Tensor &value,
                                              TensorMap &outputs) {
  Block &body = func_.getBody().front();
  Operation *replaced = nullptr;
  for (Operation &op : body)
    if (op.getNumResults() == 1 && !isa<top::WeightOp, top::NoneOp>(op) && opName(&op) == name)
      replaced = &op;
  if (!replaced || values_.find(replaced->getResult(0))->second.shape != value.shape)
    return failure();
  // The ops after it that read a changed value change; the rest keep theirs.
  llvm::DenseMap<Value, Tensor> changed;
  changed[replaced->getResult(0)] = value;
  auto current = [&](Value v) -> const Tensor * {
    if (isa<NoneType>(v.getType()))
      return nullptr;
    auto it = changed.find(v);
    return it != changed.end() ? &it->second : &values_.find(v)->second;
  };
  for (Operation *op = replaced->getNextNode(); op; op = op->getNextNode()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands()))
        outputs[nameOr(func_.getResultAttrOfType<StringAttr>(i, "kiln.name"), "out", i)] =
            *current(v);
      return success();
    }
    if (llvm::none_of(op->getOperands(), [&](Value v) { return changed.count(v); }))
      continue;
    SmallVector<const Tensor *> operands;
    for (Value v : op->getOperands())
      operands.push_back(current(v));
    FailureOr<Tensor> result = evaluateOp(op, operands);
    if (failed(result))
      return failure();
    changed[op->getResult(0)] = std::move(*result);
  }
  return func_.emitOpError("has no func.return");
}
