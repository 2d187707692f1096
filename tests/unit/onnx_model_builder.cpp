//===- onnx_model_builder.cpp - Write small ONNX models for tests ---------===//
//
// Compiled with RTTI and exceptions: it includes libonnx's protobuf headers.
//
//===----------------------------------------------------------------------===//
#include "onnx_model_builder.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <iterator>

namespace kiln::test {

struct OnnxModelBuilder::Impl {
  onnx::ModelProto model;
  onnx::GraphProto *graph() { return model.mutable_graph(); }
};

OnnxModelBuilder::OnnxModelBuilder(int64_t opset) : impl(new Impl) {
  impl->model.set_ir_version(7);
  impl->model.set_producer_name("kiln-test");
  auto *import = impl->model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  impl->graph()->set_name("test");
}

OnnxModelBuilder::~OnnxModelBuilder() = default;

static void setType(onnx::ValueInfoProto &v, const std::string &name,
                    const std::vector<int64_t> &shape, int32_t elemType) {
  v.set_name(name);
  auto *type = v.mutable_type()->mutable_tensor_type();
  type->set_elem_type(elemType);
  auto *dims = type->mutable_shape();
  for (int64_t d : shape) {
    if (d < 0)
      dims->add_dim()->set_dim_param("N");
    else
      dims->add_dim()->set_dim_value(d);
  }
}

void OnnxModelBuilder::addInput(const std::string &name,
                                const std::vector<int64_t> &shape,
                                int32_t elemType) {
  setType(*impl->graph()->add_input(), name, shape, elemType);
}

void OnnxModelBuilder::addSparseInput(const std::string &name,
                                      const std::vector<int64_t> &shape) {
  onnx::ValueInfoProto &v = *impl->graph()->add_input();
  v.set_name(name);
  auto *t = v.mutable_type()->mutable_sparse_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape)
    t->mutable_shape()->add_dim()->set_dim_value(d);
}

void OnnxModelBuilder::addOutput(const std::string &name,
                                 const std::vector<int64_t> &shape,
                                 int32_t elemType) {
  setType(*impl->graph()->add_output(), name, shape, elemType);
}

static void fillFloat(onnx::TensorProto &t, const std::string &name,
                      const std::vector<int64_t> &shape,
                      const std::vector<float> &data) {
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape)
    t.add_dims(d);
  // raw_data, as PyTorch's exporter writes it.
  t.set_raw_data(std::string(reinterpret_cast<const char *>(data.data()),
                             data.size() * sizeof(float)));
}

void OnnxModelBuilder::addInitializer(const std::string &name,
                                      const std::vector<int64_t> &shape,
                                      const std::vector<float> &data) {
  fillFloat(*impl->graph()->add_initializer(), name, shape, data);
}

void OnnxModelBuilder::addInitializerI64(const std::string &name,
                                         const std::vector<int64_t> &shape,
                                         const std::vector<int64_t> &data) {
  auto *t = impl->graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : shape)
    t->add_dims(d);
  for (int64_t v : data)
    t->add_int64_data(v);
}

static onnx::TensorProto &newInitializer(onnx::GraphProto &g,
                                         const std::string &name,
                                         const std::vector<int64_t> &shape,
                                         int32_t elemType) {
  auto *t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(elemType);
  for (int64_t d : shape)
    t->add_dims(d);
  return *t;
}

void OnnxModelBuilder::addInitializerRaw(const std::string &name,
                                         const std::vector<int64_t> &shape,
                                         int32_t elemType,
                                         const std::string &bytes) {
  newInitializer(*impl->graph(), name, shape, elemType).set_raw_data(bytes);
}

void OnnxModelBuilder::addInitializerInt32Data(
    const std::string &name, const std::vector<int64_t> &shape,
    int32_t elemType, const std::vector<int32_t> &data) {
  auto &t = newInitializer(*impl->graph(), name, shape, elemType);
  for (int32_t v : data)
    t.add_int32_data(v);
}

void OnnxModelBuilder::addInitializerDoubleData(
    const std::string &name, const std::vector<int64_t> &shape,
    const std::vector<double> &data) {
  auto &t =
      newInitializer(*impl->graph(), name, shape, onnx::TensorProto::DOUBLE);
  for (double v : data)
    t.add_double_data(v);
}

void OnnxModelBuilder::addExternalInitializer(const std::string &name,
                                              const std::vector<int64_t> &shape,
                                              const std::string &location,
                                              int64_t offset, int64_t length) {
  auto &t =
      newInitializer(*impl->graph(), name, shape, onnx::TensorProto::FLOAT);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  std::pair<const char *, std::string> entries[] = {
      {"location", location},
      {"offset", std::to_string(offset)},
      {"length", std::to_string(length)}};
  for (auto &[key, value] : entries) {
    auto *entry = t.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
}

void OnnxModelBuilder::addConstant(const std::string &output,
                                   const std::vector<int64_t> &shape,
                                   const std::vector<float> &data) {
  auto *node = impl->graph()->add_node();
  node->set_op_type("Constant");
  node->set_name(output + "_const");
  node->add_output(output);
  auto *attr = node->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  fillFloat(*attr->mutable_t(), output, shape, data);
}

void OnnxModelBuilder::addNode(const std::string &opType,
                               const std::string &name,
                               const std::vector<std::string> &inputs,
                               const std::vector<std::string> &outputs,
                               const std::vector<OnnxAttr> &attrs,
                               const std::string &domain) {
  auto *node = impl->graph()->add_node();
  node->set_op_type(opType);
  node->set_name(name);
  if (!domain.empty()) {
    node->set_domain(domain);
    bool imported = false;
    for (const auto &opset : impl->model.opset_import())
      imported |= opset.domain() == domain;
    if (!imported) {
      auto *import = impl->model.add_opset_import();
      import->set_domain(domain);
      import->set_version(1);
    }
  }
  for (const auto &in : inputs)
    node->add_input(in);
  for (const auto &out : outputs)
    node->add_output(out);
  for (const OnnxAttr &a : attrs) {
    auto *attr = node->add_attribute();
    attr->set_name(a.name);
    switch (a.kind) {
    case OnnxAttr::Int:
      attr->set_type(onnx::AttributeProto::INT);
      attr->set_i(a.i);
      break;
    case OnnxAttr::Float:
      attr->set_type(onnx::AttributeProto::FLOAT);
      attr->set_f(a.f);
      break;
    case OnnxAttr::String:
      attr->set_type(onnx::AttributeProto::STRING);
      attr->set_s(a.s);
      break;
    case OnnxAttr::Ints:
      attr->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : a.ints)
        attr->add_ints(v);
      break;
    case OnnxAttr::Floats:
      attr->set_type(onnx::AttributeProto::FLOATS);
      for (float v : a.floats)
        attr->add_floats(v);
      break;
    }
  }
}

std::string OnnxModelBuilder::serialize() const {
  return impl->model.SerializeAsString();
}

bool OnnxModelBuilder::save(const std::string &path) const {
  std::ofstream out(path, std::ios::binary);
  std::string bytes = serialize();
  out.write(bytes.data(), bytes.size());
  return static_cast<bool>(out);
}

static bool readFile(const std::string &path, std::string &bytes) {
  std::ifstream in(path, std::ios::binary);
  bytes.assign(std::istreambuf_iterator<char>(in),
               std::istreambuf_iterator<char>());
  return static_cast<bool>(in) || in.eof();
}

std::string
bakeInputs(const std::string &in, const std::string &out,
           const std::vector<std::pair<std::string, std::string>> &bake) {
  std::string bytes;
  onnx::ModelProto model;
  if (!readFile(in, bytes) || !model.ParseFromString(bytes))
    return "cannot read model " + in;
  auto *graph = model.mutable_graph();
  for (const auto &[name, file] : bake) {
    onnx::TensorProto tensor;
    if (!readFile(file, bytes) || !tensor.ParseFromString(bytes))
      return "cannot read tensor " + file;
    tensor.set_name(name);
    *graph->add_initializer() = tensor;
    auto *inputs = graph->mutable_input();
    for (int i = 0; i < inputs->size(); ++i)
      if (inputs->Get(i).name() == name) {
        inputs->DeleteSubrange(i, 1);
        break;
      }
  }
  std::ofstream file(out, std::ios::binary);
  bytes = model.SerializeAsString();
  file.write(bytes.data(), bytes.size());
  return file ? "" : "cannot write " + out;
}

std::vector<float> rampData(int64_t count, float scale) {
  std::vector<float> data(count);
  for (int64_t i = 0; i < count; ++i)
    data[i] = static_cast<float>(i % 100) * scale - 0.5f;
  return data;
}

} // namespace kiln::test
