//===- OnnxCut.cpp - Extract a subgraph of an ONNX model ------------------===//
//
// Compiled into KilnOnnxProto with RTTI and exceptions; every libonnx and
// protobuf exception is caught here and turned into an error string.
//
//===----------------------------------------------------------------------===//
#include "kiln/Frontend/Onnx/OnnxCut.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kiln::onnx_frontend {

namespace {

struct CutError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename... Args> [[noreturn]] void fail(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  throw CutError(os.str());
}

/// Names a nested graph (If/Loop/Scan bodies) reads from enclosing scopes.
void collectOuterRefs(const onnx::GraphProto &g, std::set<std::string> &refs) {
  std::set<std::string> local;
  for (const auto &v : g.input())
    local.insert(v.name());
  for (const auto &t : g.initializer())
    local.insert(t.name());
  for (const auto &n : g.node()) {
    for (const auto &in : n.input())
      if (!in.empty() && !local.count(in))
        refs.insert(in);
    for (const auto &a : n.attribute()) {
      std::set<std::string> inner;
      if (a.has_g())
        collectOuterRefs(a.g(), inner);
      for (const auto &sub : a.graphs())
        collectOuterRefs(sub, inner);
      for (const auto &r : inner)
        if (!local.count(r))
          refs.insert(r);
    }
    for (const auto &out : n.output())
      local.insert(out);
  }
}

/// Every tensor a node reads: its inputs and its subgraphs' outer names.
std::vector<std::string> nodeReads(const onnx::NodeProto &n) {
  std::vector<std::string> reads;
  for (const auto &in : n.input())
    if (!in.empty())
      reads.push_back(in);
  std::set<std::string> refs;
  for (const auto &a : n.attribute()) {
    if (a.has_g())
      collectOuterRefs(a.g(), refs);
    for (const auto &sub : a.graphs())
      collectOuterRefs(sub, refs);
  }
  reads.insert(reads.end(), refs.begin(), refs.end());
  return reads;
}

ValueInfo toValueInfo(const onnx::ValueInfoProto &v) {
  ValueInfo out;
  out.name = v.name();
  if (!v.type().has_tensor_type())
    return out;
  const auto &tt = v.type().tensor_type();
  out.elemType = tt.elem_type();
  if (!tt.has_shape())
    return out;
  out.known = true;
  for (const auto &dim : tt.shape().dim()) {
    const bool isStatic = dim.has_dim_value() && dim.dim_value() >= 0;
    out.shape.push_back(isStatic ? dim.dim_value() : -1);
    out.known &= isStatic;
  }
  return out;
}

void cut(const std::string &modelPath, const std::vector<std::string> &from,
         const std::vector<std::string> &to, const std::string &outPath,
         CutResult &result) {
  std::ifstream in(modelPath, std::ios::binary);
  if (!in)
    fail("cannot open model: ", std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes) || !model.has_graph())
    fail("not a valid ONNX model");
  bytes = std::string();
  const onnx::GraphProto &g = model.graph();
  for (const auto &t : g.initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      fail("initializer '", t.name(),
           "' is stored as external data, which cut does not support");

  if (from.empty())
    fail("no tensors to cut from");
  if (to.empty())
    fail("no tensors to cut to");

  // Where each name comes from.
  std::map<std::string, int> producer; // node output -> node index
  std::map<std::string, const onnx::TensorProto *> initializers;
  std::set<std::string> graphInputs;
  for (const auto &t : g.initializer())
    initializers[t.name()] = &t;
  for (const auto &v : g.input())
    if (!initializers.count(v.name()))
      graphInputs.insert(v.name());
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto &out : g.node(i).output())
      if (!out.empty())
        producer[out] = i;
  auto exists = [&](const std::string &name) {
    return producer.count(name) || initializers.count(name) ||
           graphInputs.count(name);
  };
  auto checkNames = [&](const std::vector<std::string> &names,
                        const char *what) {
    std::set<std::string> seen;
    for (const auto &name : names) {
      if (!exists(name))
        fail(what, " tensor '", name, "' does not exist in the model");
      if (!seen.insert(name).second)
        fail(what, " tensor '", name, "' is given twice");
    }
  };
  checkNames(from, "--from");
  checkNames(to, "--to");
  const std::set<std::string> fromSet(from.begin(), from.end());
  for (const auto &name : to)
    if (fromSet.count(name))
      fail("tensor '", name, "' is in both --from and --to");

  // Walk back from each output to the inputs.
  std::vector<bool> keepNode(g.node_size(), false);
  std::set<std::string> keptInits, visited, usedFrom;
  for (const auto &target : to) {
    std::vector<std::string> stack{target};
    while (!stack.empty()) {
      const std::string name = stack.back();
      stack.pop_back();
      if (!visited.insert(name).second)
        continue;
      if (fromSet.count(name)) {
        usedFrom.insert(name);
        continue;
      }
      if (auto p = producer.find(name); p != producer.end()) {
        keepNode[p->second] = true;
        for (auto &read : nodeReads(g.node(p->second)))
          stack.push_back(std::move(read));
        continue;
      }
      if (initializers.count(name)) {
        keptInits.insert(name);
        continue;
      }
      if (graphInputs.count(name))
        fail("--to tensor '", target, "' needs graph input '", name,
             "', which is not in --from");
      fail("tensor '", name, "', which --to tensor '", target,
           "' needs, is produced by no node, initializer or input");
    }
  }

  // Types and shapes of every value.
  onnx::ModelProto typed = model;
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false,
                                        /*strict_mode=*/0,
                                        /*data_prop=*/true);
    onnx::shape_inference::InferShapes(
        typed, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    fail("ONNX shape inference failed: ", e.what());
  }
  std::map<std::string, const onnx::ValueInfoProto *> types;
  for (const auto &v : typed.graph().value_info())
    types[v.name()] = &v;
  for (const auto &v : typed.graph().output())
    types[v.name()] = &v;
  for (const auto &v : typed.graph().input())
    types[v.name()] = &v;
  auto typeOf = [&](const std::string &name,
                    const char *what) -> onnx::ValueInfoProto {
    onnx::ValueInfoProto v;
    if (auto it = types.find(name);
        it != types.end() && it->second->type().has_tensor_type() &&
        it->second->type().tensor_type().elem_type() != 0) {
      v = *it->second;
    } else if (auto init = initializers.find(name);
               init != initializers.end()) {
      v.set_name(name);
      auto *tt = v.mutable_type()->mutable_tensor_type();
      tt->set_elem_type(init->second->data_type());
      auto *shape = tt->mutable_shape();
      for (int64_t d : init->second->dims())
        shape->add_dim()->set_dim_value(d);
    } else {
      fail("shape inference gives no tensor type for ", what, " tensor '",
           name, "'");
    }
    v.clear_doc_string();
    return v;
  };

  onnx::ModelProto sub;
  sub.set_ir_version(model.ir_version());
  *sub.mutable_opset_import() = model.opset_import();
  *sub.mutable_functions() = model.functions();
  sub.set_producer_name("kiln cut");
  sub.set_domain(model.domain());
  sub.set_model_version(model.model_version());
  onnx::GraphProto &sg = *sub.mutable_graph();
  sg.set_name(g.name() + "_cut");
  {
    std::ostringstream doc;
    doc << "cut of " << modelPath << " from";
    for (const auto &f : from)
      doc << " " << f;
    doc << " to";
    for (const auto &t : to)
      doc << " " << t;
    sg.set_doc_string(doc.str());
  }
  for (const auto &name : from) {
    *sg.add_input() = typeOf(name, "--from");
    result.inputs.push_back(toValueInfo(sg.input(sg.input_size() - 1)));
    if (!usedFrom.count(name))
      result.unusedInputs.push_back(name);
  }
  for (const auto &name : to) {
    *sg.add_output() = typeOf(name, "--to");
    result.outputs.push_back(toValueInfo(sg.output(sg.output_size() - 1)));
  }
  const std::set<std::string> toSet(to.begin(), to.end());
  for (const auto &t : g.initializer()) {
    if (!keptInits.count(t.name()))
      continue;
    *sg.add_initializer() = t;
    // Before IR version 4 every initializer is also a graph input.
    if (model.ir_version() < 4)
      *sg.add_input() = typeOf(t.name(), "initializer");
    ++result.initializers;
  }
  for (int i = 0; i < g.node_size(); ++i) {
    if (!keepNode[i])
      continue;
    *sg.add_node() = g.node(i);
    ++result.nodes;
    for (const auto &out : g.node(i).output())
      if (!out.empty() && !toSet.count(out))
        if (auto it = types.find(out); it != types.end())
          *sg.add_value_info() = *it->second;
  }

  try {
    onnx::checker::check_model(sub);
  } catch (const std::exception &e) {
    fail("the cut model fails the ONNX checker: ", e.what());
  }
  std::string outBytes;
  if (!sub.SerializeToString(&outBytes))
    fail("cannot serialize the cut model");
  std::ofstream out(outPath, std::ios::binary | std::ios::trunc);
  if (!out)
    throw CutError(outPath + ": error: cannot write: " + std::strerror(errno));
  out.write(outBytes.data(), std::streamsize(outBytes.size()));
  out.close();
  if (!out)
    throw CutError(outPath + ": error: cannot write: " + std::strerror(errno));
}

} // namespace

std::string cutModel(const std::string &modelPath,
                     const std::vector<std::string> &from,
                     const std::vector<std::string> &to,
                     const std::string &outPath, CutResult &result) {
  result = CutResult();
  try {
    cut(modelPath, from, to, outPath, result);
    return "";
  } catch (const CutError &e) {
    result = CutResult();
    const std::string message = e.what();
    // Write failures already name the output file.
    if (message.rfind(outPath + ": error: ", 0) == 0)
      return message;
    return modelPath + ": error: " + message;
  } catch (const std::exception &e) {
    result = CutResult();
    return modelPath + ": error: " + e.what();
  }
}

} // namespace kiln::onnx_frontend
