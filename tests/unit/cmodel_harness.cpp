#include "cmodel_harness.h"

#include <cstring>
#include <random>

#include "kiln/abi/chip.h"

namespace kiln::test {

void denseStrides(const Shape &s, uint32_t out[4]) {
  out[3] = 1;
  out[2] = s.w;
  out[1] = s.h * s.w;
  out[0] = s.c * s.h * s.w;
}

uint64_t lmemElementAddr(uint32_t addr, const Shape &s, uint32_t n, uint32_t c, uint32_t h,
                         uint32_t w) {
  uint64_t planes_per_n = (s.c + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
  uint64_t plane = kiln_lmem_plane_stride(s.h, s.w, 4);
  return addr + (n * planes_per_n + c / KILN_NPU_NUM) * plane + (uint64_t{h} * s.w + w) * 4;
}

template <class F>
static void forEachIndex(const Shape &s, F f) {
  size_t i = 0;
  for (uint32_t n = 0; n < s.n; ++n)
    for (uint32_t c = 0; c < s.c; ++c)
      for (uint32_t h = 0; h < s.h; ++h)
        for (uint32_t w = 0; w < s.w; ++w)
          f(i++, n, c, h, w);
}

void putLmem(cmodel::Device &dev, uint32_t addr, const Shape &s, const std::vector<float> &data) {
  forEachIndex(s, [&](size_t i, uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    std::memcpy(dev.lmem(c % KILN_NPU_NUM) + lmemElementAddr(addr, s, n, c, h, w), &data[i], 4);
  });
}

std::vector<float> getLmem(cmodel::Device &dev, uint32_t addr, const Shape &s) {
  std::vector<float> data(s.count());
  forEachIndex(s, [&](size_t i, uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    std::memcpy(&data[i], dev.lmem(c % KILN_NPU_NUM) + lmemElementAddr(addr, s, n, c, h, w), 4);
  });
  return data;
}

void putDdr(cmodel::Device &dev, uint64_t offset, const std::vector<float> &data) {
  std::memcpy(dev.ddr().data() + offset, data.data(), data.size() * 4);
}

std::vector<float> getDdr(cmodel::Device &dev, uint64_t offset, size_t count) {
  std::vector<float> data(count);
  std::memcpy(data.data(), dev.ddr().data() + offset, count * 4);
  return data;
}

kiln_tiu_operand lmemOperand(uint32_t addr, const Shape &s, uint8_t dtype) {
  kiln_tiu_operand o{};
  o.addr = addr;
  o.n = uint16_t(s.n);
  o.c = uint16_t(s.c);
  o.h = uint16_t(s.h);
  o.w = uint16_t(s.w);
  o.dtype = dtype;
  o.flags = KILN_OPND_USED;
  return o;
}

kiln_tiu_operand constOperand(float value) {
  kiln_tiu_operand o{};
  std::memcpy(&o.addr, &value, 4);
  o.n = o.c = o.h = o.w = 1;
  o.dtype = KILN_DTYPE_F32;
  o.flags = KILN_OPND_USED | KILN_OPND_CONST;
  return o;
}

kiln_tiu_cmd tiuCmd(uint32_t id, uint32_t wait_gdma, kiln_tiu_op op, uint16_t subop) {
  kiln_tiu_cmd cmd{};
  cmd.cmd_id = id;
  cmd.wait_gdma_id = wait_gdma;
  cmd.op = uint16_t(op);
  cmd.subop = subop;
  return cmd;
}

kiln_gdma_cmd gdmaCmd(uint32_t id, uint32_t wait_tiu, kiln_gdma_dir dir, const Shape &s,
                      uint64_t src, uint64_t dst) {
  kiln_gdma_cmd cmd{};
  cmd.cmd_id = id;
  cmd.wait_tiu_id = wait_tiu;
  cmd.dir = uint8_t(dir);
  cmd.dtype = KILN_DTYPE_F32;
  cmd.n = s.n;
  cmd.c = s.c;
  cmd.h = s.h;
  cmd.w = s.w;
  cmd.src_addr = src;
  cmd.dst_addr = dst;
  denseStrides(s, cmd.src_stride);
  denseStrides(s, cmd.dst_stride);
  return cmd;
}

kiln_status runQueues(cmodel::Device &dev, const std::vector<kiln_tiu_cmd> &tiu,
                      const std::vector<kiln_gdma_cmd> &gdma, uint64_t window_size) {
  kiln_hal hal = dev.hal();
  uint64_t tiu_bytes = tiu.size() * sizeof(kiln_tiu_cmd);
  uint64_t gdma_offset = (tiu_bytes + 63) / 64 * 64;
  kiln_submit_desc desc{};
  desc.ddr_base = hal.mem_base + kWindowOffset;
  desc.ddr_size = window_size;
  desc.tiu_queue_addr = hal.mem_base;
  desc.gdma_queue_addr = hal.mem_base + gdma_offset;
  desc.tiu_count = uint32_t(tiu.size());
  desc.gdma_count = uint32_t(gdma.size());
  kiln_status st;
  if ((st = hal.write_mem(hal.ctx, desc.tiu_queue_addr, tiu.data(), tiu_bytes)) != KILN_OK ||
      (st = hal.write_mem(hal.ctx, desc.gdma_queue_addr, gdma.data(),
                          gdma.size() * sizeof(kiln_gdma_cmd))) != KILN_OK ||
      (st = hal.submit(hal.ctx, &desc)) != KILN_OK)
    return st;
  return hal.wait(hal.ctx, 1000000);
}

std::vector<float> randomFloats(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> data(count);
  for (float &v : data)
    v = dist(rng);
  return data;
}

kiln_hal FlakyHal::hal() {
  kiln_hal h = inner;
  h.ctx = this;
  h.write_mem = [](void *c, uint64_t a, const void *s, uint64_t n) {
    auto *f = static_cast<FlakyHal *>(c);
    return f->inner.write_mem(f->inner.ctx, a, s, n);
  };
  h.read_mem = [](void *c, uint64_t a, void *d, uint64_t n) {
    auto *f = static_cast<FlakyHal *>(c);
    return f->inner.read_mem(f->inner.ctx, a, d, n);
  };
  h.submit = [](void *c, const kiln_submit_desc *d) {
    auto *f = static_cast<FlakyHal *>(c);
    return f->inner.submit(f->inner.ctx, d);
  };
  h.wait = [](void *c, uint32_t t) {
    auto *f = static_cast<FlakyHal *>(c);
    kiln_status st = f->inner.wait(f->inner.ctx, t);
    if (!f->fail_next_wait)
      return st;
    if (f->skip_waits) {
      f->skip_waits--;
      return st;
    }
    f->fail_next_wait = false;
    return KILN_ERR_TIMEOUT;
  };
  h.reset = [](void *c) {
    auto *f = static_cast<FlakyHal *>(c);
    f->resets++;
    return f->inner.reset(f->inner.ctx);
  };
  return h;
}

} // namespace kiln::test
