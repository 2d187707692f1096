// kiln chip: the TIU's arithmetic on its own, without the device.
//
// The device runs every TIU record through runTiuRecord on its LMEM; the
// compiler's Tpu interpreter runs the same records on an LMEM of its own whose
// lanes are big enough for a whole unsliced op, so both compute bit for bit
// alike (docs/precision.md). Needs only the ABI headers and the C++ standard
// library.
#ifndef KILN_CHIP_TIU_KERNELS_H
#define KILN_CHIP_TIU_KERNELS_H

#include <stdint.h>

#include <vector>

#include "kiln/abi/commands.h"

namespace kiln::chip {

// Runs one TIU record on an LMEM of KILN_NPU_NUM lanes of lane_bytes bytes
// each, lane-major (lane i at lmem + i * lane_bytes). Every operand must lie
// within a lane of lane_bytes (the record checks of kiln/abi/cmd_check.h,
// with that lane size). Returns nullptr, or why the record faults (then
// nothing has been written).
//
// Kernels::Fast (conv and deconv on dense copies, row-vectorized, split over
// KILN_CMODEL_THREADS) computes the reference kernels' bits: for every output
// the same products in the same order, multiply and add rounded separately
// (tiu.cpp, "fast conv and deconv"). Kernels::Reference is the plain loop
// nest, kept to test the fast one against.
enum class Kernels { Fast, Reference };
const char *runTiuRecord(const kiln_tiu_cmd &cmd, uint8_t *lmem, uint64_t lane_bytes,
                         Kernels kernels = Kernels::Fast);

// Where one output index of a resize reads along an axis (commands.h,
// RESIZE): nearest reads i0; linear blends i0 and i1 with weight l on i1.
struct ResizeTap {
  uint32_t i0, i1;
  float l;
};
// The taps of `out_len` outputs along an axis, from global index out_first
// of a full length out_full, relative to the input, which starts at global
// index in_first and holds in_len; false if a tap falls outside that input
// (a slice loaded too few rows). The kernels and the BM1684X lowering both
// read their sources from here.
bool resizeAxisTaps(uint32_t subop, float scale, bool exact, uint32_t in_full, uint32_t out_full,
                    uint32_t in_first, uint32_t in_len, uint32_t out_first, uint32_t out_len,
                    std::vector<ResizeTap> *taps);

// Threads a large record is split over: KILN_CMODEL_THREADS (1 to 256),
// default the machine's cores. Each output is computed by one thread in the
// order above, so the bits never depend on it. With more than one, the
// device also runs its TIU and GDMA queues concurrently (device.h).
// setCmodelThreads overrides it from then on (tests run 1 and N threads).
unsigned cmodelThreads();
void setCmodelThreads(unsigned threads);

// kiln_f32_to_f16 of count values into dst (little-endian f16 bits): with the
// host's F16C instructions where it has them, whose round-to-nearest-even
// conversion gives kiln_f32_to_f16's bits for every f32 (every bit pattern
// was compared once; cmodel_fast_kernels_test samples them), else in software.
void f32ToF16Row(const float *src, uint32_t count, uint8_t *dst);

} // namespace kiln::chip

#endif
