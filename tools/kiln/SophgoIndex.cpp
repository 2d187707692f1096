//===- SophgoIndex.cpp - Sophgo's index against kiln's --------------------===//
#include "Container.h"

#include "kiln/abi/bm1684x.h"
#include "kiln/bmodel_generated.h"
#include "kiln/sophgo_bmodel_generated.h"

#include <algorithm>
#include <cstring>

using namespace kiln;
namespace sg = kiln::sophgo;
namespace fb = kiln::bmodel;

namespace {

std::string hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", (unsigned long long)v);
  return text;
}

// A range of kiln's blob as libbmrt must see it in Sophgo's blob.
bool sameRange(const sg::Binary *b, const fb::BlobRange *r, uint64_t kilnBlob) {
  return b && r && b->start() == kilnBlob + r->offset() && b->size() == r->size();
}

// Sophgo's stage (NetParameter) against kiln's stage of the same index.
std::string checkStage(const sg::NetParameter &p, const fb::Net &k, uint64_t ctxSize,
                       uint64_t kilnBlob, const std::string &net) {
  if (p.ctx_addr() != KILN_BM_DDR_BASE + k.coeff_size() || p.ctx_size() != ctxSize)
    return net + "ctx_addr/ctx_size are not kiln's activation region";
  if (k.coeff_size() && (!p.coeff_mem() || p.coeff_mem()->address() != KILN_BM_DDR_BASE ||
                         !sameRange(p.coeff_mem()->binary_coeff(), k.coeff(), kilnBlob)))
    return net + "coefficients are not kiln's";
  auto sameTensors = [](const auto *st, const auto *kt) {
    if (!st || !kt || st->size() != kt->size())
      return false;
    for (uint32_t i = 0; i < st->size(); ++i)
      if (st->Get(i)->name()->str() != kt->Get(i)->name()->str() ||
          st->Get(i)->device_addr() != KILN_BM_DDR_BASE + kt->Get(i)->ddr_offset() ||
          st->Get(i)->size() != kt->Get(i)->size())
        return false;
    return true;
  };
  if (!sameTensors(p.input_tensor(), k.inputs()) || !sameTensors(p.output_tensor(), k.outputs()))
    return net + "inputs or outputs differ from kiln's";
  const uint32_t groups = k.groups() ? k.groups()->size() : 0;
  if (!p.cmd_group() || p.cmd_group()->size() != groups || !p.sub_net() ||
      p.sub_net()->size() != 1 || !p.sub_net()->Get(0)->cmd_group() ||
      p.sub_net()->Get(0)->cmd_group()->size() != groups)
    return net + "command groups are not kiln's layer groups";
  for (uint32_t i = 0; i < groups; ++i) {
    const sg::CmdGroup &c = *p.cmd_group()->Get(i);
    const fb::LayerGroup &g = *k.groups()->Get(i);
    if (c.bdc_num() != g.bm1684x_tiu_count() || c.gdma_num() != g.bm1684x_gdma_count() ||
        !sameRange(c.binary_bdc(), g.bm1684x_tiu(), kilnBlob) ||
        !sameRange(c.binary_gdma(), g.bm1684x_gdma(), kilnBlob) ||
        c.bdc_cmd_byte() != c.binary_bdc()->size() || c.gdma_cmd_byte() != c.binary_gdma()->size())
      return net + "command group " + std::to_string(i) + " is not layer group " +
             std::to_string(i) + "'s streams";
  }
  return "";
}

std::string checkNet(const sg::Net &s, const fb::Net &k, uint64_t kilnBlob) {
  const std::string net = "net '" + k.name()->str() + "'";
  if (s.name()->str() != k.name()->str())
    return net + ": Sophgo's index names it '" + s.name()->str() + "'";
  if (!s.parameter() || s.parameter()->size() != cli::stageCount(k))
    return net + ": not kiln's " + std::to_string(cli::stageCount(k)) + " stage(s)";
  uint64_t ctxSize = 0; // every stage's: the largest stage's activations
  for (uint32_t i = 0; i < cli::stageCount(k); ++i)
    ctxSize = std::max(ctxSize, cli::stageOf(k, i).neuron_size());
  for (uint32_t i = 0; i < cli::stageCount(k); ++i)
    if (std::string err = checkStage(*s.parameter()->Get(i), cli::stageOf(k, i), ctxSize, kilnBlob,
                                     net + " stage " + std::to_string(i) + ": ");
        !err.empty())
      return err;
  return "";
}

} // namespace

std::string cli::checkSophgoIndex(llvm::ArrayRef<uint8_t> file, std::string *summary) {
  const llvm::ArrayRef<uint8_t> inner = kilnContainer(file);
  const uint32_t fbSize = kiln_le32(file.data() + 8);
  const uint8_t *fbBytes = file.data() + sizeof(kiln_sophgo_header);
  flatbuffers::Verifier verifier(fbBytes, fbSize);
  if (!sg::VerifyModelBuffer(verifier))
    return "Sophgo's index fails FlatBuffer verification";
  const sg::Model &s = *sg::GetModel(fbBytes);
  kiln_bmodel_header h;
  std::memcpy(&h, inner.data(), sizeof h);
  const fb::Model &k = *fb::GetModel(inner.data() + h.flatbuffer_offset);
  if (s.chip()->str() != "BM1684X")
    return "Sophgo's index is for chip " + s.chip()->str();
  if (s.net()->size() != k.nets()->size())
    return "Sophgo's index has " + std::to_string(s.net()->size()) + " nets, kiln's " +
           std::to_string(k.nets()->size());
  uint32_t groups = 0, stages = 0;
  uint64_t neuron = 0;
  for (const fb::Net *n : *k.nets())
    for (uint32_t i = 0; i < cli::stageCount(*n); ++i)
      neuron = std::max(neuron, cli::stageOf(*n, i).neuron_size());
  if (s.neuron_size() != neuron)
    return "Sophgo's index sizes the activations at " + std::to_string(s.neuron_size()) +
           " bytes, kiln's nets need " + std::to_string(neuron);
  for (uint32_t i = 0; i < k.nets()->size(); ++i) {
    if (std::string err = checkNet(*s.net()->Get(i), *k.nets()->Get(i), h.blob_offset);
        !err.empty())
      return "Sophgo's index disagrees with kiln's: " + err;
    for (const sg::NetParameter *p : *s.net()->Get(i)->parameter())
      groups += p->cmd_group()->size(), ++stages;
  }
  *summary = "Sophgo's index (what libbmrt reads): version " + s.version()->str() + ", " +
             std::to_string(s.net()->size()) + " net(s), " + std::to_string(stages) +
             " stage(s), " + std::to_string(groups) +
             " command group(s), coefficients at " + hex(KILN_BM_DDR_BASE) +
             ", activations at ctx_addr; agrees with kiln's";
  return "";
}
