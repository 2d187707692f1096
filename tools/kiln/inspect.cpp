// kiln inspect MODEL.bmodel [--json | --profile]
// Prints everything in a bmodel: header, chip, tensors, layer groups with
// their slice tables and LMEM allocations, dynamic weights and residency.
// --profile prints instead where the modelled time goes, group by group.
#include "Commands.h"
#include "Container.h"
#include "Disasm.h"
#include "GroupRecords.h"
#include "Json.h"
#include "NetIo.h"

#include "kiln/abi/bm1684x_stream.h"
#include "kiln/abi/bmodel.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/cost.h"
#include "kiln/bmodel_generated.h"
#include "kiln/chip/bm1684x.h"
#include "kiln/host/npz.h"
#include "kiln/rt/kiln_rt.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <functional>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace fb = kiln::bmodel;
using namespace kiln;

namespace {
using llvm::json::OStream;
using StrVec = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>;

/// Shapes and slice tables in the text output.
template <typename T> std::string arr(const flatbuffers::Vector<T> *v) {
  std::string out = "[";
  for (uint32_t i = 0; v && i < v->size(); ++i)
    out += (i ? ", " : "") + std::to_string(v->Get(i));
  return out + "]";
}

/// `key`: [f(element), ...] over a FlatBuffer vector ([] when absent).
template <typename V, typename F>
void arrayOf(OStream &j, llvm::StringRef key, const V *v, F f) {
  j.attributeArray(key, [&] {
    for (uint32_t i = 0; v && i < v->size(); ++i)
      f(v->Get(i));
  });
}

template <typename T>
void numbers(OStream &j, llvm::StringRef key, const flatbuffers::Vector<T> *v) {
  arrayOf(j, key, v, [&](T x) { j.value(x); });
}

void strings(OStream &j, llvm::StringRef key, const StrVec *v) {
  arrayOf(j, key, v, [&](const flatbuffers::String *s) { j.value(cli::jsonString(s)); });
}

/// The text output shows names as one-line JSON, so that any name reads back.
std::string oneLine(llvm::function_ref<void(OStream &)> write) {
  std::string out;
  llvm::raw_string_ostream os(out);
  OStream j(os);
  write(j);
  return out;
}

std::string names(const StrVec *v) {
  return oneLine([&](OStream &j) {
    j.array([&] {
      for (uint32_t i = 0; v && i < v->size(); ++i)
        j.value(cli::jsonString(v->Get(i)));
    });
  });
}

bool quantized(const fb::Tensor *t) {
  return t->dtype() == fb::DType::INT8 || t->dtype() == fb::DType::UINT8;
}

void tensorJson(OStream &j, const fb::Tensor *t) {
  j.object([&] {
    j.attribute("name", cli::jsonString(t->name()));
    j.attribute("dtype", fb::EnumNameDType(t->dtype()));
    if (quantized(t)) {
      j.attribute("scale", double(t->scale()));
      j.attribute("zero_point", t->zero_point());
    }
    numbers(j, "shape", t->shape());
    j.attribute("ddr_offset", t->ddr_offset());
    j.attribute("size", t->size());
    j.attribute("buffer", t->buffer());
    j.attribute("first_group", t->first_group());
    j.attribute("last_group", t->last_group());
  });
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

void groupJson(OStream &j, const fb::LayerGroup *g) {
  j.object([&] {
    j.attribute("id", g->id());
    strings(j, "ops", g->ops());
    j.attribute("n_slices", g->n_slices());
    j.attribute("c_slices", g->c_slices());
    j.attribute("h_slices", g->h_slices());
    j.attribute("tiu_count", g->tiu_count());
    j.attribute("gdma_count", g->gdma_count());
    j.attribute("modelled_cycles", g->modelled_cycles());
    arrayOf(j, "slices", g->slices(), [&](const fb::TensorSlices *t) {
      j.object([&] {
        j.attribute("tensor", cli::jsonString(t->tensor()));
        numbers(j, "n_idx", t->n_idx());
        numbers(j, "n_len", t->n_len());
        numbers(j, "h_idx", t->h_idx());
        numbers(j, "h_len", t->h_len());
        numbers(j, "c_len", t->c_len());
        numbers(j, "w_len", t->w_len());
      });
    });
    arrayOf(j, "timesteps", g->timesteps(), [&](const fb::Timestep *t) {
      j.object([&] {
        j.attribute("slice", t->slice());
        j.attributeArray("tiu", [&] {
          j.value(t->tiu_begin());
          j.value(t->tiu_end());
        });
        j.attributeArray("gdma", [&] {
          j.value(t->gdma_begin());
          j.value(t->gdma_end());
        });
      });
    });
    arrayOf(j, "lmem", g->lmem(), [&](const fb::LmemAlloc *a) {
      j.object([&] {
        j.attribute("tensor", cli::jsonString(a->tensor()));
        j.attribute("addr", a->addr());
        j.attribute("size", a->size());
        j.attribute("buffer", a->buffer());
        j.attribute("held", a->held());
      });
    });
  });
}

void dynamicJson(OStream &j, const fb::DynamicWeight *d) {
  j.object([&] {
    j.attribute("tensor", cli::jsonString(d->tensor()));
    j.attribute("producer", cli::jsonString(d->producer()));
    strings(j, "consumers", d->consumers());
    numbers(j, "shape", d->shape());
    j.attribute("dtype", fb::EnumNameDType(d->dtype()));
    j.attribute("src_layout", fb::EnumNameLayout(d->src_layout()));
    j.attribute("dst_layout", fb::EnumNameLayout(d->dst_layout()));
    j.attribute("ddr_offset", d->ddr_offset());
    j.attribute("lmem_addr", d->lmem_addr());
    j.attribute("lmem_size", d->lmem_size());
    j.attribute("group", d->group());
    j.attributeArray("steps", [&] {
      j.value(d->first_step());
      j.value(d->last_step());
    });
    j.attribute("formed_on_chip", d->formed_on_chip());
    strings(j, "producers", d->producers());
  });
}

void residencyJson(OStream &j, const fb::Residency *r) {
  j.object([&] {
    j.attribute("tensor", cli::jsonString(r->tensor()));
    j.attribute("kind", fb::EnumNameResidencyKind(r->kind()));
    j.attribute("group", r->group());
    j.attribute("lmem_addr", r->lmem_addr());
    j.attribute("lmem_size", r->lmem_size());
  });
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

void memoryJson(OStream &j, const std::vector<uint8_t> &file, uint32_t index) {
  kiln_memory_requirements r;
  if (kiln_bmodel_query_memory(file.data(), file.size(), index, &r) != KILN_OK) {
    j.value(nullptr);
    return;
  }
  j.object([&] {
    j.attribute("device_bytes", r.device_bytes);
    j.attribute("command_bytes", r.command_bytes);
    j.attribute("coeff_bytes", r.coeff_bytes);
    j.attribute("neuron_bytes", r.neuron_bytes);
    j.attribute("runtime_storage_bytes", uint64_t(r.runtime_storage_bytes));
    j.attribute("net_storage_bytes", uint64_t(r.net_storage_bytes));
  });
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

void planJson(OStream &j, const fb::Net &net) {
  PlanFigures f = planFigures(net);
  j.object([&] {
    j.attribute("buffers", f.buffers);
    j.attribute("planned_bytes", f.planned);
    j.attribute("live_peak_bytes", f.livePeak);
    j.attribute("live_peak_group", f.peakGroup);
    j.attribute("unplanned_bytes", f.unplanned);
  });
}

/// Everything in the bmodel as one JSON document (the text output's figures).
void printJson(const std::vector<uint8_t> &file, const kiln_bmodel_header &h,
               const fb::Model *m, bool sophgo) {
  OStream j(llvm::outs(), 2);
  j.object([&] {
    j.attribute("container", sophgo ? "sophgo" : "kiln");
    j.attribute("format", std::to_string(h.format_major) + "." + std::to_string(h.format_minor));
    j.attribute("compiler", cli::jsonString(m->compiler_version()));
    j.attributeObject("chip", [&] {
      j.attribute("name", cli::jsonString(m->chip()->name()));
      j.attribute("lanes", m->chip()->lanes());
      j.attribute("lmem_bytes_per_lane", m->chip()->lmem_bytes_per_lane());
      j.attribute("abi", std::to_string(m->chip()->abi_major()) + "." +
                             std::to_string(m->chip()->abi_minor()));
    });
    uint32_t index = 0;
    // A net's stages (other input shapes) are nets without name, memory or
    // stages of their own.
    std::function<void(const fb::Net *, bool)> netJson = [&](const fb::Net *net, bool root) {
      j.object([&] {
        if (root)
          j.attribute("name", cli::jsonString(net->name()));
        j.attribute("coeff_size", net->coeff_size());
        j.attribute("neuron_size", net->neuron_size());
        j.attribute("macs", net->macs());
        j.attribute("min_ddr_bytes", net->min_ddr_bytes());
        if (root) {
          j.attributeBegin("memory");
          memoryJson(j, file, index++);
          j.attributeEnd();
          if (net->stages())
            arrayOf(j, "stages", net->stages(), [&](const fb::Net *s) { netJson(s, false); });
        }
        j.attributeBegin("activation_plan");
        planJson(j, *net);
        j.attributeEnd();
        arrayOf(j, "inputs", net->inputs(), [&](auto *t) { tensorJson(j, t); });
        arrayOf(j, "outputs", net->outputs(), [&](auto *t) { tensorJson(j, t); });
        arrayOf(j, "tensors", net->tensors(), [&](auto *t) { tensorJson(j, t); });
        arrayOf(j, "groups", net->groups(), [&](auto *g) { groupJson(j, g); });
        arrayOf(j, "dynamic_weights", net->dynamic_weights(),
                [&](auto *d) { dynamicJson(j, d); });
        arrayOf(j, "residency", net->residency(), [&](auto *r) { residencyJson(j, r); });
        strings(j, "decisions", net->decisions());
      });
    };
    arrayOf(j, "nets", m->nets(), [&](const fb::Net *net) { netJson(net, true); });
  });
  llvm::outs() << "\n";
}

void printText(const std::vector<uint8_t> &file, const kiln_bmodel_header &h,
               const fb::Model *m, bool listCommands, const std::string &sophgo) {
  if (!sophgo.empty())
    std::printf("Sophgo's container (libbmrt loads it), carrying kiln's.\n%s\n",
                sophgo.c_str());
  std::printf("bmodel format %u.%u, compiler %s, chip %s (%u lanes x %u KiB LMEM, ABI %u.%u)\n",
              h.format_major, h.format_minor, m->compiler_version()->c_str(),
              m->chip()->name()->c_str(), m->chip()->lanes(),
              m->chip()->lmem_bytes_per_lane() / 1024, m->chip()->abi_major(),
              m->chip()->abi_minor());
  uint32_t index = 0;
  for (const fb::Net *root : *m->nets())
   for (uint32_t stage = 0; stage < cli::stageCount(*root); ++stage) {
    const fb::Net *net = &cli::stageOf(*root, stage);
    if (stage)
      std::printf("net %s stage %u: neuron %llu bytes, %u groups, %llu MACs (the coefficients "
                  "of stage 0)\n",
                  root->name()->c_str(), stage, (unsigned long long)net->neuron_size(),
                  net->groups()->size(), (unsigned long long)net->macs());
    else
      std::printf("net %s: coeff %llu bytes, neuron %llu bytes, %u groups, %llu MACs%s\n",
                  net->name()->c_str(), (unsigned long long)net->coeff_size(),
                  (unsigned long long)net->neuron_size(), net->groups()->size(),
                  (unsigned long long)net->macs(),
                  cli::stageCount(*root) > 1
                      ? (", stage 0 of " + std::to_string(cli::stageCount(*root))).c_str()
                      : "");
    if (!stage)
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
      if (g->bm1684x_tiu_count())
        std::printf("    BM1684X streams: %u TIU commands (%llu bytes), %u GDMA commands (%llu "
                    "bytes)\n",
                    g->bm1684x_tiu_count(),
                    (unsigned long long)(g->bm1684x_tiu() ? g->bm1684x_tiu()->size() : 0),
                    g->bm1684x_gdma_count(),
                    (unsigned long long)(g->bm1684x_gdma() ? g->bm1684x_gdma()->size() : 0));
      if (listCommands && g->bm1684x_tiu_count())
        for (auto [range, engine] : {std::pair{g->bm1684x_gdma(), KILN_BM_ENGINE_GDMA},
                                     std::pair{g->bm1684x_tiu(), KILN_BM_ENGINE_TIU}}) {
          if (!range || h.blob_offset > file.size() || range->offset() > h.blob_size ||
              range->size() > h.blob_size - range->offset() ||
              h.blob_size > file.size() - h.blob_offset) {
            std::printf("      (stream outside the file)\n");
            continue;
          }
          std::printf("%s", cli::disassembleStream(file.data() + h.blob_offset + range->offset(),
                                                   range->size(), engine, "      ")
                                .c_str());
        }
    }
    if (net->dynamic_weights())
      for (const fb::DynamicWeight *d : *net->dynamic_weights())
        std::printf("  dynamic weight %s\n",
                    oneLine([&](OStream &j) { dynamicJson(j, d); }).c_str());
    if (net->decisions())
      for (const flatbuffers::String *line : *net->decisions())
        std::printf("  decision: %s\n", line->c_str());
  }
}
/// Per group: modelled cycles (the chip's scheduler over its queues), each
/// engine's busy cycles, what bounds it, DDR bytes on the bus, LMEM peak and
/// the bank conflicts left (commands that started in one) with the cycles
/// they add.
int printProfile(const std::vector<uint8_t> &file, const kiln_bmodel_header &h,
                 const fb::Model *m) {
  for (const fb::Net *root : *m->nets())
   for (uint32_t stage = 0; stage < cli::stageCount(*root); ++stage) {
    const fb::Net *net = &cli::stageOf(*root, stage);
    std::printf("net %s%s: per group, modelled cycles; bound: the engine busy >= 90%% of the "
                "group's cycles, else latency (engines waiting on each other)\n",
                root->name()->c_str(),
                cli::stageCount(*root) > 1 ? (" stage " + std::to_string(stage)).c_str() : "");
    std::printf("  %5s %4s %10s %10s %10s %7s %10s %9s %9s %9s  %s\n", "group", "ops",
                "cycles", "tiu_busy", "gdma_busy", "bound", "ddr_bytes", "lmem_peak",
                "conflicts", "conf_cyc", "first op");
    uint64_t total = 0, tiuTotal = 0, gdmaTotal = 0, ddrTotal = 0, conflicts = 0,
             conflictCycles = 0;
    for (const fb::LayerGroup *g : *net->groups()) {
      std::vector<kiln_tiu_cmd> tiu;
      std::vector<kiln_gdma_cmd> gdma;
      kiln_queue_timing t{};
      uint64_t ddr = 0;
      if (g->bm1684x_tiu_count()) {
        // The chip's own commands, as the cmodel charges them (no bank
        // conflicts modelled for them yet).
        const auto *tr = g->bm1684x_tiu(), *gr = g->bm1684x_gdma();
        auto inBlob = [&](const auto *r) {
          return r && h.blob_offset <= file.size() && h.blob_size <= file.size() - h.blob_offset &&
                 r->offset() <= h.blob_size && r->size() <= h.blob_size - r->offset();
        };
        chip::bm1684x::StreamTiming st;
        if (!inBlob(tr) || !inBlob(gr) ||
            chip::bm1684x::timeStreams(file.data() + h.blob_offset + tr->offset(), tr->size(),
                                       file.data() + h.blob_offset + gr->offset(), gr->size(), &st))
          return kiln::cli::fail("inspect: group " + std::to_string(g->id()) +
                                 " has streams outside the blob or that cannot run");
        t.total_cycles = st.cycles, t.tiu_busy = st.tiuBusy, t.gdma_busy = st.gdmaBusy;
        ddr = st.ddrBusBytes;
      } else {
        if (!kiln::cli::groupRecords(file, h, *g, tiu, gdma) ||
            kiln_schedule_queues(tiu.data(), tiu.size(), gdma.data(), gdma.size(), nullptr,
                                 nullptr, &t) != KILN_OK)
          return kiln::cli::fail("inspect: group " + std::to_string(g->id()) +
                                 " has commands outside the blob or sync ids that never resolve");
        for (const kiln_gdma_cmd &c : gdma)
          ddr += kiln::cli::ddrBusBytes(c);
      }
      uint32_t peak = 0;
      if (g->lmem())
        for (const fb::LmemAlloc *a : *g->lmem())
          peak = std::max(peak, a->addr() + a->size());
      const char *bound = t.tiu_busy * 10 >= t.total_cycles * 9    ? "TIU"
                          : t.gdma_busy * 10 >= t.total_cycles * 9 ? "GDMA"
                                                                   : "latency";
      std::printf("  %5u %4u %10llu %10llu %10llu %7s %10llu %9u %9llu %9llu  %s\n", g->id(),
                  g->ops()->size(), (unsigned long long)t.total_cycles,
                  (unsigned long long)t.tiu_busy, (unsigned long long)t.gdma_busy, bound,
                  (unsigned long long)ddr, peak, (unsigned long long)t.bank_conflicts,
                  (unsigned long long)t.conflict_cycles,
                  g->ops()->size() ? g->ops()->Get(0)->c_str() : "");
      conflicts += t.bank_conflicts;
      conflictCycles += t.conflict_cycles;
      total += t.total_cycles;
      tiuTotal += t.tiu_busy;
      gdmaTotal += t.gdma_busy;
      ddrTotal += ddr;
    }
    std::printf("  %5s %4s %10llu %10llu %10llu %7s %10llu %9s %9llu %9llu\n", "total", "",
                (unsigned long long)total, (unsigned long long)tiuTotal,
                (unsigned long long)gdmaTotal, "", (unsigned long long)ddrTotal, "",
                (unsigned long long)conflicts, (unsigned long long)conflictCycles);
    std::printf("  bank conflicts: %llu commands started while the other engine used one of "
                "their LMEM banks, adding %llu cycles to the engines' busy time\n",
                (unsigned long long)conflicts, (unsigned long long)conflictCycles);
  }
  return 0;
}
} // namespace

llvm::cl::SubCommand kiln::cli::inspectCommand(
    "inspect", "Print everything in a bmodel: header, tensors, layer groups, memory plan");

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> bmodelPath(cl::Positional, cl::Required, cl::desc("<MODEL.bmodel>"),
                                cl::sub(cli::inspectCommand), cl::cat(cli::options()));
cl::opt<bool> asJson("json", cl::desc("Print it as one JSON document"),
                     cl::sub(cli::inspectCommand), cl::cat(cli::options()));
cl::opt<bool> commands("commands",
                        cl::desc("Also list each group's BM1684X command streams "
                                 "(a bmodel compiled with isa: bm1684x)"),
                        cl::sub(cli::inspectCommand), cl::cat(cli::options()));
cl::opt<bool> profile("profile",
                      cl::desc("Print where the modelled time goes instead, group by group"),
                      cl::sub(cli::inspectCommand), cl::cat(cli::options()));
} // namespace

int kiln::cli::inspectMain() {
  std::vector<uint8_t> file;
  if (auto err = host::readFile(bmodelPath, file); !err.empty())
    return fail(err);
  // Sophgo's container: kiln's index and everything it addresses are its blob.
  const bool sophgo = kiln_is_sophgo(file.data(), file.size());
  std::string sophgoSummary;
  if (sophgo) {
    // Verified as kiln's runtime verifies it, then its own index checked.
    kiln_memory_requirements req{};
    kiln_error_detail detail{};
    if (kiln_bmodel_query_memory_ex(file.data(), file.size(), 0, &req, &detail) != KILN_OK)
      return fail(bmodelPath + ": " + describeError(detail));
    if (std::string err = checkSophgoIndex(file, &sophgoSummary); !err.empty())
      return fail(bmodelPath + ": " + err);
    llvm::ArrayRef<uint8_t> inner = kilnContainer(file);
    file = std::vector<uint8_t>(inner.begin(), inner.end());
  }
  kiln_bmodel_header h{};
  if (file.size() < sizeof(h))
    return fail(bmodelPath + ": too small to be a bmodel");
  std::memcpy(&h, file.data(), sizeof(h));
  if (std::memcmp(h.magic, KILN_BMODEL_MAGIC, sizeof(h.magic)) != 0)
    return fail(bmodelPath + ": not a bmodel (bad magic)");
  if (h.flatbuffer_offset > file.size() || h.flatbuffer_size > file.size() - h.flatbuffer_offset)
    return fail(bmodelPath + ": truncated bmodel");
  const uint8_t *buf = file.data() + h.flatbuffer_offset;
  flatbuffers::Verifier verifier(buf, h.flatbuffer_size);
  if (!fb::VerifyModelBuffer(verifier))
    return fail(bmodelPath + ": corrupt bmodel (FlatBuffer verification failed)");
  const fb::Model *m = fb::GetModel(buf);
  if (!m->chip() || !m->nets() || !m->compiler_version())
    return fail(bmodelPath + ": bmodel lacks its chip or nets");
  if (asJson && profile)
    return fail("inspect: --json and --profile exclude each other");
  if (profile)
    return printProfile(file, h, m);
  if (asJson)
    printJson(file, h, m, sophgo);
  else
    printText(file, h, m, commands, sophgoSummary);
  return 0;
}
