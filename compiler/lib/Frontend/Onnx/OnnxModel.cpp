//===- OnnxModel.cpp - Load an ONNX model with libonnx
//---------------------===//
//
// Compiled with RTTI and exceptions (libonnx needs both); every libonnx and
// protobuf exception is caught here and turned into an error string, so
// callers built without exceptions never see one.
//
//===----------------------------------------------------------------------===//
#include "kiln/Frontend/Onnx/OnnxModel.h"
#include "kiln/abi/quant.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>

namespace kiln::onnx_frontend {

namespace fs = std::filesystem;

const char *elemTypeName(int32_t elemType) {
  switch (elemType) {
  case kFloat:
    return "float";
  case kUInt8:
    return "uint8";
  case kInt8:
    return "int8";
  case kUInt16:
    return "uint16";
  case kInt16:
    return "int16";
  case kInt32:
    return "int32";
  case kInt64:
    return "int64";
  case kString:
    return "string";
  case kBool:
    return "bool";
  case kFloat16:
    return "float16";
  case kDouble:
    return "double";
  case kUInt32:
    return "uint32";
  case kUInt64:
    return "uint64";
  case kBFloat16:
    return "bfloat16";
  case kUndefined:
    return "undefined";
  }
  return "unsupported";
}

bool isFloatElemType(int32_t elemType) {
  return elemType == kFloat || elemType == kDouble || elemType == kFloat16 ||
         elemType == kBFloat16;
}

int64_t TensorData::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

const Attribute *Node::attr(std::string_view name) const {
  for (const Attribute &a : attrs)
    if (a.name == name)
      return &a;
  return nullptr;
}

namespace {

/// Thrown inside this file only; loadModel turns it into the error string.
struct LoadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename... Args> [[noreturn]] void fail(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  throw LoadError(os.str());
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return s + "]";
}

size_t elemSize(int32_t elemType) {
  switch (elemType) {
  case kFloat:
  case kInt32:
  case kUInt32:
    return 4;
  case kDouble:
  case kInt64:
  case kUInt64:
    return 8;
  case kFloat16:
  case kBFloat16:
  case kInt16:
  case kUInt16:
    return 2;
  case kInt8:
  case kUInt8:
  case kBool:
    return 1;
  default:
    return 0;
  }
}

template <typename T> T load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// Decodes little-endian raw bytes (raw_data or external data).
void decodeRaw(const std::string &bytes, int64_t n, TensorData &out) {
  size_t size = elemSize(out.elemType);
  if (bytes.size() != size * static_cast<size_t>(n))
    fail("tensor '", out.name, "' holds ", bytes.size(), " bytes, but its ",
         elemTypeName(out.elemType), " shape ", shapeString(out.shape),
         " needs ", size * n);
  const char *p = bytes.data();
  if (out.isFloat())
    out.f32.resize(n);
  else
    out.i64.resize(n);
  for (int64_t i = 0; i < n; ++i, p += size) {
    switch (out.elemType) {
    case kFloat:
      out.f32[i] = load<float>(p);
      break;
    case kDouble:
      out.f32[i] = static_cast<float>(load<double>(p));
      break;
    case kFloat16:
      out.f32[i] = kiln_f16_to_f32(load<uint16_t>(p));
      break;
    case kBFloat16:
      out.f32[i] = kiln_bf16_to_f32(load<uint16_t>(p));
      break;
    case kInt8:
      out.i64[i] = load<int8_t>(p);
      break;
    case kUInt8:
      out.i64[i] = load<uint8_t>(p);
      break;
    case kBool:
      out.i64[i] = load<uint8_t>(p) != 0;
      break;
    case kInt16:
      out.i64[i] = load<int16_t>(p);
      break;
    case kUInt16:
      out.i64[i] = load<uint16_t>(p);
      break;
    case kInt32:
      out.i64[i] = load<int32_t>(p);
      break;
    case kUInt32:
      out.i64[i] = load<uint32_t>(p);
      break;
    case kInt64:
      out.i64[i] = load<int64_t>(p);
      break;
    case kUInt64:
      out.i64[i] = static_cast<int64_t>(load<uint64_t>(p));
      break;
    }
  }
}

int64_t parseExternalInt(const onnx::TensorProto &t, const std::string &key,
                         const std::string &value) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || v < 0)
    fail("tensor '", t.name(), "' has an invalid external-data ", key, " '",
         value, "'");
  return v;
}

/// Reads a tensor stored outside the model file (models over 2 GiB).
std::string readExternal(const onnx::TensorProto &t, const fs::path &modelDir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : t.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset")
      offset = parseExternalInt(t, "offset", entry.value());
    else if (entry.key() == "length")
      length = parseExternalInt(t, "length", entry.value());
  }
  if (location.empty())
    fail("tensor '", t.name(), "' is external but has no location");
  // As ONNX's own checker from 1.13 on (Debian's 1.12 does not): a file in
  // the model's directory or below, so a model cannot read /dev/zero or
  // another user's files.
  fs::path relative(location);
  bool escapes = relative.is_absolute() || relative.has_root_name();
  for (const fs::path &part : relative)
    escapes |= part == "..";
  if (escapes)
    fail("tensor '", t.name(), "' has external data at '", location,
         "', which is not a relative path inside the model's directory");
  fs::path file = modelDir / relative;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    fail("external data '", file.string(), "' of tensor '", t.name(),
         "' is ", ec || !fs::exists(file, ec) ? "missing" : "not a regular file");
  // Sizes come from the model: check them against the file before
  // allocating.
  auto size = static_cast<int64_t>(fs::file_size(file, ec));
  if (ec || offset > size || (length >= 0 && length > size - offset))
    fail("external data '", file.string(), "' of tensor '", t.name(),
         "' ends before offset ", offset, " + length ", length < 0 ? 0 : length);
  if (length < 0)
    length = size - offset;
  std::ifstream in(file, std::ios::binary);
  if (!in)
    fail("cannot open external data '", file.string(), "' of tensor '",
         t.name(), "': ", std::strerror(errno));
  in.seekg(offset);
  std::string bytes(length, '\0');
  in.read(bytes.data(), length);
  if (in.gcount() != length)
    fail("cannot read external data '", file.string(), "' of tensor '",
         t.name(), "'");
  return bytes;
}

template <typename Field>
void checkCount(const Field &field, int64_t n, const TensorData &out) {
  if (static_cast<int64_t>(field.size()) != n)
    fail("tensor '", out.name, "' holds ", field.size(), " values, but its ",
         "shape ", shapeString(out.shape), " needs ", n);
}

TensorData convertTensor(const onnx::TensorProto &t, const fs::path &modelDir) {
  TensorData out;
  out.name = t.name();
  out.elemType = t.data_type();
  // Every count after this (numElements, bytes) fits in int64.
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0)
      fail("tensor '", t.name(), "' has a negative dimension");
    if (__builtin_mul_overflow(count, d, &count) || count > kMaxElements)
      fail("tensor '", t.name(), "' has shape ",
           shapeString(std::vector<int64_t>(t.dims().begin(), t.dims().end())),
           ", more than kiln supports (2^40 elements)");
    out.shape.push_back(d);
  }
  if (t.has_segment())
    fail("tensor '", t.name(), "' is segmented, which is not supported");
  // Types kiln has no use for (strings, complex) keep no data; the importer
  // rejects them if a supported op reads them.
  if (elemSize(out.elemType) == 0)
    return out;

  int64_t n = out.numElements();
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    decodeRaw(readExternal(t, modelDir), n, out);
    return out;
  }
  if (t.has_raw_data()) {
    decodeRaw(t.raw_data(), n, out);
    return out;
  }
  switch (out.elemType) {
  case kFloat:
    checkCount(t.float_data(), n, out);
    out.f32.assign(t.float_data().begin(), t.float_data().end());
    break;
  case kDouble:
    checkCount(t.double_data(), n, out);
    out.f32.assign(t.double_data().begin(), t.double_data().end());
    break;
  case kFloat16:
  case kBFloat16:
    // 16-bit floats are stored as their bit patterns in int32_data.
    checkCount(t.int32_data(), n, out);
    for (int32_t bits : t.int32_data())
      out.f32.push_back(out.elemType == kFloat16 ? kiln_f16_to_f32(bits)
                                                 : kiln_bf16_to_f32(bits));
    break;
  case kInt64:
    checkCount(t.int64_data(), n, out);
    out.i64.assign(t.int64_data().begin(), t.int64_data().end());
    break;
  case kUInt32:
  case kUInt64:
    checkCount(t.uint64_data(), n, out);
    out.i64.assign(t.uint64_data().begin(), t.uint64_data().end());
    break;
  default: // int32, int16, int8, uint16, uint8, bool
    checkCount(t.int32_data(), n, out);
    out.i64.assign(t.int32_data().begin(), t.int32_data().end());
    break;
  }
  return out;
}

ValueInfo convertValueInfo(const onnx::ValueInfoProto &v) {
  ValueInfo out;
  out.name = v.name();
  if (!v.type().has_tensor_type())
    return out;
  const auto &tensorType = v.type().tensor_type();
  out.elemType = tensorType.elem_type();
  if (!tensorType.has_shape())
    return out;
  out.known = true;
  for (const auto &dim : tensorType.shape().dim()) {
    bool isStatic = dim.has_dim_value() && dim.dim_value() >= 0;
    out.shape.push_back(isStatic ? dim.dim_value() : -1);
    out.known &= isStatic;
  }
  return out;
}

Attribute convertAttribute(const onnx::AttributeProto &a,
                           const fs::path &modelDir) {
  Attribute out;
  out.name = a.name();
  switch (a.type()) {
  case onnx::AttributeProto::INT:
    out.kind = Attribute::Int;
    out.i = a.i();
    break;
  case onnx::AttributeProto::FLOAT:
    out.kind = Attribute::Float;
    out.f = a.f();
    break;
  case onnx::AttributeProto::STRING:
    out.kind = Attribute::String;
    out.s = a.s();
    break;
  case onnx::AttributeProto::INTS:
    out.kind = Attribute::Ints;
    out.ints.assign(a.ints().begin(), a.ints().end());
    break;
  case onnx::AttributeProto::FLOATS:
    out.kind = Attribute::Floats;
    out.floats.assign(a.floats().begin(), a.floats().end());
    break;
  case onnx::AttributeProto::TENSOR:
    out.kind = Attribute::Tensor;
    out.t = convertTensor(a.t(), modelDir);
    break;
  default:
    out.kind = Attribute::Other;
    break;
  }
  return out;
}

bool hasExternalData(const onnx::GraphProto &g) {
  for (const auto &t : g.initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      return true;
  for (const auto &node : g.node())
    for (const auto &a : node.attribute())
      if (a.has_t() && a.t().data_location() == onnx::TensorProto::EXTERNAL)
        return true;
  return false;
}

/// Debian's libonnx 1.12 checker accepts a graph output that nothing
/// produces, on which its opset converter dereferences null.
void checkOutputsDefined(const onnx::GraphProto &g) {
  std::set<std::string> defined;
  for (const auto &in : g.input())
    defined.insert(in.name());
  for (const auto &t : g.initializer())
    defined.insert(t.name());
  for (const auto &node : g.node())
    defined.insert(node.output().begin(), node.output().end());
  for (const auto &out : g.output())
    if (!defined.count(out.name()))
      fail("graph output '", out.name(),
           "' is not produced by any node, input or initializer");
}

/// Kiln compiles dense tensors only, and libonnx's inference functions (Gemm,
/// for one) dereference null on a sparse tensor where they expect a dense
/// one: refuse every other kind of value before inference sees it.
void checkDenseTensors(const onnx::GraphProto &g) {
  auto check = [](const onnx::ValueInfoProto &v, const char *what) {
    if (v.has_type() && !v.type().has_tensor_type())
      fail(what, " '", v.name(), "' is not a dense tensor (",
           v.type().has_sparse_tensor_type() ? "a sparse tensor"
           : v.type().has_sequence_type()    ? "a sequence"
           : v.type().has_map_type()         ? "a map"
           : v.type().has_optional_type()    ? "an optional"
                                             : "an unknown type",
           "), which kiln does not compile");
  };
  for (const auto &v : g.input())
    check(v, "graph input");
  for (const auto &v : g.output())
    check(v, "graph output");
  for (const auto &v : g.value_info())
    check(v, "value");
  if (g.sparse_initializer_size())
    fail("initializer '", g.sparse_initializer(0).values().name(),
         "' is a sparse tensor, which kiln does not compile");
  for (const auto &node : g.node())
    for (const auto &a : node.attribute())
      if (a.type() == onnx::AttributeProto::SPARSE_TENSOR ||
          a.type() == onnx::AttributeProto::SPARSE_TENSORS || a.has_sparse_tensor())
        fail("node '", node.name().empty() && node.output_size() ? node.output(0) : node.name(),
             "' (", node.op_type(), "): attribute '", a.name(),
             "' holds a sparse tensor, which kiln does not compile");
}

/// libonnx's conv and pool shape inference divides by strides and dilations
/// unchecked (a stride of 0 is a SIGFPE): window attributes must be positive
/// before inference runs.
void checkWindowAttributes(const onnx::GraphProto &g) {
  for (const auto &node : g.node())
    for (const auto &a : node.attribute()) {
      const std::string &n = a.name();
      if (n != "strides" && n != "dilations" && n != "kernel_shape")
        continue;
      for (int64_t v : a.ints())
        if (v < 1)
          fail("node '", node.name().empty() && node.output_size() ? node.output(0) : node.name(),
               "' (", node.op_type(), "): attribute '", n, "' has ", v,
               "; every entry must be at least 1");
    }
}

int64_t defaultOpset(const onnx::ModelProto &model) {
  for (const auto &opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      return opset.version();
  return 0;
}

/// libonnx's opset converter reads some optional attributes as required (the
/// Pad 10->11 adapter asserts on a missing `value`): spell out their ONNX
/// defaults before converting.
void spellOutConverterDefaults(onnx::ModelProto &model) {
  for (auto &node : *model.mutable_graph()->mutable_node()) {
    if (node.op_type() != "Pad" || !(node.domain().empty() || node.domain() == "ai.onnx"))
      continue;
    bool hasValue = false;
    for (const auto &a : node.attribute())
      hasValue |= a.name() == "value";
    if (!hasValue) {
      onnx::AttributeProto *a = node.add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(0.0f);
    }
  }
}

/// The rank of input `i` as inference knows it, or -1.
int knownRank(const onnx::InferenceContext &ctx, size_t i) {
  const onnx::TypeProto *type = i < ctx.getNumInputs() ? ctx.getInputType(i) : nullptr;
  return type && type->tensor_type().has_shape()
             ? type->tensor_type().shape().dim_size()
             : -1;
}

/// Fails inference unless inputs 0 to n-1 have a type (the producer of one
/// may have failed inference itself).
void requireTypes(const onnx::InferenceContext &ctx, size_t n, const char *op) {
  for (size_t i = 0; i < n; ++i)
    if (i >= ctx.getNumInputs() || !ctx.getInputType(i))
      fail_shape_inference(op, " input ", i, " has no type");
}

/// libonnx's schemas for shape inference, but some of Debian's libonnx 1.12
/// inference functions index dimensions without checking ranks, or types
/// without checking they exist, and read out of bounds or through null:
/// Gemm-6 reads dimension 1 of a 1-D A or B and the type of an untyped C,
/// ConvTranspose crashes on an X and a W of different ranks. Those schemas
/// come wrapped in the checks later ONNX versions make; a failed check is
/// an inference error like any other (non-strict inference leaves the
/// output untyped, and the importer says what is wrong with the node).
class GuardedSchemas final : public onnx::ISchemaRegistry {
public:
  const onnx::OpSchema *GetSchema(const std::string &key,
                                  const int maxInclusiveVersion,
                                  const std::string &domain) const override {
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(key, maxInclusiveVersion, domain);
    void (*check)(onnx::InferenceContext &, int since) = nullptr;
    if (key == "Gemm")
      check = checkGemm;
    else if (key == "Conv" || key == "ConvTranspose")
      check = checkConv;
    if (!schema || !check || !(domain.empty() || domain == "ai.onnx"))
      return schema;
    std::unique_ptr<onnx::OpSchema> &guarded = wrapped[schema];
    if (!guarded) {
      guarded = std::make_unique<onnx::OpSchema>(*schema);
      auto infer = schema->GetTypeAndShapeInferenceFunction();
      int since = schema->SinceVersion();
      guarded->TypeAndShapeInferenceFunction(
          [infer, check, since](onnx::InferenceContext &ctx) {
            check(ctx, since);
            if (infer)
              infer(ctx);
          });
    }
    return guarded.get();
  }

private:
  static void checkGemm(onnx::InferenceContext &ctx, int since) {
    // C is optional from opset 11 on.
    requireTypes(ctx, since < 11 ? 3 : 2, "Gemm");
    for (size_t i = 0; i < 2; ++i)
      if (int rank = knownRank(ctx, i); rank >= 0 && rank != 2)
        fail_shape_inference("Gemm input ", i, " has rank ", rank, ", not 2");
  }
  static void checkConv(onnx::InferenceContext &ctx, int) {
    requireTypes(ctx, 2, "Conv");
    int x = knownRank(ctx, 0), w = knownRank(ctx, 1);
    if ((x >= 0 && x < 3) || (w >= 0 && w < 3) || (x >= 0 && w >= 0 && x != w))
      fail_shape_inference("X has rank ", x, " and W rank ", w,
                           "; both need the same rank, at least 3");
  }

  mutable std::map<const onnx::OpSchema *, std::unique_ptr<onnx::OpSchema>>
      wrapped;
};

/// libonnx's Gemm 6->7 adapter reads the first two dimensions of A and B
/// without checking their rank (out of bounds on a 1-D B): refuse such a
/// Gemm before converting. Ranks are the ones inference found.
void checkGemmRanks(const onnx::ModelProto &model) {
  const onnx::GraphProto &g = model.graph();
  std::map<std::string, int> ranks;
  auto note = [&](const onnx::ValueInfoProto &v) {
    if (v.type().tensor_type().has_shape())
      ranks[v.name()] = v.type().tensor_type().shape().dim_size();
  };
  for (const auto &v : g.input())
    note(v);
  for (const auto &v : g.value_info())
    note(v);
  for (const auto &t : g.initializer())
    ranks[t.name()] = t.dims_size();
  for (const auto &node : g.node()) {
    if (node.op_type() != "Gemm" || !(node.domain().empty() || node.domain() == "ai.onnx"))
      continue;
    for (int i = 0; i < std::min(node.input_size(), 2); ++i) {
      auto it = ranks.find(node.input(i));
      if (it != ranks.end() && it->second != 2)
        fail("node '", node.name().empty() && node.output_size() ? node.output(0) : node.name(),
             "' (Gemm): input ", i == 0 ? "A" : "B", " ('", node.input(i),
             "') has rank ", it->second, "; Gemm multiplies 2-D matrices");
    }
  }
}

/// Before opset 11, Upsample and Resize map output to input coordinates as
/// x / scale (asymmetric) and nearest takes the floor. The converter turns
/// them into Resize-11 without saying so, which would default to half_pixel
/// and round_prefer_floor: spell out the old semantics.
void keepOldResizeSemantics(onnx::ModelProto &model) {
  for (auto &node : *model.mutable_graph()->mutable_node()) {
    if (node.op_type() != "Resize" ||
        !(node.domain().empty() || node.domain() == "ai.onnx"))
      continue;
    bool hasCoord = false, hasNearest = false;
    for (const auto &a : node.attribute()) {
      hasCoord |= a.name() == "coordinate_transformation_mode";
      hasNearest |= a.name() == "nearest_mode";
    }
    auto addString = [&](const char *name, const char *value) {
      auto *a = node.add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(value);
    };
    if (!hasCoord)
      addString("coordinate_transformation_mode", "asymmetric");
    if (!hasNearest)
      addString("nearest_mode", "floor");
  }
}

void applyInputShapes(
    onnx::ModelProto &model,
    const std::map<std::string, std::vector<int64_t>> &inputShapes) {
  onnx::GraphProto &g = *model.mutable_graph();
  std::set<std::string> initializers;
  for (const auto &t : g.initializer())
    initializers.insert(t.name());
  for (const auto &[name, shape] : inputShapes) {
    onnx::ValueInfoProto *input = nullptr;
    std::string names;
    for (auto &in : *g.mutable_input()) {
      if (initializers.count(in.name()))
        continue;
      if (in.name() == name)
        input = &in;
      names += (names.empty() ? "'" : ", '") + in.name() + "'";
    }
    if (!input)
      fail("input shape given for '", name,
           "', which is not a graph input (inputs: ", names, ")");
    for (int64_t d : shape)
      if (d <= 0)
        fail("input shape ", shapeString(shape), " given for '", name,
             "' has a dimension that is not positive");
    auto *dims = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    dims->clear_dim();
    for (int64_t d : shape)
      dims->add_dim()->set_dim_value(d);
  }
  // Shapes recorded by the exporter were computed from the old input shapes;
  // drop them so inference does not try to merge them with the new ones.
  g.clear_value_info();
  for (auto &out : *g.mutable_output())
    if (out.type().has_tensor_type())
      out.mutable_type()->mutable_tensor_type()->clear_shape();
}

void load(const std::string &path,
          const std::map<std::string, std::vector<int64_t>> &inputShapes,
          Model &out,
          const std::function<bool(const std::string &opType)> &imports) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    fail("cannot open file: no such file");
  if (!fs::is_regular_file(path, ec))
    fail("cannot open file: not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail("cannot open file: ", std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  if (bytes.empty())
    fail("empty file, not an ONNX model");

  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    fail("not a valid ONNX protobuf (truncated or corrupt)");
  bytes = std::string();
  if (!model.has_graph() || model.ir_version() == 0)
    fail("not a valid ONNX model (no graph or IR version; truncated or not "
         "an ONNX file?)");

  try {
    // With external data the checker needs the model's directory, which only
    // the path overload knows.
    if (hasExternalData(model.graph()))
      onnx::checker::check_model(path);
    else
      onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    fail("invalid ONNX model: ", e.what());
  }
  checkOutputsDefined(model.graph());
  checkDenseTensors(model.graph());
  checkWindowAttributes(model.graph());

  int64_t opset = defaultOpset(model);
  if (opset == 0)
    fail("the model imports no version of the default ONNX opset");
  if (opset > kMaxOpset)
    fail("opset ", opset, " is newer than kiln supports (", kMinOpset, " to ",
         kMaxOpset, ")");
  if (!inputShapes.empty())
    applyInputShapes(model, inputShapes);

  bool foreign =
      imports && std::any_of(model.graph().node().begin(),
                             model.graph().node().end(), [&](const auto &node) {
                               return !(node.domain().empty() ||
                                        node.domain() == "ai.onnx") ||
                                      !imports(node.op_type());
                             });
  GuardedSchemas schemas;
  int64_t sourceOpset = opset;
  if (opset < kMinOpset && !foreign) {
    // Some adapters (broadcasting ones) need the shapes of their inputs; a
    // model the converter cannot type still fails below with its message.
    try {
      onnx::shape_inference::InferShapes(model, &schemas);
    } catch (const std::exception &) {
    }
    spellOutConverterDefaults(model);
    checkGemmRanks(model);
    try {
      model = onnx::version_conversion::ConvertVersion(model, kMinOpset);
    } catch (const std::exception &e) {
      fail("cannot convert the model from opset ", opset, " to ", kMinOpset,
           ": ", e.what());
    }
    // Inferred again below, with the converted operators.
    model.mutable_graph()->clear_value_info();
    keepOldResizeSemantics(model);
    opset = kMinOpset;
  }

  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false,
                                        /*strict_mode=*/0,
                                        /*data_prop=*/true);
    if (!foreign)
      onnx::shape_inference::InferShapes(model, &schemas, options);
  } catch (const std::exception &e) {
    fail("ONNX shape inference failed: ", e.what());
  }

  fs::path modelDir = fs::path(path).parent_path();
  const onnx::GraphProto &g = model.graph();
  out = Model();
  out.opset = opset;
  out.sourceOpset = sourceOpset;
  for (const auto &t : g.initializer())
    out.initializers.emplace(t.name(), convertTensor(t, modelDir));
  for (const auto &v : g.input()) {
    ValueInfo info = convertValueInfo(v);
    out.valueInfo[v.name()] = info;
    if (!out.initializers.count(v.name()))
      out.inputs.push_back(std::move(info));
  }
  for (const auto &v : g.output()) {
    ValueInfo info = convertValueInfo(v);
    out.valueInfo[v.name()] = info;
    out.outputs.push_back(std::move(info));
  }
  for (const auto &v : g.value_info())
    out.valueInfo[v.name()] = convertValueInfo(v);
  for (const auto &n : g.node()) {
    Node node;
    node.name = n.name();
    node.opType = n.op_type();
    node.domain = n.domain() == "ai.onnx" ? "" : n.domain();
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    for (const auto &a : n.attribute())
      node.attrs.push_back(convertAttribute(a, modelDir));
    out.nodes.push_back(std::move(node));
  }
}

} // namespace

std::string loadTensor(const std::string &path, TensorData &out) {
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      fail("cannot open file: ", std::strerror(errno));
    std::string bytes((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    onnx::TensorProto t;
    if (!t.ParseFromString(bytes))
      fail("not a valid TensorProto");
    out = convertTensor(t, fs::path(path).parent_path());
    return "";
  } catch (const std::exception &e) {
    return path + ": error: " + e.what();
  }
}

std::string
loadModel(const std::string &path,
          const std::map<std::string, std::vector<int64_t>> &inputShapes,
          Model &out,
          const std::function<bool(const std::string &opType)> &imports) {
  try {
    load(path, inputShapes, out, imports);
    return "";
  } catch (const std::exception &e) {
    return path + ": error: " + e.what();
  } catch (...) {
    return path + ": error: unknown failure while loading the ONNX model";
  }
}

} // namespace kiln::onnx_frontend
