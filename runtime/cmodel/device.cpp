// The cmodel device: register file, submissions and the HAL over them.
#include "kiln/cmodel/device.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "kiln/abi/bm1684x_stream.h"
#include "kiln/chip/bm1684x.h"
#include "kiln/chip/engines.h"
#include "kiln/chip/tiu_kernels.h"
#include "kiln/abi/version.h"

namespace kiln::cmodel {

// The queues and window of the submission being run.
struct Device::Submission {
  chip::DdrWindow window;
  std::vector<kiln_tiu_cmd> tiu;
  std::vector<kiln_gdma_cmd> gdma;
};

namespace {

constexpr uint32_t kIrqDone = 0x1u;
constexpr uint32_t kIrqFault = 0x2u;

std::string recordName(kiln_engine engine, uint32_t index) {
  return std::string(engine == KILN_ENGINE_TIU ? "tiu[" : "gdma[") + std::to_string(index) + "]";
}

} // namespace

static_assert(Device::kDdrBase == KILN_BM_DDR_BASE, "DDR sits where BM1684X's GDMA sees it");

Device::Device(uint64_t ddr_bytes, kiln_isa isa)
    : isa_(isa), ddr_(ddr_bytes), lmem_(uint64_t{KILN_NPU_NUM} * KILN_LMEM_BYTES_PER_LANE) {
  const char *strict = std::getenv("KILN_CMODEL_STRICT_SYNC");
  strict_sync_ = strict && *strict && std::strcmp(strict, "0") != 0;
  softReset();
}

void Device::softReset() {
  fault_in_ = hang_in_ = -1;
  std::memset(regs_, 0, sizeof regs_);
  reg(KILN_REG_CHIP_ID) = KILN_CHIP_ID_BM1684X;
  reg(KILN_REG_ABI_VERSION) = uint32_t{KILN_ABI_VERSION_MAJOR} << 16 | KILN_ABI_VERSION_MINOR;
  reg(KILN_REG_STATUS) = KILN_STATUS_IDLE;
}

uint32_t Device::read_reg(uint32_t offset) const {
  if (offset >= KILN_REG_SPACE_BYTES || offset % 4 != 0 || offset == KILN_REG_DOORBELL ||
      offset == KILN_REG_CTRL)
    return 0; // write-only or unmapped
  return regs_[offset / 4];
}

void Device::write_reg(uint32_t offset, uint32_t value) {
  switch (offset) {
  case KILN_REG_CTRL:
    if (value & KILN_CTRL_SOFT_RESET) {
      softReset();
      stats_.soft_resets++;
    }
    break;
  case KILN_REG_IRQ_STATUS:
    reg(offset) &= ~value; // write 1 to clear
    break;
  case KILN_REG_IRQ_MASK:
  case KILN_REG_DDR_BASE_LO:
  case KILN_REG_DDR_BASE_HI:
  case KILN_REG_DDR_SIZE_LO:
  case KILN_REG_DDR_SIZE_HI:
  case KILN_REG_TIU_QUEUE_LO:
  case KILN_REG_TIU_QUEUE_HI:
  case KILN_REG_TIU_COUNT:
  case KILN_REG_GDMA_QUEUE_LO:
  case KILN_REG_GDMA_QUEUE_HI:
  case KILN_REG_GDMA_COUNT:
    reg(offset) = value;
    break;
  case KILN_REG_DOORBELL:
    if (value & 1u)
      ring();
    break;
  default: // read-only or unmapped
    break;
  }
}

uint64_t Device::reg64(uint32_t lo_offset) const {
  return uint64_t{regs_[lo_offset / 4 + 1]} << 32 | regs_[lo_offset / 4];
}

bool Device::inDdr(uint64_t addr, uint64_t size) const {
  return addr >= kDdrBase && addr - kDdrBase <= ddr_.size() && size <= ddr_.size() - (addr - kDdrBase);
}

kiln_status Device::fault(std::string why) {
  fault_reason_ = std::move(why);
  return KILN_ERR_DEVICE_FAULT;
}

// Copies a queue's records out of DDR; false if the queue is outside DDR.
// The bound is checked before anything is allocated.
template <class Record>
bool Device::fetch(uint64_t addr, uint32_t count, std::vector<Record> *out) {
  uint64_t bytes = uint64_t{count} * sizeof(Record);
  if (!inDdr(addr, bytes))
    return false;
  out->resize(count);
  if (bytes)
    std::memcpy(out->data(), ddrAt(addr), bytes);
  return true;
}

void Device::ring() {
  if (reg(KILN_REG_STATUS) == KILN_STATUS_BUSY)
    return;
  reg(KILN_REG_STATUS) = KILN_STATUS_BUSY;
  reg(KILN_REG_ERROR) = KILN_OK;
  reg(KILN_REG_TIU_DONE_ID) = 0;
  reg(KILN_REG_GDMA_DONE_ID) = 0;
  fault_reason_.clear();
  stats_.submissions++;

  // Injected events count doorbells the device takes, not ignored ones.
  bool hang = hang_in_ == 0, injected = fault_in_ == 0;
  if (hang_in_ >= 0)
    hang_in_--;
  if (fault_in_ >= 0)
    fault_in_--;
  if (hang)
    return; // BUSY until a soft reset
  if (injected) {
    fault_reason_ = "injected fault";
    reg(KILN_REG_STATUS) = KILN_STATUS_FAULT;
    reg(KILN_REG_ERROR) = injected_fault_;
    reg(KILN_REG_IRQ_STATUS) |= kIrqFault;
    return;
  }

  Submission sub{{}, {}, {}};
  kiln_status st = KILN_OK;
  uint64_t base = reg64(KILN_REG_DDR_BASE_LO), size = reg64(KILN_REG_DDR_SIZE_LO);
  if (!inDdr(base, size))
    st = fault("DDR window outside device memory");
  else if (!fetch(reg64(KILN_REG_TIU_QUEUE_LO), reg(KILN_REG_TIU_COUNT), &sub.tiu) ||
           !fetch(reg64(KILN_REG_GDMA_QUEUE_LO), reg(KILN_REG_GDMA_COUNT), &sub.gdma))
    st = fault("command queue outside device memory");
  else {
    sub.window = chip::DdrWindow{ddrAt(base), size};
    st = execute(sub);
  }

  finish(st);
}

void Device::finish(kiln_status st) {
  reg(KILN_REG_STATUS) = st == KILN_OK ? KILN_STATUS_DONE : KILN_STATUS_FAULT;
  reg(KILN_REG_ERROR) = st;
  reg(KILN_REG_IRQ_STATUS) |= st == KILN_OK ? kIrqDone : kIrqFault;
}

void Device::runStreams(const kiln_submit_desc &desc) {
  if (reg(KILN_REG_STATUS) == KILN_STATUS_BUSY)
    return;
  reg(KILN_REG_ERROR) = KILN_OK;
  reg(KILN_REG_TIU_DONE_ID) = 0;
  reg(KILN_REG_GDMA_DONE_ID) = 0;
  fault_reason_.clear();
  stats_.submissions++;
  if (!inDdr(desc.ddr_base, desc.ddr_size) || !inDdr(desc.tiu_queue_addr, desc.tiu_bytes) ||
      !inDdr(desc.gdma_queue_addr, desc.gdma_bytes))
    return finish(fault("streams or DDR window outside device memory"));
  // The streams as fetched: the commands cannot change them while they run.
  std::vector<uint8_t> tiu(ddrAt(desc.tiu_queue_addr), ddrAt(desc.tiu_queue_addr) + desc.tiu_bytes);
  std::vector<uint8_t> gdma(ddrAt(desc.gdma_queue_addr),
                            ddrAt(desc.gdma_queue_addr) + desc.gdma_bytes);
  struct Run {
    Device *dev;
    chip::bm1684x::Memories mem;
  } run{this, {}};
  run.mem.lmem = lmem_.data();
  run.mem.ddr = ddr_.data();
  run.mem.ddrBytes = ddr_.size();
  uint32_t engine, index;
  const char *why = kiln_bm_run_streams(
      tiu.data(), tiu.size(), gdma.data(), gdma.size(), desc.ddr_base, desc.ddr_base + desc.ddr_size,
      [](void *user, uint32_t e, const uint8_t *cmd, uint32_t bytes) -> const char * {
        Run &r = *static_cast<Run *>(user);
        const char *fault = e == KILN_BM_ENGINE_TIU ? chip::bm1684x::runTiu(cmd, bytes, r.mem)
                                                    : chip::bm1684x::runGdma(cmd, bytes, r.mem);
        if (fault)
          return fault;
        if (e == KILN_BM_ENGINE_TIU) {
          r.dev->reg(KILN_REG_TIU_DONE_ID) = kiln_bm_cmd_id(cmd, e);
          r.dev->stats_.tiu_commands++;
        } else {
          r.dev->reg(KILN_REG_GDMA_DONE_ID) = kiln_bm_cmd_id(cmd, e);
          r.dev->stats_.gdma_commands++;
        }
        return nullptr;
      },
      &run, &engine, &index);
  if (why)
    return finish(fault(recordName(engine == KILN_BM_ENGINE_TIU ? KILN_ENGINE_TIU : KILN_ENGINE_GDMA,
                                   index) + ": " + why));
  // The modelled time of what ran (kiln/abi/bm1684x_cost.h).
  chip::bm1684x::StreamTiming timing;
  if (const char *bad = chip::bm1684x::timeStreams(tiu.data(), tiu.size(), gdma.data(), gdma.size(),
                                                   &timing))
    return finish(fault(std::string("streams: ") + bad));
  reg(KILN_REG_CYCLES_LO) = uint32_t(timing.cycles);
  reg(KILN_REG_CYCLES_HI) = uint32_t(timing.cycles >> 32);
  stats_.cycles += timing.cycles;
  stats_.tiu_busy_cycles += timing.tiuBusy;
  stats_.gdma_busy_cycles += timing.gdmaBusy;
  stats_.ddr_read_bytes += timing.ddrReadBytes;
  stats_.ddr_write_bytes += timing.ddrWriteBytes;
  finish(KILN_OK);
}

void Device::injectFault(kiln_status status, uint32_t after) {
  injected_fault_ = status;
  fault_in_ = after;
}

void Device::injectHang(uint32_t after) { hang_in_ = after; }

kiln_status Device::execute(Submission &sub) {
  kiln_queue_timing timing{};
  kiln_queue_arrays arrays{sub.tiu.data(), sub.gdma.data()};
  kiln_queue_source q{&arrays, uint32_t(sub.tiu.size()), uint32_t(sub.gdma.size()),
                      kiln_array_tiu_at, kiln_array_gdma_at};
  // The schedule first (its callback never fails), then the commands it
  // started: all of them, or those before a deadlock.
  std::vector<chip::Scheduled> order;
  kiln_status st = kiln_schedule_source_timed(&q, nullptr, &Device::onStart, &order, &timing);
  uint32_t n_tiu = 0, n_gdma = 0;
  for (const chip::Scheduled &s : order)
    ++(s.engine == KILN_ENGINE_TIU ? n_tiu : n_gdma);
  bool concurrent = n_tiu && n_gdma && chip::cmodelThreads() > 1;
  uint32_t racy_tiu, racy_gdma;
  if ((concurrent || strict_sync_) &&
      chip::findLmemRace(sub.tiu.data(), n_tiu, sub.gdma.data(), n_gdma, &racy_tiu, &racy_gdma)) {
    if (strict_sync_)
      return fault(recordName(KILN_ENGINE_TIU, racy_tiu) + " and " +
                   recordName(KILN_ENGINE_GDMA, racy_gdma) +
                   ": the sync ids let them run together but they touch the same LMEM");
    concurrent = false; // in start order, as the bits must not depend on timing
  }
  chip::ScheduleRun run = chip::runSchedule(sub.tiu.data(), sub.gdma.data(), order, sub.window,
                                            lmem_.data(), concurrent);

  // The faulting command is traced too (it started), the rest as they ran.
  for (size_t k = 0; trace_ && k < order.size() && k <= run.stop; ++k)
    trace_->push_back({stats_.submissions - 1, order[k].engine, order[k].index,
                       stats_.cycles + order[k].start, order[k].cycles});
  for (size_t k = 0; k < run.stop; ++k) {
    const chip::Scheduled &s = order[k];
    if (s.engine == KILN_ENGINE_TIU) {
      reg(KILN_REG_TIU_DONE_ID) = sub.tiu[s.index].cmd_id;
      stats_.tiu_commands++;
    } else {
      reg(KILN_REG_GDMA_DONE_ID) = sub.gdma[s.index].cmd_id;
      stats_.gdma_commands++;
    }
  }
  stats_.ddr_read_bytes += run.traffic.ddr_read_bytes;
  stats_.ddr_write_bytes += run.traffic.ddr_write_bytes;
  if (run.why)
    return fault(recordName(order[run.stop].engine, order[run.stop].index) + ": " + run.why);
  if (st == KILN_ERR_BAD_SYNC)
    fault_reason_ = "sync ids can never be satisfied";
  if (st != KILN_OK)
    return st;
  reg(KILN_REG_CYCLES_LO) = uint32_t(timing.total_cycles);
  reg(KILN_REG_CYCLES_HI) = uint32_t(timing.total_cycles >> 32);
  stats_.cycles += timing.total_cycles;
  stats_.tiu_busy_cycles += timing.tiu_busy;
  stats_.gdma_busy_cycles += timing.gdma_busy;
  return KILN_OK;
}

kiln_status Device::onStart(void *user, kiln_engine engine, uint32_t index, uint64_t start,
                            uint64_t cycles) {
  static_cast<std::vector<chip::Scheduled> *>(user)->push_back({engine, index, start, cycles});
  return KILN_OK;
}

// ---- HAL -----------------------------------------------------------------------

namespace {

Device &deviceOf(void *ctx) { return *static_cast<Device *>(ctx); }

// Host access to device DDR: nullptr unless [addr, addr + size) is inside.
uint8_t *ddrSpan(void *ctx, uint64_t addr, uint64_t size) {
  std::vector<uint8_t> &ddr = deviceOf(ctx).ddr();
  if (addr < Device::kDdrBase || addr - Device::kDdrBase > ddr.size() ||
      size > ddr.size() - (addr - Device::kDdrBase))
    return nullptr;
  return ddr.data() + (addr - Device::kDdrBase);
}

kiln_status halWriteMem(void *ctx, uint64_t addr, const void *src, uint64_t size) {
  uint8_t *dst = ddrSpan(ctx, addr, size);
  if (!dst || (size && !src))
    return KILN_ERR_INVALID_ARGUMENT;
  if (size)
    std::memcpy(dst, src, size);
  return KILN_OK;
}

kiln_status halReadMem(void *ctx, uint64_t addr, void *dst, uint64_t size) {
  const uint8_t *src = ddrSpan(ctx, addr, size);
  if (!src || (size && !dst))
    return KILN_ERR_INVALID_ARGUMENT;
  if (size)
    std::memcpy(dst, src, size);
  return KILN_OK;
}

void writeReg64(Device &dev, uint32_t lo_offset, uint64_t value) {
  dev.write_reg(lo_offset, uint32_t(value));
  dev.write_reg(lo_offset + 4, uint32_t(value >> 32));
}

kiln_status halSubmit(void *ctx, const kiln_submit_desc *desc) {
  Device &dev = deviceOf(ctx);
  if (!desc)
    return KILN_ERR_INVALID_ARGUMENT;
  if (dev.read_reg(KILN_REG_STATUS) == KILN_STATUS_BUSY)
    return KILN_ERR_BAD_STATE;
  if (desc->isa != dev.isa())
    return KILN_ERR_UNSUPPORTED;
  if (desc->isa == KILN_ISA_BM1684X) {
    dev.runStreams(*desc);
    return KILN_OK;
  }
  writeReg64(dev, KILN_REG_DDR_BASE_LO, desc->ddr_base);
  writeReg64(dev, KILN_REG_DDR_SIZE_LO, desc->ddr_size);
  writeReg64(dev, KILN_REG_TIU_QUEUE_LO, desc->tiu_queue_addr);
  writeReg64(dev, KILN_REG_GDMA_QUEUE_LO, desc->gdma_queue_addr);
  dev.write_reg(KILN_REG_TIU_COUNT, desc->tiu_count);
  dev.write_reg(KILN_REG_GDMA_COUNT, desc->gdma_count);
  dev.write_reg(KILN_REG_DOORBELL, 1u);
  return KILN_OK;
}

// Submissions run synchronously, so a submission is never still running.
kiln_status halWait(void *ctx, uint32_t timeout_us) {
  Device &dev = deviceOf(ctx);
  switch (dev.read_reg(KILN_REG_STATUS)) {
  case KILN_STATUS_DONE:
    dev.write_reg(KILN_REG_IRQ_STATUS, kIrqDone);
    return KILN_OK;
  case KILN_STATUS_FAULT:
    dev.write_reg(KILN_REG_IRQ_STATUS, kIrqFault);
    return static_cast<kiln_status>(dev.read_reg(KILN_REG_ERROR));
  case KILN_STATUS_BUSY:
    return KILN_ERR_TIMEOUT;
  default:
    return KILN_ERR_BAD_STATE; // nothing was submitted
  }
}

kiln_status halReset(void *ctx) {
  deviceOf(ctx).write_reg(KILN_REG_CTRL, KILN_CTRL_SOFT_RESET);
  return KILN_OK;
}

uint32_t boardReadReg(void *ctx, uint32_t offset) { return deviceOf(ctx).read_reg(offset); }
void boardWriteReg(void *ctx, uint32_t offset, uint32_t value) {
  deviceOf(ctx).write_reg(offset, value);
}
uint64_t steadyMicros(void *) {
  return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

} // namespace

kiln_board_io Device::boardIo() {
  kiln_board_io io{};
  io.reg_ctx = this;
  io.read_reg = boardReadReg;
  io.write_reg = boardWriteReg;
  io.now_us = steadyMicros;
  io.mem_base = kDdrBase;
  io.mem_size = ddr_.size();
  io.mem = ddr_.data();
  return io;
}

kiln_hal Device::hal() {
  kiln_hal h{};
  h.ctx = this;
  h.mem_base = kDdrBase;
  h.mem_size = ddr_.size();
  h.write_mem = halWriteMem;
  h.read_mem = halReadMem;
  h.submit = halSubmit;
  h.wait = halWait;
  h.reset = halReset;
  h.isa = isa_;
  return h;
}

} // namespace kiln::cmodel
