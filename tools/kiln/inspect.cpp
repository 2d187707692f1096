// kiln inspect MODEL.bmodel [--json | --profile]
// Prints everything in a bmodel: header, chip, tensors, layer groups with
// their slice tables and LMEM allocations, dynamic weights and residency.
// --profile prints instead where the modelled time goes, group by group.
#include "Commands.h"
#include "GroupRecords.h"

#include "kiln/abi/bmodel.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/cost.h"
#include "kiln/bmodel_generated.h"
#include "kiln/host/npz.h"
#include "kiln/rt/kiln_rt.h"

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace fb = kiln::bmodel;

namespace {
using StrVec = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>;

std::string q(const flatbuffers::String *s) {
  std::string out = "\"";
  for (char c : std::string(s ? s->c_str() : ""))
    out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

template <typename T> std::string arr(const flatbuffers::Vector<T> *v) {
  std::string out = "[";
  for (uint32_t i = 0; v && i < v->size(); ++i)
    out += (i ? ", " : "") + std::to_string(v->Get(i));
  return out + "]";
}

std::string names(const StrVec *v) {
  std::string out = "[";
  for (uint32_t i = 0; v && i < v->size(); ++i)
    out += (i ? ", " : "") + q(v->Get(i));
  return out + "]";
}

bool quantized(const fb::Tensor *t) {
  return t->dtype() == fb::DType::INT8 || t->dtype() == fb::DType::UINT8;
}

std::string tensor(const fb::Tensor *t) {
  std::string quant;
  if (quantized(t)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, ", \"scale\": %.9g, \"zero_point\": %d", t->scale(),
                  t->zero_point());
    quant = buf;
  }
  return "{\"name\": " + q(t->name()) + ", \"dtype\": \"" +
         fb::EnumNameDType(t->dtype()) + "\"" + quant + ", \"shape\": " + arr(t->shape()) +
         ", \"ddr_offset\": " + std::to_string(t->ddr_offset()) +
         ", \"size\": " + std::to_string(t->size()) +
         ", \"buffer\": " + std::to_string(t->buffer()) +
         ", \"first_group\": " + std::to_string(t->first_group()) +
         ", \"last_group\": " + std::to_string(t->last_group()) + "}";
}

/// The dtype as text: F32, F16, ..., INT8 with its quantization.
std::string dtypeText(const fb::Tensor *t) {
  std::string out = fb::EnumNameDType(t->dtype());
  if (quantized(t)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "(scale %.6g, zp %d)", t->scale(), t->zero_point());
    out += buf;
  }
  return out;
}

template <typename V, typename F> std::string list(const V *v, F f, const char *ind) {
  std::string out = "[";
  for (uint32_t i = 0; v && i < v->size(); ++i)
    out += std::string(i ? "," : "") + "\n" + ind + f(v->Get(i));
  return out + (v && v->size() ? std::string("\n") + (ind + 2) : "") + "]";
}

std::string groupJson(const fb::LayerGroup *g) {
  std::string s = "{\"id\": " + std::to_string(g->id()) + ", \"ops\": " + names(g->ops()) +
                  ", \"n_slices\": " + std::to_string(g->n_slices()) +
                  ", \"c_slices\": " + std::to_string(g->c_slices()) +
                  ", \"h_slices\": " + std::to_string(g->h_slices()) +
                  ", \"tiu_count\": " + std::to_string(g->tiu_count()) +
                  ", \"gdma_count\": " + std::to_string(g->gdma_count()) +
                  ", \"modelled_cycles\": " + std::to_string(g->modelled_cycles());
  s += ", \"slices\": " + list(g->slices(), [](const fb::TensorSlices *t) {
         return "{\"tensor\": " + q(t->tensor()) + ", \"n_idx\": " + arr(t->n_idx()) +
                ", \"n_len\": " + arr(t->n_len()) + ", \"h_idx\": " + arr(t->h_idx()) +
                ", \"h_len\": " + arr(t->h_len()) + ", \"c_len\": " + arr(t->c_len()) +
                ", \"w_len\": " + arr(t->w_len()) + "}";
       }, "        ");
  s += ", \"timesteps\": " + list(g->timesteps(), [](const fb::Timestep *t) {
         return "{\"slice\": " + std::to_string(t->slice()) + ", \"tiu\": [" +
                std::to_string(t->tiu_begin()) + ", " + std::to_string(t->tiu_end()) +
                "], \"gdma\": [" + std::to_string(t->gdma_begin()) + ", " +
                std::to_string(t->gdma_end()) + "]}";
       }, "        ");
  s += ", \"lmem\": " + list(g->lmem(), [](const fb::LmemAlloc *a) {
         return "{\"tensor\": " + q(a->tensor()) + ", \"addr\": " + std::to_string(a->addr()) +
                ", \"size\": " + std::to_string(a->size()) + ", \"buffer\": " +
                std::to_string(a->buffer()) + ", \"held\": " + (a->held() ? "true" : "false") + "}";
       }, "        ");
  return s + "}";
}

std::string dynamicJson(const fb::DynamicWeight *d) {
  return "{\"tensor\": " + q(d->tensor()) + ", \"producer\": " + q(d->producer()) +
         ", \"consumers\": " + names(d->consumers()) + ", \"shape\": " + arr(d->shape()) +
         ", \"dtype\": \"" + fb::EnumNameDType(d->dtype()) + "\", \"src_layout\": \"" +
         fb::EnumNameLayout(d->src_layout()) + "\", \"dst_layout\": \"" +
         fb::EnumNameLayout(d->dst_layout()) + "\", \"ddr_offset\": " +
         std::to_string(d->ddr_offset()) + ", \"lmem_addr\": " + std::to_string(d->lmem_addr()) +
         ", \"lmem_size\": " + std::to_string(d->lmem_size()) + ", \"group\": " +
         std::to_string(d->group()) + ", \"steps\": [" + std::to_string(d->first_step()) +
         ", " + std::to_string(d->last_step()) + "]}";
}

std::string residencyJson(const fb::Residency *r) {
  return "{\"tensor\": " + q(r->tensor()) + ", \"kind\": \"" +
         fb::EnumNameResidencyKind(r->kind()) + "\", \"group\": " + std::to_string(r->group()) +
         ", \"lmem_addr\": " + std::to_string(r->lmem_addr()) + ", \"lmem_size\": " +
         std::to_string(r->lmem_size()) + "}";
}

// What the runtime needs to load net `index`: the same verification and
// memory plan as kiln_net_load (docs/runtime.md). File data from a vector
// is aligned as the runtime requires.
std::string memoryText(const std::vector<uint8_t> &file, uint32_t index) {
  kiln_memory_requirements r;
  if (kiln_status st = kiln_bmodel_query_memory(file.data(), file.size(), index, &r);
      st != KILN_OK)
    return std::string("device memory: unknown (") + kiln_status_str(st) + ")";
  char line[256];
  std::snprintf(line, sizeof line,
                "device memory: %llu bytes (commands %llu, coefficients %llu, activations "
                "%llu); host storage: runtime %zu + net %zu bytes",
                (unsigned long long)r.device_bytes, (unsigned long long)r.command_bytes,
                (unsigned long long)r.coeff_bytes, (unsigned long long)r.neuron_bytes,
                r.runtime_storage_bytes, r.net_storage_bytes);
  return line;
}

std::string memoryJson(const std::vector<uint8_t> &file, uint32_t index) {
  kiln_memory_requirements r;
  if (kiln_bmodel_query_memory(file.data(), file.size(), index, &r) != KILN_OK)
    return "null";
  return "{\"device_bytes\": " + std::to_string(r.device_bytes) +
         ", \"command_bytes\": " + std::to_string(r.command_bytes) +
         ", \"coeff_bytes\": " + std::to_string(r.coeff_bytes) +
         ", \"neuron_bytes\": " + std::to_string(r.neuron_bytes) +
         ", \"runtime_storage_bytes\": " + std::to_string(r.runtime_storage_bytes) +
         ", \"net_storage_bytes\": " + std::to_string(r.net_storage_bytes) + "}";
}

/// The activation plan's figures (bmodel format 1.1): the neuron region it
/// asks for, the largest set of buffers live at once (each 4 KiB aligned, as
/// placed), and what giving every buffer its own bytes would take.
struct PlanFigures {
  uint32_t buffers = 0;
  uint64_t planned = 0, livePeak = 0, unplanned = 0;
  int32_t peakGroup = -1; // where the live set is largest
};

PlanFigures planFigures(const fb::Net &net) {
  PlanFigures f;
  f.planned = net.neuron_size();
  if (!net.buffers())
    return f;
  auto aligned = [](uint64_t v) { return (v + KILN_DDR_ALIGN - 1) / KILN_DDR_ALIGN * KILN_DDR_ALIGN; };
  f.buffers = net.buffers()->size();
  const int32_t steps = net.groups() ? net.groups()->size() : 0;
  for (const fb::DdrBuffer *b : *net.buffers())
    f.unplanned += aligned(b->size());
  for (int32_t s = -1; s <= steps; ++s) {
    uint64_t live = 0;
    for (const fb::DdrBuffer *b : *net.buffers())
      if (b->first_group() <= s && s <= b->last_group())
        live += aligned(b->size());
    if (live > f.livePeak) {
      f.livePeak = live;
      f.peakGroup = s;
    }
  }
  return f;
}

std::string planText(const fb::Net &net) {
  PlanFigures f = planFigures(net);
  if (f.buffers == 0)
    return "activation plan: none (format 1.0, every tensor has its own bytes)";
  char line[256];
  std::snprintf(line, sizeof line,
                "activation plan: %u buffers, %llu bytes planned, largest live set %llu bytes "
                "(at group %d) -> %.2fx; without sharing %llu bytes",
                f.buffers, (unsigned long long)f.planned, (unsigned long long)f.livePeak,
                f.peakGroup, f.livePeak ? double(f.planned) / double(f.livePeak) : 0.0,
                (unsigned long long)f.unplanned);
  return line;
}

std::string planJson(const fb::Net &net) {
  PlanFigures f = planFigures(net);
  return "{\"buffers\": " + std::to_string(f.buffers) +
         ", \"planned_bytes\": " + std::to_string(f.planned) +
         ", \"live_peak_bytes\": " + std::to_string(f.livePeak) +
         ", \"live_peak_group\": " + std::to_string(f.peakGroup) +
         ", \"unplanned_bytes\": " + std::to_string(f.unplanned) + "}";
}

void printText(const std::vector<uint8_t> &file, const kiln_bmodel_header &h,
               const fb::Model *m) {
  std::printf("bmodel format %u.%u, compiler %s, chip %s (%u lanes x %u KiB LMEM, ABI %u.%u)\n",
              h.format_major, h.format_minor, m->compiler_version()->c_str(),
              m->chip()->name()->c_str(), m->chip()->lanes(),
              m->chip()->lmem_bytes_per_lane() / 1024, m->chip()->abi_major(),
              m->chip()->abi_minor());
  uint32_t index = 0;
  for (const fb::Net *net : *m->nets()) {
    std::printf("net %s: coeff %llu bytes, neuron %llu bytes, %u groups, %llu MACs\n",
                net->name()->c_str(), (unsigned long long)net->coeff_size(),
                (unsigned long long)net->neuron_size(), net->groups()->size(),
                (unsigned long long)net->macs());
    std::printf("  %s\n", memoryText(file, index++).c_str());
    std::printf("  %s\n", planText(*net).c_str());
    for (const fb::Tensor *t : *net->inputs())
      std::printf("  input  %s %s %s @%llu\n", t->name()->c_str(), dtypeText(t).c_str(),
                  arr(t->shape()).c_str(), (unsigned long long)t->ddr_offset());
    for (const fb::Tensor *t : *net->outputs())
      std::printf("  output %s %s %s @%llu\n", t->name()->c_str(), dtypeText(t).c_str(),
                  arr(t->shape()).c_str(), (unsigned long long)t->ddr_offset());
    for (const fb::LayerGroup *g : *net->groups()) {
      std::printf("  group %u: %u ops, slices %u (N) x %u (C) x %u (H), %u TIU + %u GDMA commands, "
                  "%llu cycles\n    ops: %s\n",
                  g->id(), g->ops()->size(), g->n_slices(), g->c_slices(), g->h_slices(), g->tiu_count(),
                  g->gdma_count(), (unsigned long long)g->modelled_cycles(),
                  names(g->ops()).c_str());
      for (const fb::TensorSlices *t : *g->slices())
        if (g->c_slices() > 1)
          std::printf("    slice %-28s c_idx %s c_len %s h_idx %s h_len %s\n",
                      t->tensor()->c_str(), arr(t->c_idx()).c_str(), arr(t->c_len()).c_str(),
                      arr(t->h_idx()).c_str(), arr(t->h_len()).c_str());
        else
          std::printf("    slice %-28s h_idx %s h_len %s\n", t->tensor()->c_str(),
                      arr(t->h_idx()).c_str(), arr(t->h_len()).c_str());
      for (const fb::LmemAlloc *a : *g->lmem())
        std::printf("    lmem  %-28s addr %6u size %6u buffer %u%s\n", a->tensor()->c_str(),
                    a->addr(), a->size(), a->buffer(), a->held() ? " held" : "");
    }
    if (net->dynamic_weights())
      for (const fb::DynamicWeight *d : *net->dynamic_weights())
        std::printf("  dynamic weight %s\n", dynamicJson(d).c_str());
    if (net->decisions())
      for (const flatbuffers::String *line : *net->decisions())
        std::printf("  decision: %s\n", line->c_str());
  }
}
/// Per group: modelled cycles (the chip's scheduler over its queues), each
/// engine's busy cycles, what bounds it, DDR bytes on the bus, LMEM peak and
/// the bank conflicts left (commands that started in one).
int printProfile(const std::vector<uint8_t> &file, const kiln_bmodel_header &h,
                 const fb::Model *m) {
  for (const fb::Net *net : *m->nets()) {
    std::printf("net %s: per group, modelled cycles; bound: the engine busy >= 90%% of the "
                "group's cycles, else latency (engines waiting on each other)\n",
                net->name()->c_str());
    std::printf("  %5s %4s %10s %10s %10s %7s %10s %9s %9s  %s\n", "group", "ops", "cycles",
                "tiu_busy", "gdma_busy", "bound", "ddr_bytes", "lmem_peak", "conflicts",
                "first op");
    uint64_t total = 0, tiuTotal = 0, gdmaTotal = 0, ddrTotal = 0, conflicts = 0,
             conflictCycles = 0;
    for (const fb::LayerGroup *g : *net->groups()) {
      std::vector<kiln_tiu_cmd> tiu;
      std::vector<kiln_gdma_cmd> gdma;
      kiln_queue_timing t{};
      if (!kiln::cli::groupRecords(file, h, *g, tiu, gdma) ||
          kiln_schedule_queues(tiu.data(), tiu.size(), gdma.data(), gdma.size(), nullptr,
                               nullptr, &t) != KILN_OK)
        return kiln::cli::fail("inspect: group " + std::to_string(g->id()) +
                    " has commands outside the blob or sync ids that never resolve");
      uint64_t ddr = 0;
      for (const kiln_gdma_cmd &c : gdma)
        ddr += kiln::cli::ddrBusBytes(c);
      uint32_t peak = 0;
      if (g->lmem())
        for (const fb::LmemAlloc *a : *g->lmem())
          peak = std::max(peak, a->addr() + a->size());
      const char *bound = t.tiu_busy * 10 >= t.total_cycles * 9    ? "TIU"
                          : t.gdma_busy * 10 >= t.total_cycles * 9 ? "GDMA"
                                                                   : "latency";
      std::printf("  %5u %4u %10llu %10llu %10llu %7s %10llu %9u %9llu  %s\n", g->id(),
                  g->ops()->size(), (unsigned long long)t.total_cycles,
                  (unsigned long long)t.tiu_busy, (unsigned long long)t.gdma_busy, bound,
                  (unsigned long long)ddr, peak, (unsigned long long)t.bank_conflicts,
                  g->ops()->size() ? g->ops()->Get(0)->c_str() : "");
      conflicts += t.bank_conflicts;
      conflictCycles += t.conflict_cycles;
      total += t.total_cycles;
      tiuTotal += t.tiu_busy;
      gdmaTotal += t.gdma_busy;
      ddrTotal += ddr;
    }
    std::printf("  %5s %4s %10llu %10llu %10llu %7s %10llu %9s %9llu\n", "total", "",
                (unsigned long long)total, (unsigned long long)tiuTotal,
                (unsigned long long)gdmaTotal, "", (unsigned long long)ddrTotal, "",
                (unsigned long long)conflicts);
    std::printf("  bank conflicts: %llu commands started while the other engine used one of "
                "their LMEM banks, adding %llu cycles to the engines' busy time\n",
                (unsigned long long)conflicts, (unsigned long long)conflictCycles);
  }
  return 0;
}
} // namespace

int kiln::cli::inspectMain(const Args &args) {
  std::string path;
  bool json = false, profile = false;
  for (const auto &a : args) {
    if (a == "--json")
      json = true;
    else if (a == "--profile")
      profile = true;
    else if (!a.empty() && a[0] == '-')
      return fail("inspect: unknown option '" + a + "'");
    else
      path = a;
  }
  if (path.empty())
    return fail("inspect expects a bmodel file");
  std::vector<uint8_t> file;
  if (auto err = host::readFile(path, file); !err.empty())
    return fail(err);
  kiln_bmodel_header h{};
  if (file.size() < sizeof(h))
    return fail(path + ": too small to be a bmodel");
  std::memcpy(&h, file.data(), sizeof(h));
  if (std::memcmp(h.magic, KILN_BMODEL_MAGIC, sizeof(h.magic)) != 0)
    return fail(path + ": not a bmodel (bad magic)");
  if (h.flatbuffer_offset > file.size() || h.flatbuffer_size > file.size() - h.flatbuffer_offset)
    return fail(path + ": truncated bmodel");
  const uint8_t *buf = file.data() + h.flatbuffer_offset;
  flatbuffers::Verifier verifier(buf, h.flatbuffer_size);
  if (!fb::VerifyModelBuffer(verifier))
    return fail(path + ": corrupt bmodel (FlatBuffer verification failed)");
  const fb::Model *m = fb::GetModel(buf);
  if (!m->chip() || !m->nets() || !m->compiler_version())
    return fail(path + ": bmodel lacks its chip or nets");
  if (json && profile)
    return fail("inspect: --json and --profile exclude each other");
  if (profile)
    return printProfile(file, h, m);
  if (!json) {
    printText(file, h, m);
    return 0;
  }
  std::printf("{\n  \"format\": \"%u.%u\",\n  \"compiler\": %s,\n  \"chip\": {\"name\": %s, "
              "\"lanes\": %u, \"lmem_bytes_per_lane\": %u, \"abi\": \"%u.%u\"},\n  \"nets\": [",
              h.format_major, h.format_minor, q(m->compiler_version()).c_str(),
              q(m->chip()->name()).c_str(), m->chip()->lanes(),
              m->chip()->lmem_bytes_per_lane(), m->chip()->abi_major(), m->chip()->abi_minor());
  bool firstNet = true;
  uint32_t index = 0;
  for (const fb::Net *net : *m->nets()) {
    std::printf("%s\n    {\"name\": %s, \"coeff_size\": %llu, \"neuron_size\": %llu, "
                "\"macs\": %llu, \"min_ddr_bytes\": %llu,\n",
                firstNet ? "" : ",", q(net->name()).c_str(),
                (unsigned long long)net->coeff_size(), (unsigned long long)net->neuron_size(),
                (unsigned long long)net->macs(), (unsigned long long)net->min_ddr_bytes());
    firstNet = false;
    std::printf("     \"memory\": %s,\n", memoryJson(file, index++).c_str());
    std::printf("     \"activation_plan\": %s,\n", planJson(*net).c_str());
    std::printf("     \"inputs\": %s,\n", list(net->inputs(), tensor, "        ").c_str());
    std::printf("     \"outputs\": %s,\n", list(net->outputs(), tensor, "        ").c_str());
    std::printf("     \"tensors\": %s,\n", list(net->tensors(), tensor, "        ").c_str());
    std::printf("     \"groups\": %s,\n", list(net->groups(), groupJson, "      ").c_str());
    std::printf("     \"dynamic_weights\": %s,\n",
                list(net->dynamic_weights(), dynamicJson, "      ").c_str());
    std::printf("     \"residency\": %s}", list(net->residency(), residencyJson, "      ").c_str());
  }
  std::printf("\n  ]\n}\n");
  return 0;
}
