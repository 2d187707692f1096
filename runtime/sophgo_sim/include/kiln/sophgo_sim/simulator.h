// Sophgo's BM1684X chip simulator (libcmodel_bm1684x.so from the tpu-mlir
// wheel, fetched by `tools/dev oracle`), loaded with dlopen at run time as a
// reference the way ONNX Runtime is one: the oracle tests and `kiln run
// --device sophgo-sim` use it. Nothing links it, and nothing of kiln's
// compiler, runtime core or firmware uses this library.
//
// The simulator keeps one chip per process (node 0); SophgoSim::get() opens
// and initialises it once. Memory is the simulator's own: DDR at
// KILN_BM_DDR_BASE, LMEM lane-major (lane i at lmem() + i * 256 KiB), static
// memory with the SFU tables at offset 0.
#ifndef KILN_SOPHGO_SIM_SIMULATOR_H
#define KILN_SOPHGO_SIM_SIMULATOR_H

#include <stddef.h>
#include <stdint.h>

#include <string>

namespace kiln::sophgo_sim {

class SophgoSim {
public:
  enum Engine : unsigned { Tiu = 0, Gdma = 1 };

  // The simulator with at least ddrBytes of DDR (the first call sets the
  // size), or nullptr with the reason in *why: no library at the path
  // KILN_SOPHGO_SIM names (default: where this build's tools/dev oracle put
  // it), it fails to load, or it was opened with less DDR. Tests skip with
  // that reason.
  static constexpr uint64_t kDefaultDdrBytes = 256ull << 20;
  static SophgoSim *get(std::string *why, uint64_t ddrBytes = kDefaultDdrBytes);

  // Chip facts as the simulator reports them; dtype is the TPU-kernel
  // data_type_t code (prec << 1 | sign).
  int npuNum() const;
  int bankNum() const;
  int lmemBytesPerNpu() const;
  int euNum(int dtype) const;
  int icParallel(int dtype) const;

  uint8_t *ddr() const { return ddr_; }
  uint64_t ddrBytes() const { return ddrBytes_; }
  uint8_t *lmem() const { return lmem_; }
  uint64_t lmemBytes() const;
  uint8_t *smem() const { return smem_; }

  // Runs one command on one engine, synchronously.
  void execute(const uint8_t *cmd, Engine engine) const;

private:
  SophgoSim() = default;
  void *lib_ = nullptr;
  uint8_t *ddr_ = nullptr, *lmem_ = nullptr, *smem_ = nullptr;
  uint64_t ddrBytes_ = 0;
};

} // namespace kiln::sophgo_sim

#endif
