//===- Trace.cpp - A Chrome/Perfetto trace of a run on the cmodel ---------===//

#include "Trace.h"
#include "Container.h"
#include "GroupRecords.h"
#include "Json.h"

#include "kiln/abi/bmodel.h"
#include "kiln/abi/cost.h"
#include "kiln/bmodel_generated.h"


namespace fb = kiln::bmodel;
using namespace kiln;

namespace {

constexpr double kCyclesPerUs = 1000.0; // TIU and GDMA clocks: 1 GHz

const char *tiuKind(const kiln_tiu_cmd &c) {
  switch (c.op) {
  case KILN_TIU_CONV: return (c.flags & KILN_TIU_FLAG_DEPTHWISE) ? "depthwise" : "conv";
  case KILN_TIU_DECONV: return "deconv";
  case KILN_TIU_POOL: return "pool";
  case KILN_TIU_ELTWISE: return "eltwise";
  case KILN_TIU_ACTIVE: return "active";
  case KILN_TIU_CAST: return "cast";
  case KILN_TIU_RESIZE: return "resize";
  default: return "tiu";
  }
}

const char *gdmaKind(const kiln_gdma_cmd &c) {
  switch (c.dir) {
  case KILN_GDMA_DDR_TO_LMEM: return "load";
  case KILN_GDMA_LMEM_TO_DDR: return "store";
  case KILN_GDMA_LMEM_TO_LMEM: return "move";
  default: return "copy";
  }
}

} // namespace

std::string cli::writeTrace(const std::string &path, const std::vector<uint8_t> &bmodel,
                            uint32_t netIndex, uint32_t stage,
                            const std::vector<cmodel::TraceEvent> &events,
                            uint64_t firstSubmission) {
  llvm::ArrayRef<uint8_t> file = kilnContainer(bmodel);
  kiln_bmodel_header h{};
  if (file.size() < sizeof(h))
    return "trace: not a bmodel";
  std::memcpy(&h, file.data(), sizeof(h));
  const fb::Model *m = fb::GetModel(file.data() + h.flatbuffer_offset);
  if (!m->nets() || netIndex >= m->nets()->size())
    return "trace: the bmodel has no net " + std::to_string(netIndex);
  const fb::Net *root = m->nets()->Get(netIndex);
  if (stage >= stageCount(*root))
    return "trace: net " + std::to_string(netIndex) + " has no stage " + std::to_string(stage);
  const fb::Net &net = stageOf(*root, stage);
  const auto *groups = net.groups();
  uint32_t groupCount = groups ? groups->size() : 0;
  std::vector<std::vector<kiln_tiu_cmd>> tiu(groupCount);
  std::vector<std::vector<kiln_gdma_cmd>> gdma(groupCount);
  for (uint32_t g = 0; g < groupCount; ++g) {
    if (!groupRecords(file, h, *groups->Get(g), tiu[g], gdma[g]))
      return "trace: group " + std::to_string(g) + " has commands outside the blob";
  }

  return writeJsonFile(path, 1, [&](llvm::json::OStream &j) {
    j.objectBegin();
    j.attribute("displayTimeUnit", "ns");
    j.attributeBegin("traceEvents");
    j.arrayBegin();
    auto meta = [&](const char *name, int tid, const std::string &value) {
      j.object([&] {
        j.attribute("ph", "M");
        j.attribute("name", name);
        j.attribute("pid", 0);
        j.attribute("tid", tid);
        j.attributeObject("args", [&] { j.attribute("name", value); });
      });
    };
    meta("process_name", 0, "kiln cmodel: " + jsonString(net.name()));
    meta("thread_name", KILN_ENGINE_TIU, "TIU");
    meta("thread_name", KILN_ENGINE_GDMA, "GDMA");

    uint64_t ddrBytes = 0;
    for (const cmodel::TraceEvent &e : events) {
      if (e.submission < firstSubmission || e.submission - firstSubmission >= groupCount)
        continue;
      uint32_t g = e.submission - firstSubmission;
      const fb::LayerGroup &lg = *groups->Get(g);
      std::string name, kind;
      uint64_t bytes = 0, nominal = 0;
      if (e.engine == KILN_ENGINE_TIU) {
        if (e.index >= tiu[g].size())
          continue;
        kind = tiuKind(tiu[g][e.index]);
        nominal = kiln_tiu_cycles(&tiu[g][e.index]);
        uint32_t op = lg.tiu_ops() && e.index < lg.tiu_ops()->size() ? lg.tiu_ops()->Get(e.index)
                                                                       : 0;
        name = lg.ops() && op < lg.ops()->size() ? jsonString(lg.ops()->Get(op)) : kind;
      } else {
        if (e.index >= gdma[g].size())
          continue;
        const kiln_gdma_cmd &c = gdma[g][e.index];
        kind = gdmaKind(c);
        bytes = ddrBusBytes(c);
        nominal = kiln_gdma_cycles(&c);
        uint32_t t = lg.gdma_tensors() && e.index < lg.gdma_tensors()->size()
                         ? lg.gdma_tensors()->Get(e.index)
                         : 0xffffu;
        std::string tensor = lg.slices() && t < lg.slices()->size()
                                 ? jsonString(lg.slices()->Get(t)->tensor())
                             : t == 0xffffu && c.dir == KILN_GDMA_DDR_TO_LMEM
                                 ? "(a later group's coefficient)"
                             : lg.ops() && lg.ops()->size() ? jsonString(lg.ops()->Get(0))
                                                            : "";
        name = kind + " " + tensor;
      }
      j.object([&] {
        j.attribute("name", name);
        j.attribute("cat", kind);
        j.attribute("ph", "X");
        j.attribute("pid", 0);
        j.attribute("tid", (int)e.engine);
        j.attribute("ts", double(e.start) / kCyclesPerUs);
        j.attribute("dur", double(e.cycles) / kCyclesPerUs);
        j.attributeObject("args", [&] {
          j.attribute("group", (int64_t)g);
          j.attribute("command", (int64_t)e.index);
          j.attribute("cycles", (int64_t)e.cycles);
          if (bytes)
            j.attribute("ddr_bytes", (int64_t)bytes);
          // What sharing an LMEM bank with the other engine's command added.
          if (e.cycles > nominal)
            j.attribute("bank_conflict_cycles", (int64_t)(e.cycles - nominal));
        });
      });
      if (bytes) {
        ddrBytes += bytes;
        j.object([&] {
          j.attribute("name", "DDR bytes");
          j.attribute("ph", "C");
          j.attribute("pid", 0);
          j.attribute("ts", double(e.start + e.cycles) / kCyclesPerUs);
          j.attributeObject("args", [&] { j.attribute("bytes", (int64_t)ddrBytes); });
        });
      }
    }
    j.arrayEnd();
    j.attributeEnd();
    j.objectEnd();
  });
}
