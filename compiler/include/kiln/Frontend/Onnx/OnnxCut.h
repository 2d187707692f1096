//===- OnnxCut.h - Extract a subgraph of an ONNX model ----------*- C++ -*-===//
//
// `kiln cut`: the part of a model that computes some tensors from others, as
// a standalone ONNX model, to reproduce a failing layer small. Implemented on
// libonnx's protobufs in KilnOnnxProto (RTTI and exceptions); like
// OnnxModel.h, nothing here includes ONNX, protobuf, MLIR or LLVM headers.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_ONNX_ONNXCUT_H
#define KILN_FRONTEND_ONNX_ONNXCUT_H

#include "kiln/Frontend/Onnx/OnnxModel.h"

#include <cstddef>
#include <string>
#include <vector>

namespace kiln::onnx_frontend {

struct CutResult {
  /// The new graph's inputs (the `from` tensors) and outputs (the `to`
  /// tensors), typed by ONNX shape inference on the source model.
  std::vector<ValueInfo> inputs, outputs;
  size_t nodes = 0;        ///< nodes kept
  size_t initializers = 0; ///< initializers kept
  /// `from` tensors nothing in the cut reads (still inputs of the model).
  std::vector<std::string> unusedInputs;
};

/// Reads the model at `modelPath` and writes to `outPath` the subgraph that
/// computes every `to` tensor from the `from` tensors, initializers and
/// constants: inputs = `from` (with their inferred types and shapes),
/// outputs = `to`, only the nodes and initializers they need, in the
/// original order, with the source's opsets, IR version and functions. The
/// result passes the ONNX checker. Returns "" on success, else
/// "<path>: error: <message>": a tensor that does not exist, a `to` tensor
/// that needs a graph input missing from `from` (both named), a tensor in
/// both lists, an unreadable or unwritable file. Never throws.
std::string cutModel(const std::string &modelPath,
                     const std::vector<std::string> &from,
                     const std::vector<std::string> &to,
                     const std::string &outPath, CutResult &result);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTEND_ONNX_ONNXCUT_H
