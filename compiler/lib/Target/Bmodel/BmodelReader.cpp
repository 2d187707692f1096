//===- BmodelReader.cpp - A bmodel's nets back as the writer's input ------===//
//
// The inverse of serialize(): reading a file and serializing what it gives
// writes the same bytes (bmodel_roundtrip_test holds that), so tools that
// rearrange nets (kiln combine) go through the one writer. Values the file
// does not carry (wSlices, gdmaIcAlign, activationPeak) keep their defaults;
// the writer does not read them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Bmodel/BmodelWriter.h"

#include "kiln/abi/bmodel.h"
#include "kiln/bmodel_generated.h"

#include <cstring>

using namespace kiln;
namespace fb = kiln::bmodel;

namespace {

std::string str(const flatbuffers::String *s) { return s ? s->str() : std::string(); }

template <typename T> std::vector<T> vec(const flatbuffers::Vector<T> *v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>();
}

std::vector<std::string>
strs(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>> *v) {
  std::vector<std::string> out;
  if (v)
    for (const flatbuffers::String *s : *v)
      out.push_back(s->str());
  return out;
}

// The bytes of a blob range (checked against the blob).
template <typename T>
bool bytes(const fb::BlobRange *r, llvm::ArrayRef<uint8_t> blob, std::vector<T> &out) {
  if (!r)
    return true;
  if (r->offset() > blob.size() || r->size() > blob.size() - r->offset() ||
      r->size() % sizeof(T))
    return false;
  out.resize(r->size() / sizeof(T));
  if (r->size())
    std::memcpy(out.data(), blob.data() + r->offset(), r->size());
  return true;
}

std::vector<codegen::TensorDesc>
tensors(const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>> *v) {
  std::vector<codegen::TensorDesc> out;
  if (v)
    for (const fb::Tensor *t : *v)
      out.push_back({str(t->name()), static_cast<uint8_t>(t->dtype()), vec(t->shape()),
                     t->ddr_offset(), t->size(), t->scale(), t->zero_point(), t->buffer(),
                     t->first_group(), t->last_group()});
  return out;
}

bool group(const fb::LayerGroup &g, llvm::ArrayRef<uint8_t> blob, codegen::GroupCode &out) {
  out.id = g.id();
  out.ops = strs(g.ops());
  out.nSlices = g.n_slices();
  out.cSlices = g.c_slices();
  out.hSlices = g.h_slices();
  if (g.slices())
    for (const fb::TensorSlices *s : *g.slices())
      out.slices.push_back({str(s->tensor()), vec(s->n_idx()), vec(s->n_len()), vec(s->c_idx()),
                            vec(s->c_len()), vec(s->h_idx()), vec(s->h_len()), vec(s->w_idx()),
                            vec(s->w_len())});
  if (g.timesteps())
    for (const fb::Timestep *t : *g.timesteps())
      out.timesteps.push_back(
          {t->slice(), t->tiu_begin(), t->tiu_end(), t->gdma_begin(), t->gdma_end()});
  if (g.lmem())
    for (const fb::LmemAlloc *a : *g.lmem())
      out.lmem.push_back({str(a->tensor()), a->addr(), a->size(), a->buffer(), a->first_step(),
                          a->last_step(), a->held()});
  out.tiuOps = vec(g.tiu_ops());
  out.gdmaTensors = vec(g.gdma_tensors());
  out.cycles = g.modelled_cycles();
  out.bmTiuCount = g.bm1684x_tiu_count();
  out.bmGdmaCount = g.bm1684x_gdma_count();
  if (!bytes(g.tiu_cmds(), blob, out.tiu) || !bytes(g.gdma_cmds(), blob, out.gdma) ||
      !bytes(g.bm1684x_tiu(), blob, out.bmTiu) || !bytes(g.bm1684x_gdma(), blob, out.bmGdma))
    return false;
  return out.tiu.size() == g.tiu_count() && out.gdma.size() == g.gdma_count();
}

// The writer emits a Residency record for each resident kept over slices and
// a DynamicWeight for each dynamic one, both in the residents' order; merging
// the two lists in their orders gives residents that write the same records.
void residents(const fb::Net &n, std::vector<codegen::Resident> &out) {
  std::vector<const fb::Residency *> kept;
  std::vector<const fb::DynamicWeight *> dynamic;
  if (n.residency())
    kept.assign(n.residency()->begin(), n.residency()->end());
  if (n.dynamic_weights())
    dynamic.assign(n.dynamic_weights()->begin(), n.dynamic_weights()->end());
  auto pairs = [](const fb::Residency *r, const fb::DynamicWeight *d) {
    return r->kind() != fb::ResidencyKind::Coefficient && str(r->tensor()) == str(d->tensor()) &&
           r->group() == d->group();
  };
  auto matched = [&](const fb::DynamicWeight *d) {
    for (const fb::Residency *r : kept)
      if (pairs(r, d))
        return true;
    return false;
  };
  auto fromDynamic = [](const fb::DynamicWeight *d, bool overSlices) {
    codegen::Resident r;
    r.tensor = str(d->tensor());
    r.dynamic = true;
    r.formedOnChip = d->formed_on_chip();
    r.overSlices = overSlices;
    r.producer = str(d->producer());
    r.producers = strs(d->producers());
    r.consumers = strs(d->consumers());
    r.shape = vec(d->shape());
    r.dtype = static_cast<uint8_t>(d->dtype());
    r.ddrOffset = d->ddr_offset();
    r.lmemAddr = d->lmem_addr();
    r.lmemSize = d->lmem_size();
    r.group = d->group();
    r.firstStep = d->first_step();
    r.lastStep = d->last_step();
    return r;
  };
  size_t j = 0;
  for (const fb::Residency *k : kept) {
    while (j < dynamic.size() && !matched(dynamic[j]))
      out.push_back(fromDynamic(dynamic[j++], false));
    if (j < dynamic.size() && pairs(k, dynamic[j])) {
      out.push_back(fromDynamic(dynamic[j++], true));
      continue;
    }
    codegen::Resident r;
    r.tensor = str(k->tensor());
    r.lmemAddr = k->lmem_addr();
    r.lmemSize = k->lmem_size();
    r.group = k->group();
    r.firstStep = k->first_step();
    r.lastStep = k->last_step();
    out.push_back(r);
  }
  while (j < dynamic.size())
    out.push_back(fromDynamic(dynamic[j++], false));
}

llvm::Error net(const fb::Net &n, llvm::ArrayRef<uint8_t> blob, codegen::NetCode &out) {
  auto bad = [&](const std::string &what) {
    return llvm::createStringError("net '" + str(n.name()) + "': " + what + " outside the blob");
  };
  out.name = str(n.name());
  out.inputs = tensors(n.inputs());
  out.outputs = tensors(n.outputs());
  out.tensors = tensors(n.tensors());
  out.coeffSize = n.coeff_size();
  out.neuronSize = n.neuron_size();
  if (!bytes(n.coeff(), blob, out.coeff))
    return bad("coefficients");
  if (n.groups())
    for (const fb::LayerGroup *g : *n.groups()) {
      out.groups.emplace_back();
      if (!group(*g, blob, out.groups.back()))
        return bad("layer group " + std::to_string(g->id()) + "'s commands");
    }
  residents(n, out.residents);
  out.macs = n.macs();
  out.minDdrBytes = n.min_ddr_bytes();
  if (n.buffers())
    for (const fb::DdrBuffer *b : *n.buffers())
      out.buffers.push_back({b->ddr_offset(), b->size(), b->first_group(), b->last_group()});
  out.decisions = strs(n.decisions());
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::vector<bmodel::StagedNet>>
kiln::bmodel::readNets(llvm::ArrayRef<uint8_t> file) {
  uint64_t at = 0, size = file.size();
  if (kiln_is_sophgo(file.data(), file.size()) &&
      !kiln_sophgo_blob(file.data(), file.size(), &at, &size))
    return llvm::createStringError("Sophgo container's parts overrun the file");
  llvm::ArrayRef<uint8_t> inner = file.slice(at, size);
  kiln_bmodel_header h;
  if (inner.size() < sizeof h || std::memcmp(inner.data(), KILN_BMODEL_MAGIC, sizeof h.magic))
    return llvm::createStringError("not a kiln bmodel (nor Sophgo's container written by kiln)");
  std::memcpy(&h, inner.data(), sizeof h);
  if (h.flatbuffer_offset > inner.size() ||
      h.flatbuffer_size > inner.size() - h.flatbuffer_offset || h.blob_offset > inner.size() ||
      h.blob_size > inner.size() - h.blob_offset)
    return llvm::createStringError("truncated bmodel");
  flatbuffers::Verifier verifier(inner.data() + h.flatbuffer_offset, h.flatbuffer_size);
  if (!fb::VerifyModelBuffer(verifier))
    return llvm::createStringError("corrupt bmodel (FlatBuffer verification failed)");
  const fb::Model *m = fb::GetModel(inner.data() + h.flatbuffer_offset);
  llvm::ArrayRef<uint8_t> blob = inner.slice(h.blob_offset, h.blob_size);
  std::vector<StagedNet> out;
  if (m->nets())
    for (const fb::Net *root : *m->nets()) {
      out.emplace_back();
      const uint32_t stages = 1 + (root->stages() ? root->stages()->size() : 0);
      for (uint32_t s = 0; s < stages; ++s) {
        out.back().emplace_back();
        if (llvm::Error err =
                net(s ? *root->stages()->Get(s - 1) : *root, blob, out.back().back()))
          return err;
      }
    }
  return out;
}
