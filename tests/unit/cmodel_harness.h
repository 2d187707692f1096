// Test helpers around the cmodel: dense NCHW tensors in and out of LMEM (with
// the layout computed here from chip.h, independently of the cmodel), record
// builders, and running queues through the device's HAL.
#ifndef KILN_TESTS_CMODEL_HARNESS_H
#define KILN_TESTS_CMODEL_HARNESS_H

#include <stdint.h>

#include <vector>

#include "kiln/abi/commands.h"
#include "kiln/cmodel/device.h"

namespace kiln::test {

struct Shape {
  uint32_t n, c, h, w;
  size_t count() const { return size_t{n} * c * h * w; }
};

// Dense element strides of an NCHW tensor.
void denseStrides(const Shape &s, uint32_t out[4]);

// Per-lane byte offset of element (n, c, h, w) on lane c % 64 (chip.h).
uint64_t lmemElementAddr(uint32_t addr, const Shape &s, uint32_t n, uint32_t c, uint32_t h,
                         uint32_t w);
void putLmem(cmodel::Device &dev, uint32_t addr, const Shape &s, const std::vector<float> &data);
std::vector<float> getLmem(cmodel::Device &dev, uint32_t addr, const Shape &s);

// Floats at byte offset `offset` of device DDR.
void putDdr(cmodel::Device &dev, uint64_t offset, const std::vector<float> &data);
std::vector<float> getDdr(cmodel::Device &dev, uint64_t offset, size_t count);

kiln_tiu_operand lmemOperand(uint32_t addr, const Shape &s, uint8_t dtype = KILN_DTYPE_F32);
kiln_tiu_operand constOperand(float value);
kiln_tiu_cmd tiuCmd(uint32_t id, uint32_t wait_gdma, kiln_tiu_op op, uint16_t subop = 0);
// A dense copy of shape s (strides of s on both DDR sides).
kiln_gdma_cmd gdmaCmd(uint32_t id, uint32_t wait_tiu, kiln_gdma_dir dir, const Shape &s,
                      uint64_t src, uint64_t dst);

// Device DDR the harness uses: queues at offset 0, the net window after them.
constexpr uint64_t kWindowOffset = 1u << 20;
constexpr uint64_t kDeviceDdrBytes = 8u << 20;

// Writes the queues to DDR, submits them with the window
// [kWindowOffset, kWindowOffset + window_size) and returns the wait status.
kiln_status runQueues(cmodel::Device &dev, const std::vector<kiln_tiu_cmd> &tiu,
                      const std::vector<kiln_gdma_cmd> &gdma,
                      uint64_t window_size = kDeviceDdrBytes - kWindowOffset);

// The device's HAL, with a switch that makes a wait time out (after the
// device ran): with fail_next_wait, the wait after skip_waits more
// successful ones fails. Counts the resets.
struct FlakyHal {
  kiln_hal inner;
  bool fail_next_wait = false;
  uint32_t skip_waits = 0;
  int resets = 0;

  kiln_hal hal();
};

// Deterministic pseudo-random floats in [-1, 1).
std::vector<float> randomFloats(size_t count, uint32_t seed);

} // namespace kiln::test

#endif
