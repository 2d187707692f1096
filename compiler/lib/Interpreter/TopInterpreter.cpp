//===- TopInterpreter.cpp - Runs a Top function op by op ------------------===//

#include "kiln/Interpreter/TopInterpreter.h"

#include "Kernels.h"

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
  // readWeight understands f32 dense and dense resource attributes only.
  if (!isa<DenseElementsAttr, DenseResourceElementsAttr>(value) ||
      !value.getElementType().isF32())
    return op.emitOpError("expects f32 dense or dense resource data");
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
  using Result = FailureOr<Tensor>;
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([&](top::WeightOp w) { return readWeightTensor(w); })
      .Case([&](top::ConvOp c) {
        return runConv(c, get(c.getInput()), get(c.getFilter()),
                       getOptional(c.getBias()));
      })
      .Case([&](top::BatchNormOp b) {
        return runBatchNorm(b, get(b.getInput()), get(b.getScale()),
                            get(b.getBias()), get(b.getMean()),
                            get(b.getVariance()));
      })
      .Case([&](top::ReluOp r) -> Result { return runRelu(get(r.getInput())); })
      .Case([&](top::AddOp a) {
        return runAdd(a, get(a.getLhs()), get(a.getRhs()));
      })
      .Case([&](top::MulOp m) {
        return runMul(m, get(m.getLhs()), get(m.getRhs()));
      })
      .Case([&](top::MaxPoolOp p) { return runMaxPool(p, get(p.getInput())); })
      .Case([&](top::AvgPoolOp p) { return runAvgPool(p, get(p.getInput())); })
      .Case([&](top::GlobalAvgPoolOp p) {
        return runGlobalAvgPool(p, get(p.getInput()));
      })
      .Case([&](top::MatMulOp m) {
        return runMatMul(m, get(m.getInput()), get(m.getRight()),
                         getOptional(m.getBias()));
      })
      .Case([&](top::ReshapeOp r) { return runReshape(r, get(r.getInput())); })
      .Case([&](top::ConcatOp c) {
        llvm::SmallVector<const Tensor *> inputs;
        for (Value v : c.getInputs())
          inputs.push_back(&get(v));
        return runConcat(c, inputs);
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
    if (auto name = op->getLoc()->findInstanceOf<NameLoc>())
      (*allValues)[name.getName().str()] = *result;
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
