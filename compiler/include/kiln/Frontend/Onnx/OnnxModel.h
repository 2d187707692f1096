//===- OnnxModel.h - An ONNX model as plain C++ structs ---------*- C++ -*-===//
//
// The boundary between libonnx (which needs RTTI and exceptions) and the MLIR
// importer (built like LLVM, without either). KilnOnnxProto parses, checks,
// shape-infers and upgrades a model with libonnx and copies what the importer
// needs into these structs, so no ONNX or protobuf header crosses over.
// Nothing here includes MLIR/LLVM or ONNX headers.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_ONNX_ONNXMODEL_H
#define KILN_FRONTEND_ONNX_ONNXMODEL_H

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::onnx_frontend {

/// ONNX TensorProto.DataType values the importer looks at.
enum ElemType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
};

/// The ONNX name of an element type ("float", "int64", ...).
const char *elemTypeName(int32_t elemType);

/// True for the types whose values land in TensorData::f32.
bool isFloatElemType(int32_t elemType);

/// An initializer or Constant value. Floating-point types (float, double,
/// float16, bfloat16) are converted to `f32`; integer and bool types to `i64`.
struct TensorData {
  std::string name;
  int32_t elemType = kUndefined;
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<int64_t> i64;

  bool isFloat() const { return isFloatElemType(elemType); }
  int64_t numElements() const;
  /// Whether it holds its values (not so for strings and other types kiln
  /// does not read).
  bool hasValues() const {
    return int64_t(isFloat() ? f32.size() : i64.size()) == numElements();
  }
};

struct Attribute {
  enum Kind { Int, Float, String, Ints, Floats, Tensor, Other };
  std::string name;
  Kind kind = Other;
  int64_t i = 0;
  float f = 0.0f;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  TensorData t;
};

struct Node {
  std::string name;
  std::string opType;
  std::string domain; // "" for the default ai.onnx domain
  /// Absent optional inputs/outputs are empty strings, as in ONNX.
  std::vector<std::string> inputs, outputs;
  std::vector<Attribute> attrs;

  /// The attribute called `name`, or null.
  const Attribute *attr(std::string_view name) const;
};

struct ValueInfo {
  std::string name;
  int32_t elemType = kUndefined;
  /// -1 for a dimension that is unknown or symbolic.
  std::vector<int64_t> shape;
  /// True when the rank is known and every dimension is static.
  bool known = false;
};

struct Model {
  /// The version of the default (ai.onnx) opset, after any conversion.
  int64_t opset = 0;
  /// The version the model was written for (before conversion), for the
  /// few semantics the converter does not carry over (PRelu before 7).
  int64_t sourceOpset = 0;
  /// Graph inputs that are not initializers, in graph order.
  std::vector<ValueInfo> inputs, outputs;
  std::map<std::string, TensorData> initializers;
  /// In topological order (the checker enforces it).
  std::vector<Node> nodes;
  /// Every typed value after shape inference: inputs, outputs, intermediates.
  std::map<std::string, ValueInfo> valueInfo;
};

/// Sizes in a model are checked before any arithmetic on them: a tensor or
/// shape over this many elements is refused (far more than any real tensor,
/// far from overflowing int64 counts of bytes).
constexpr int64_t kMaxElements = int64_t(1) << 40;
/// A constant the importer computes (ConstantOfShape, Expand, Tile, Range,
/// folded ops) holds at most this many elements, or no more than its
/// largest input: a few bytes of a model must not make the compiler
/// allocate gigabytes, while moving a large weight (a Transpose) stays
/// possible.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 25;

/// Oldest and newest default-domain opsets the importer accepts. Older models
/// are converted up to kMinOpset.
constexpr int64_t kMinOpset = 11;
constexpr int64_t kMaxOpset = 17;

/// Parses `path`, runs the ONNX checker, converts opsets older than kMinOpset,
/// applies `inputShapes` (graph input name -> full shape), runs ONNX shape
/// inference (non-strict, with data propagation) and fills `out`. Returns ""
/// on success, otherwise "<path>: error: <message>". Never throws.
///
/// With `imports` (which default-domain operators the caller imports), a
/// model with any other operator is filled in as parsed and checked, with
/// neither conversion nor inference: libonnx's converter and inference
/// functions, which have crashed on hostile models, only see operators the
/// caller goes on to import, and the caller reports the others.
std::string
loadModel(const std::string &path,
          const std::map<std::string, std::vector<int64_t>> &inputShapes,
          Model &out,
          const std::function<bool(const std::string &opType)> &imports = {});

/// Reads a serialized TensorProto file (as the ONNX backend test data stores
/// inputs and outputs) into `out`. Returns "" on success, otherwise
/// "<path>: error: <message>". Never throws.
std::string loadTensor(const std::string &path, TensorData &out);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTEND_ONNX_ONNXMODEL_H
