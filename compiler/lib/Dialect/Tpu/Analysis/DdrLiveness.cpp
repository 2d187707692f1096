//===- DdrLiveness.cpp - Where and when DDR activations live -------------===//

#include "kiln/Dialect/Tpu/Analysis/DdrLiveness.h"

#include "kiln/Dialect/Top/IR/TopOps.h"
#include "kiln/Dialect/Tpu/IR/TpuTypes.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::tpu;

static bool isInPlaceConcat(Operation *op) {
  auto concat = dyn_cast_or_null<ConcatOp>(op);
  return concat && concat.getInPlace();
}

static bool isInPlaceDma(Operation *op) {
  auto dma = dyn_cast_or_null<DmaOp>(op);
  return dma && dma.getInPlace();
}

bool tpu::runsCommands(Operation *op) {
  return !isa<top::WeightOp, top::NoneOp, func::ReturnOp, UnfoldRowsOp>(op) &&
         !viewSource(op) && !isInPlaceConcat(op) && !isInPlaceDma(op);
}

/// The value a concat input's bytes are computed into: the input with
/// reshapes (which keep every byte where it is) undone.
static Value concatMember(Value input) {
  while (auto reshape = input.getDefiningOp<ReshapeOp>())
    input = reshape.getInput();
  return input;
}

bool tpu::claimConcatInPlace(ConcatOp concat, llvm::DenseSet<Value> &placed) {
  auto type = cast<RankedTensorType>(concat.getType());
  if (concat.getInPlace() || !type.hasStaticShape())
    return false;
  const int64_t axis = static_cast<int64_t>(concat.getAxis());
  if (axis < 0 || axis >= type.getRank())
    return false;
  for (int64_t d = 0; d < axis; ++d)
    if (type.getDimSize(d) != 1)
      return false;
  llvm::SmallVector<Value> members;
  for (Value in : concat.getInputs()) {
    if (cast<RankedTensorType>(in.getType()).getElementType() != type.getElementType())
      return false;
    Value member = concatMember(in);
    Operation *def = member.getDefiningOp();
    if (!def || !isa<func::FuncOp>(def->getParentOp()) ||
        !(runsCommands(def) || isInPlaceConcat(def) || isa<UnfoldRowsOp>(def)) ||
        placed.contains(member) ||
        llvm::is_contained(members, member))
      return false;
    members.push_back(member);
  }
  placed.insert(members.begin(), members.end());
  return true;
}

void DdrLiveness::markRead(Value v, int64_t step) {
  for (Value u = v; u; u = info[u].parent)
    info[u].last = std::max(info[u].last, step);
}

Value DdrLiveness::rootOf(Value v) const {
  while (Value parent = info.lookup(v).parent)
    v = parent;
  return v;
}

uint64_t DdrLiveness::offsetInRoot(Value v) const {
  uint64_t offset = 0;
  for (Info i = info.lookup(v); i.parent; i = info.lookup(i.parent))
    offset += i.offset;
  return offset;
}

int64_t DdrLiveness::bufferOf(Value v) const {
  auto it = bufferIndex.find(rootOf(v));
  return it == bufferIndex.end() ? -1 : it->second;
}

int64_t DdrLiveness::lastStep(Value v) const {
  Info i = info.lookup(v);
  return std::max(i.last, i.def);
}

Value DdrLiveness::findInPlaceOperand(GroupOp group, int64_t step) const {
  if (group.getNumResults() != 1)
    return {};
  Value result = group.getResult(0);
  auto type = cast<RankedTensorType>(result.getType());
  if (rootOf(result) != result || bufs[bufferOf(result)].pinned)
    return {};
  for (Operation &inner : group.getBody().front()) {
    if (isa<LoadOp, StoreOp, YieldOp>(inner))
      continue;
    if (!inner.hasTrait<Pointwise>() ||
        cast<RankedTensorType>(inner.getResult(0).getType()).getShape() != type.getShape())
      return {};
  }
  for (auto load : group.getBody().front().getOps<LoadOp>()) {
    Value x = load.getInput();
    int64_t index = bufferOf(x);
    if (index < 0 || rootOf(x) != x || !x.getDefiningOp())
      continue;
    const Buffer &b = bufs[index];
    auto xType = cast<RankedTensorType>(x.getType());
    // Another view of x's bytes in the same group would map rows otherwise.
    bool otherView = llvm::any_of(group.getBody().front().getOps<LoadOp>(), [&](LoadOp other) {
      return other.getInput() != x && rootOf(other.getInput()) == x;
    });
    if (!otherView && !b.pinned && b.last == step && xType.getShape() == type.getShape() &&
        tensorBytes(x) == tensorBytes(result))
      return x;
  }
  return {};
}

FailureOr<DdrLiveness> DdrLiveness::compute(func::FuncOp func, bool keepTensors) {
  FailureOr<DdrLiveness> plain = computeWith(func, llvm::DenseMap<Operation *, Value>());
  if (failed(plain) || keepTensors)
    return plain;
  llvm::DenseMap<Operation *, Value> inPlace;
  int64_t step = 0;
  for (Operation &op : func.getBody().front()) {
    if (!runsCommands(&op))
      continue;
    if (auto group = dyn_cast<GroupOp>(op))
      if (Value x = plain->findInPlaceOperand(group, step))
        inPlace[group] = x;
    ++step;
  }
  if (inPlace.empty())
    return plain;
  return computeWith(func, inPlace);
}

FailureOr<DdrLiveness>
DdrLiveness::computeWith(func::FuncOp func, const llvm::DenseMap<Operation *, Value> &inPlace) {
  DdrLiveness l;
  l.inPlace = inPlace;
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    l.info[arg] = Info{};
    l.order.push_back(arg);
  }
  llvm::DenseSet<Value> weights;
  for (Operation &op : body) {
    if (auto weight = dyn_cast<top::WeightOp>(op)) {
      l.info[weight] = Info{};
      weights.insert(weight);
      continue;
    }
    if (isa<top::NoneOp>(op))
      continue;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands())
        l.markRead(v, l.steps);
      continue;
    }
    if (Value source = viewSource(&op)) {
      Value result = op.getResult(0);
      uint64_t offset = 0;
      if (auto view = dyn_cast<ViewOp>(op))
        offset = view.getOffset() * elementBytes(result);
      l.info[result] = Info{source, offset, l.info.lookup(source).def};
      if (!weights.contains(l.rootOf(source)))
        l.order.push_back(result);
      else
        weights.insert(result);
      continue;
    }
    // The producer stores the folded rows straight into the result's memory.
    if (auto unfold = dyn_cast<UnfoldRowsOp>(op)) {
      Value member = unfold.getInput();
      Info &m = l.info[member];
      if (m.parent || !member.getDefiningOp() || !runsCommands(member.getDefiningOp()) ||
          !member.hasOneUse())
        return unfold.emitError("unfolds rows that an op it alone reads must compute");
      m.parent = unfold.getResult();
      m.offset = 0;
      l.info[unfold.getResult()] = Info{Value(), 0, m.def};
      l.order.push_back(unfold.getResult());
      continue;
    }
    // Its input's producer stores the input into it through the copy's
    // strides: the input's bytes are the result's.
    if (auto dma = dyn_cast<DmaOp>(op); dma && dma.getInPlace()) {
      Value result = dma.getResult();
      Value member = concatMember(dma.getInputs()[0]);
      Info &m = l.info[member];
      if (m.parent || !member.getDefiningOp())
        return dma.emitError("an in-place dma needs an input it alone owns");
      m.parent = result;
      m.offset = 0;
      l.info[result] = Info{Value(), 0, m.def};
      l.order.push_back(result);
      continue;
    }
    if (auto concat = dyn_cast<ConcatOp>(op); concat && concat.getInPlace()) {
      Value result = concat.getResult();
      Info r;
      uint64_t prefix = 0;
      for (Value in : concat.getInputs()) {
        Value member = concatMember(in);
        Info &m = l.info[member];
        if (m.parent || !member.getDefiningOp())
          return concat.emitError("an in-place concat needs inputs it alone owns");
        m.parent = result;
        m.offset = prefix;
        prefix += tensorBytes(in);
        r.def = std::max(r.def, l.info.lookup(in).def);
      }
      l.info[result] = r;
      l.order.push_back(result);
      continue;
    }
    // Every top-level value this op (or an op it nests) reads.
    op.walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (l.info.count(operand) && !weights.contains(operand))
          l.markRead(operand, l.steps);
    });
    const Value over = inPlace.lookup(&op);
    for (Value result : op.getResults()) {
      l.info[result] = Info{over, 0, l.steps};
      l.order.push_back(result);
    }
    ++l.steps;
  }

  // Buffers: the span of every value they hold; inputs and outputs pinned.
  llvm::DenseSet<Value> pinned(body.getArguments().begin(), body.getArguments().end());
  for (Value v : body.getTerminator()->getOperands())
    pinned.insert(l.rootOf(v));
  for (Value v : l.order) {
    Value root = l.rootOf(v);
    auto [it, added] = l.bufferIndex.try_emplace(root, (int64_t)l.bufs.size());
    if (added) {
      Buffer b;
      b.root = root;
      b.bytes = tensorBytes(root);
      b.first = l.firstStep(v);
      b.last = l.lastStep(v);
      b.pinned = pinned.contains(root);
      l.bufs.push_back(b);
    }
    Buffer &b = l.bufs[it->second];
    b.first = std::min(b.first, l.firstStep(v));
    b.last = std::max(b.last, l.lastStep(v));
  }
  for (Buffer &b : l.bufs)
    if (b.pinned) {
      b.first = kBeforeRun;
      b.last = l.steps;
    }
  return l;
}
