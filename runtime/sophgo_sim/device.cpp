// Sophgo's simulator behind kiln's HAL.
#include "kiln/sophgo_sim/device.h"
#include "kiln/rt/synchronous_hal.hpp"

#include <cstring>
#include <vector>

#include "kiln/abi/bm1684x_stream.h"

namespace kiln::sophgo_sim {

std::unique_ptr<Device> Device::open(uint64_t ddrBytes, std::string *why) {
  SophgoSim *sim = SophgoSim::get(why, ddrBytes);
  return sim ? std::unique_ptr<Device>(new Device(sim)) : nullptr;
}

kiln_status Device::run(const kiln_submit_desc &desc) {
  fault_.clear();
  auto fail = [&](std::string why) {
    fault_ = std::move(why);
    return last_ = KILN_ERR_DEVICE_FAULT;
  };
  if (desc.isa != KILN_ISA_BM1684X)
    return last_ = KILN_ERR_UNSUPPORTED;
  const uint64_t lo = KILN_BM_DDR_BASE, hi = KILN_BM_DDR_BASE + sim_->ddrBytes();
  auto inside = [&](uint64_t addr, uint64_t size) {
    return addr >= lo && addr <= hi && size <= hi - addr;
  };
  if (!inside(desc.ddr_base, desc.ddr_size) || !inside(desc.tiu_queue_addr, desc.tiu_bytes) ||
      !inside(desc.gdma_queue_addr, desc.gdma_bytes))
    return fail("streams or DDR window outside the simulator's DDR");
  const uint8_t *ddr = sim_->ddr();
  std::vector<uint8_t> tiu(ddr + (desc.tiu_queue_addr - lo),
                           ddr + (desc.tiu_queue_addr - lo) + desc.tiu_bytes);
  std::vector<uint8_t> gdma(ddr + (desc.gdma_queue_addr - lo),
                            ddr + (desc.gdma_queue_addr - lo) + desc.gdma_bytes);
  uint32_t engine, index;
  const char *why = kiln_bm_run_streams(
      tiu.data(), tiu.size(), gdma.data(), gdma.size(), desc.ddr_base, desc.ddr_base + desc.ddr_size,
      [](void *user, uint32_t e, const uint8_t *cmd, uint32_t bytes) -> const char * {
        Device &d = *static_cast<Device *>(user);
        // The simulator reads up to its command's size; give it a padded copy.
        uint8_t padded[KILN_BM_MAX_CMD_BYTES] = {};
        std::memcpy(padded, cmd, bytes);
        d.sim_->execute(padded, e == KILN_BM_ENGINE_TIU ? SophgoSim::Tiu : SophgoSim::Gdma);
        ++(e == KILN_BM_ENGINE_TIU ? d.tiuCommands_ : d.gdmaCommands_);
        return nullptr;
      },
      this, &engine, &index);
  if (why)
    return fail(std::string(engine == KILN_BM_ENGINE_TIU ? "tiu[" : "gdma[") +
                std::to_string(index) + "]: " + why);
  return last_ = KILN_OK;
}

namespace {

Device &deviceOf(void *ctx) { return *static_cast<Device *>(ctx); }

// Host access to the simulator's DDR: nullptr unless [addr, addr + size) is inside.
uint8_t *span(SophgoSim &sim, uint64_t addr, uint64_t size) {
  if (addr < KILN_BM_DDR_BASE || addr - KILN_BM_DDR_BASE > sim.ddrBytes() ||
      size > sim.ddrBytes() - (addr - KILN_BM_DDR_BASE))
    return nullptr;
  return sim.ddr() + (addr - KILN_BM_DDR_BASE);
}

} // namespace

kiln_hal Device::hal() {
  kiln_hal h{};
  h.ctx = this;
  h.mem_base = KILN_BM_DDR_BASE;
  h.mem_size = sim_->ddrBytes();
  h.isa = KILN_ISA_BM1684X;
  h.write_mem = [](void *ctx, uint64_t addr, const void *src, uint64_t size) {
    uint8_t *dst = span(*deviceOf(ctx).sim_, addr, size);
    if (!dst || (size && !src))
      return KILN_ERR_INVALID_ARGUMENT;
    if (size)
      std::memcpy(dst, src, size);
    return KILN_OK;
  };
  h.read_mem = [](void *ctx, uint64_t addr, void *dst, uint64_t size) {
    const uint8_t *src = span(*deviceOf(ctx).sim_, addr, size);
    if (!src || (size && !dst))
      return KILN_ERR_INVALID_ARGUMENT;
    if (size)
      std::memcpy(dst, src, size);
    return KILN_OK;
  };
  // Each submission runs at once.
  rt::setSynchronousSubmission<Device>(h);
  return h;
}

} // namespace kiln::sophgo_sim
