#include "NetIo.h"
#include "Container.h"

#include "kiln/abi/bmodel.h"
#include "kiln/abi/chip.h"
#include "kiln/bmodel_generated.h"
#include "kiln/abi/quant.h"

#include <cstring>
#include <map>

using namespace kiln;

namespace {
std::vector<int64_t> shapeOf(const kiln_tensor_info &info) {
  return std::vector<int64_t>(info.shape, info.shape + info.ndim);
}

/// Reads a net tensor into an npz array as f32 (INT8 dequantized).
kiln_status readTensor(const kiln_net *net, const kiln_tensor_info &info, bool output,
                       uint32_t index, host::Array &out) {
  std::vector<uint8_t> raw(info.bytes);
  kiln_status st = output ? kiln_net_get_output(net, index, raw.data(), info.bytes)
                          : kiln_net_read_tensor(net, index, raw.data(), info.bytes);
  const uint32_t size = kiln_dtype_bytes(info.dtype);
  std::vector<float> data(size ? info.bytes / size : 0);
  for (size_t i = 0; i < data.size(); ++i) {
    const uint8_t *p = raw.data() + i * size;
    uint16_t h;
    switch (info.dtype) {
    case KILN_DTYPE_F16: std::memcpy(&h, p, 2); data[i] = kiln_f16_to_f32(h); break;
    case KILN_DTYPE_BF16: std::memcpy(&h, p, 2); data[i] = kiln_bf16_to_f32(h); break;
    case KILN_DTYPE_INT8:
      data[i] = kiln_dequantize_i8(int8_t(*p), info.scale, info.zero_point);
      break;
    default: std::memcpy(&data[i], p, sizeof(float)); break;
    }
  }
  out = host::Array::fromF32(info.name, shapeOf(info), data.data());
  return st;
}
} // namespace

const char *cli::statusName(kiln_status status) {
  switch (status) {
#define KILN_NAME(s) \
  case s: return #s;
    KILN_NAME(KILN_OK)
    KILN_NAME(KILN_ERR_INVALID_ARGUMENT)
    KILN_NAME(KILN_ERR_BUFFER_TOO_SMALL)
    KILN_NAME(KILN_ERR_NOT_FOUND)
    KILN_NAME(KILN_ERR_BAD_STATE)
    KILN_NAME(KILN_ERR_BAD_MAGIC)
    KILN_NAME(KILN_ERR_BAD_VERSION)
    KILN_NAME(KILN_ERR_TRUNCATED)
    KILN_NAME(KILN_ERR_BAD_CHECKSUM)
    KILN_NAME(KILN_ERR_BAD_FLATBUFFER)
    KILN_NAME(KILN_ERR_CHIP_MISMATCH)
    KILN_NAME(KILN_ERR_ABI_MISMATCH)
    KILN_NAME(KILN_ERR_OUT_OF_RANGE)
    KILN_NAME(KILN_ERR_BAD_TENSOR)
    KILN_NAME(KILN_ERR_BAD_COMMAND)
    KILN_NAME(KILN_ERR_BAD_SYNC)
    KILN_NAME(KILN_ERR_UNSUPPORTED)
    KILN_NAME(KILN_ERR_BAD_RESIDENCY)
    KILN_NAME(KILN_ERR_BAD_MEMORY_PLAN)
    KILN_NAME(KILN_ERR_NO_DEVICE_MEMORY)
    KILN_NAME(KILN_ERR_TOO_MANY_NETS)
    KILN_NAME(KILN_ERR_TIMEOUT)
    KILN_NAME(KILN_ERR_DEVICE_FAULT)
    KILN_NAME(KILN_ERR_HAL)
#undef KILN_NAME
  }
  return "KILN_ERR_UNKNOWN";
}

std::string cli::describeError(const kiln_error_detail &d) {
  // Objects inside a group are named by the group first.
  const bool inGroup = d.object_kind == KILN_OBJ_TIU_CMD || d.object_kind == KILN_OBJ_GDMA_CMD ||
                       d.object_kind == KILN_OBJ_TIMESTEP ||
                       d.object_kind == KILN_OBJ_LMEM_ALLOC;
  const std::string kind = kiln_object_kind_str(d.object_kind);
  std::vector<std::string> where;
  if (d.net != KILN_NO_INDEX)
    where.push_back("net " + std::to_string(d.net) +
                    (d.stage ? " stage " + std::to_string(d.stage) : ""));
  if (inGroup && d.index != KILN_NO_INDEX) {
    where.push_back("group " + std::to_string(d.index));
    where.push_back(kind + (d.sub_index != KILN_NO_INDEX ? " " + std::to_string(d.sub_index) : ""));
  } else if (d.object_kind == KILN_OBJ_HAL) {
    where.push_back(d.index != KILN_NO_INDEX ? "HAL call for group " + std::to_string(d.index)
                                             : "HAL call");
  } else if (d.object_kind != KILN_OBJ_NONE) {
    std::string what = kind;
    if (d.index != KILN_NO_INDEX)
      what += " " + std::to_string(d.index);
    if (d.sub_index != KILN_NO_INDEX)
      what += " (against " + std::to_string(d.sub_index) + ")";
    where.push_back(what);
  }
  std::string text = statusName(d.status);
  for (size_t i = 0; i < where.size(); ++i)
    text += (i ? ", " : " in ") + where[i];
  return text + ": " + (d.reason ? d.reason : kiln_status_str(d.status));
}

uint64_t cli::deviceBytesFor(const std::vector<uint8_t> &bmodel, std::string &error) {
  kiln_memory_requirements req{};
  kiln_error_detail detail{};
  if (kiln_bmodel_query_memory_ex(bmodel.data(), bmodel.size(), 0, &req, &detail) != KILN_OK) {
    error = "cannot load bmodel: " + describeError(detail);
    return 0;
  }
  return req.device_bytes;
}

kiln_isa cli::isaOf(const std::vector<uint8_t> &file) { // a file the runtime verified
  llvm::ArrayRef<uint8_t> bmodel = kilnContainer(file);
  kiln_bmodel_header h{};
  std::memcpy(&h, bmodel.data(), sizeof h);
  const kiln::bmodel::Model *m = kiln::bmodel::GetModel(bmodel.data() + h.flatbuffer_offset);
  if (!m->nets() || !m->nets()->size())
    return KILN_ISA_KILN;
  const auto *groups = m->nets()->Get(0)->groups();
  if (!groups || !groups->size())
    return KILN_ISA_KILN;
  for (const kiln::bmodel::LayerGroup *g : *groups)
    if (!g->bm1684x_tiu_count())
      return KILN_ISA_KILN;
  return KILN_ISA_BM1684X;
}

std::unique_ptr<cmodel::Device> cli::deviceFor(const std::vector<uint8_t> &bmodel,
                                               uint64_t ddrBytes, std::string &error,
                                               kiln_isa isa) {
  if (ddrBytes == 0 && (ddrBytes = deviceBytesFor(bmodel, error)) == 0)
    return nullptr;
  return std::make_unique<cmodel::Device>(ddrBytes, isa);
}

std::string cli::netIndexOf(const std::vector<uint8_t> &file, const std::string &name,
                           uint32_t &index) {
  llvm::ArrayRef<uint8_t> inner = kilnContainer(file); // a file the runtime verified
  kiln_bmodel_header h;
  std::memcpy(&h, inner.data(), sizeof h);
  const auto *nets = kiln::bmodel::GetModel(inner.data() + h.flatbuffer_offset)->nets();
  std::string names;
  for (uint32_t i = 0; nets && i < nets->size(); ++i) {
    const auto *n = nets->Get(i)->name();
    std::string netName = n ? n->str() : "";
    if (netName == name) {
      index = i;
      return "";
    }
    names += (names.empty() ? "'" : ", '") + netName + "'";
  }
  return "no net named '" + name + "' (the file has " + names + ")";
}

std::string cli::inputShapes(const kiln_net *net) {
  std::string out;
  for (uint32_t i = 0; i < kiln_net_input_count(net); ++i) {
    kiln_tensor_info info;
    kiln_net_input_info(net, i, &info);
    out += std::string(i ? ", " : "") + info.name + " " + host::shapeString(shapeOf(info));
  }
  return out;
}

std::string cli::stageList(kiln_net *net) {
  const uint32_t selected = kiln_net_stage(net);
  std::string out;
  for (uint32_t s = 0; s < kiln_net_stage_count(net); ++s) {
    kiln_net_select_stage(net, s);
    out += (s ? "; " : "") + std::to_string(s) + ": " + inputShapes(net);
  }
  kiln_net_select_stage(net, selected);
  return out;
}

std::string cli::setInputs(kiln_net *net, const std::vector<host::Array> &inputs,
                           const std::string &source) {
  // The stage is the one whose inputs have the arrays' shapes.
  std::vector<const host::Array *> arrays;
  std::vector<const int64_t *> shapes;
  std::string given;
  for (uint32_t i = 0; i < kiln_net_input_count(net); ++i) {
    kiln_tensor_info info;
    kiln_net_input_info(net, i, &info);
    const host::Array *found = nullptr;
    for (const auto &a : inputs)
      if (a.name == info.name)
        found = &a;
    if (!found)
      return source + ": no array named '" + info.name + "' for the model input";
    if (found->shape.size() != info.ndim)
      return source + ": array '" + info.name + "' has rank " +
             std::to_string(found->shape.size()) + ", the model input " +
             std::to_string(info.ndim);
    arrays.push_back(found);
    shapes.push_back(found->shape.data());
    given += std::string(given.empty() ? "" : ", ") + info.name + " " +
             host::shapeString(found->shape);
  }
  if (kiln_net_select_stage_for(net, shapes.data(), static_cast<uint32_t>(shapes.size())) !=
      KILN_OK)
    return source + ": no stage of the net takes inputs of these shapes (" + given +
           "); its stages: " + stageList(net);
  for (uint32_t i = 0; i < kiln_net_input_count(net); ++i) {
    const host::Array *found = arrays[i];
    std::vector<float> data = found->toF32();
    if (kiln_status st = kiln_net_set_input(net, i, data.data(), data.size() * sizeof(float));
        st != KILN_OK)
      return std::string("set input: ") + kiln_status_str(st);
  }
  return "";
}

std::vector<host::Array> cli::readOutputs(const kiln_net *net) {
  std::vector<host::Array> outputs;
  for (uint32_t i = 0; i < kiln_net_output_count(net); ++i) {
    kiln_tensor_info info;
    kiln_net_output_info(net, i, &info);
    outputs.emplace_back();
    readTensor(net, info, true, i, outputs.back());
  }
  return outputs;
}

namespace {
/// Reads each tensor right after the group that computes it: a planned net
/// reuses DDR, so after the run most activations are overwritten.
struct TensorCapture {
  const kiln_net *net;
  std::vector<std::vector<uint32_t>> byGroup; // tensors ready after group g
  std::vector<host::Array> arrays;             // by tensor index

  explicit TensorCapture(const kiln_net *n) : net(n) {
    uint32_t count = kiln_net_tensor_count(net);
    arrays.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      kiln_tensor_info info;
      kiln_net_tensor_info(net, i, &info);
      size_t slot = info.first_group < 0 ? 0 : size_t(info.first_group) + 1;
      if (byGroup.size() <= slot)
        byGroup.resize(slot + 1);
      byGroup[slot].push_back(i);
    }
  }
  void read(size_t slot) {
    if (slot >= byGroup.size())
      return;
    for (uint32_t i : byGroup[slot]) {
      kiln_tensor_info info;
      kiln_net_tensor_info(net, i, &info);
      readTensor(net, info, false, i, arrays[i]);
    }
  }
  static void onGroup(void *self, uint32_t group) {
    static_cast<TensorCapture *>(self)->read(size_t(group) + 1);
  }
};
} // namespace

kiln_status cli::runNet(kiln_net *net, uint32_t timeoutUs, kiln_run_stats *stats,
                        std::vector<host::Array> *tensors, kiln_error_detail *detail) {
  if (!tensors)
    return kiln_net_run_ex(net, timeoutUs, nullptr, nullptr, stats, detail);
  TensorCapture capture(net);
  capture.read(0); // inputs, set before the run
  kiln_status st =
      kiln_net_run_ex(net, timeoutUs, TensorCapture::onGroup, &capture, stats, detail);
  // Several chip tensors may carry one ONNX name (an op lowered to a chain,
  // the last of which holds its result): the last one in net order wins.
  std::map<std::string, size_t> byName;
  for (host::Array &array : capture.arrays) {
    array.name = "tensor:" + array.name;
    auto [it, fresh] = byName.try_emplace(array.name, tensors->size());
    if (fresh)
      tensors->push_back(std::move(array));
    else
      (*tensors)[it->second] = std::move(array);
  }
  return st;
}
