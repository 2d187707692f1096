//===- ImportRandom.cpp - Operators that draw random numbers --------------===//
//
// The chip has no random number generator, so a random op is either frozen
// into a seeded sample at compile time (`random_ops: const`) or becomes a
// model input the caller fills (`random_ops: input`, e.g. with the noise a
// reference run used). By default it is an error that says so.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/IR/Builders.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace kiln;
using namespace kiln::onnx_frontend;

bool Importer::isRandomOp(StringRef opType) {
  return opType == "RandomNormal" || opType == "RandomNormalLike" ||
         opType == "RandomUniform" || opType == "RandomUniformLike";
}

void Importer::rejectRandom(const Node &node) {
  nodeError(node)
      << "draws random numbers at run time, which the chip cannot do; set "
         "`random_ops: const` in the deployment config to freeze a seeded "
         "sample at compile time (reproducible, see `random_seed`), or "
         "`random_ops: input` to make '"
      << node.outputs[0] << "' a model input that `kiln run` fills from the npz";
}

LogicalResult Importer::importRandom(const Node &node) {
  bool like = StringRef(node.opType).ends_with("Like");
  SmallVector<int64_t> shape;
  if (like) {
    FailureOr<SmallVector<int64_t>> in = inputShape(node, 0);
    if (failed(in))
      return failure();
    shape = *in;
  } else {
    shape = getInts(node, "shape", {});
  }
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }) ||
      elementCount(shape) > kMaxElements)
    return nodeError(node) << "shape " << shapeStr(shape)
                           << " is not a tensor shape kiln compiles";
  int64_t dtype = getInt(node, "dtype", kFloat);
  if (dtype != kFloat)
    return unsupportedAttr(node, "dtype", std::to_string(dtype),
                           "(kiln's random tensors are float)");
  auto type = RankedTensorType::get(shape, builder.getF32Type());

  if (options.randomOps == RandomOps::Input) {
    unsigned index = entryBlock->getNumArguments();
    Value arg = entryBlock->addArgument(type, nameLoc(node.outputs[0]));
    randomInputs.push_back({index, node.outputs[0]});
    values[node.outputs[0]] = arg;
    return success();
  }

  // RandomOps::Const: one reproducible sample. A node's own seed wins; else
  // the config's seed mixed with the output name, so nodes differ.
  uint64_t seed = options.randomSeed ^ llvm::hash_value(node.outputs[0]);
  // ONNX's seed is a float; one out of uint64's range keeps the default.
  if (const OnnxAttr *s = node.attr("seed"); s && s->f >= 0 && s->f < 0x1p64f)
    seed = static_cast<uint64_t>(s->f);
  std::mt19937_64 engine(seed);
  if (failed(checkConstantShape(node, shape)))
    return failure();
  std::vector<float> data(elementCount(shape));
  bool normal = StringRef(node.opType).starts_with("RandomNormal");
  if (normal) {
    std::normal_distribution<float> dist(getFloat(node, "mean", 0.f),
                                         getFloat(node, "scale", 1.f));
    for (float &x : data)
      x = dist(engine);
  } else {
    std::uniform_real_distribution<float> dist(getFloat(node, "low", 0.f),
                                               getFloat(node, "high", 1.f));
    for (float &x : data)
      x = dist(engine);
  }
  Value w = derivedWeight(shape, data, node.outputs[0]);
  values[node.outputs[0]] = w;
  return success();
}
