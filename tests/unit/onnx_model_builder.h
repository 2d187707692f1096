//===- onnx_model_builder.h - Write small ONNX models for tests -*- C++ -*-===//
//
// Builds ONNX models in memory and writes them to disk. The implementation
// (onnx_model_builder.cpp) uses onnx::ModelProto and is compiled with RTTI
// and exceptions; this header has no ONNX types, so no-RTTI test code that
// includes MLIR can use it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_UNIT_ONNX_MODEL_BUILDER_H
#define KILN_TESTS_UNIT_ONNX_MODEL_BUILDER_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::test {

/// One node attribute; build with the helpers below.
struct OnnxAttr {
  enum Kind { Int, Float, String, Ints, Floats };
  std::string name;
  Kind kind = Int;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
};

inline OnnxAttr attrInt(std::string name, int64_t v) {
  OnnxAttr a;
  a.name = std::move(name);
  a.kind = OnnxAttr::Int;
  a.i = v;
  return a;
}
inline OnnxAttr attrFloat(std::string name, float v) {
  OnnxAttr a;
  a.name = std::move(name);
  a.kind = OnnxAttr::Float;
  a.f = v;
  return a;
}
inline OnnxAttr attrString(std::string name, std::string v) {
  OnnxAttr a;
  a.name = std::move(name);
  a.kind = OnnxAttr::String;
  a.s = std::move(v);
  return a;
}
inline OnnxAttr attrInts(std::string name, std::vector<int64_t> v) {
  OnnxAttr a;
  a.name = std::move(name);
  a.kind = OnnxAttr::Ints;
  a.ints = std::move(v);
  return a;
}
inline OnnxAttr attrFloats(std::string name, std::vector<float> v) {
  OnnxAttr a;
  a.name = std::move(name);
  a.kind = OnnxAttr::Floats;
  a.floats = std::move(v);
  return a;
}

class OnnxModelBuilder {
public:
  explicit OnnxModelBuilder(int64_t opset = 13);
  ~OnnxModelBuilder();
  OnnxModelBuilder(const OnnxModelBuilder &) = delete;
  OnnxModelBuilder &operator=(const OnnxModelBuilder &) = delete;

  /// A float input; a negative dimension becomes the symbolic dim "N".
  void addInput(const std::string &name, const std::vector<int64_t> &shape,
                int32_t elemType = 1);
  /// A float sparse-tensor input (kiln refuses those).
  void addSparseInput(const std::string &name,
                      const std::vector<int64_t> &shape);
  /// A float output; the checker wants a shape on graph outputs. A negative
  /// dimension becomes the symbolic dim "N".
  void addOutput(const std::string &name, const std::vector<int64_t> &shape,
                 int32_t elemType = 1);
  void addInitializer(const std::string &name,
                      const std::vector<int64_t> &shape,
                      const std::vector<float> &data);
  void addInitializerI64(const std::string &name,
                         const std::vector<int64_t> &shape,
                         const std::vector<int64_t> &data);
  /// An initializer of any type from its little-endian bytes (raw_data).
  void addInitializerRaw(const std::string &name,
                         const std::vector<int64_t> &shape, int32_t elemType,
                         const std::string &bytes);
  /// Typed storage: int32_data (also 16-bit floats' bits) and double_data.
  void addInitializerInt32Data(const std::string &name,
                               const std::vector<int64_t> &shape,
                               int32_t elemType,
                               const std::vector<int32_t> &data);
  void addInitializerDoubleData(const std::string &name,
                                const std::vector<int64_t> &shape,
                                const std::vector<double> &data);
  /// A float initializer whose data lives in `location` (relative to the
  /// model) at `offset`, `length` bytes.
  void addExternalInitializer(const std::string &name,
                              const std::vector<int64_t> &shape,
                              const std::string &location, int64_t offset,
                              int64_t length);
  /// A Constant node with a float tensor `value`.
  void addConstant(const std::string &output, const std::vector<int64_t> &shape,
                   const std::vector<float> &data);
  void addNode(const std::string &opType, const std::string &name,
               const std::vector<std::string> &inputs,
               const std::vector<std::string> &outputs,
               const std::vector<OnnxAttr> &attrs = {},
               const std::string &domain = "");

  /// The serialized ModelProto.
  std::string serialize() const;
  /// Writes the model; returns false on I/O failure.
  bool save(const std::string &path) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Writes the model at `in` to `out` with each graph input named in `bake`
/// (input name -> serialized TensorProto file) turned into an initializer
/// holding that file's tensor. Returns "" or an error message.
std::string
bakeInputs(const std::string &in, const std::string &out,
           const std::vector<std::pair<std::string, std::string>> &bake);

/// Values 0, 1, 2, ... scaled into [-0.5, 0.5): deterministic test weights.
std::vector<float> rampData(int64_t count, float scale = 0.01f);

} // namespace kiln::test

#endif // KILN_TESTS_UNIT_ONNX_MODEL_BUILDER_H
