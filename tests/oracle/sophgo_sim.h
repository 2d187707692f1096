// The oracle: Sophgo's BM1684X chip simulator (libcmodel_bm1684x.so from the
// tpu-mlir wheel, fetched by `tools/dev oracle`), loaded with dlopen as a
// reference the way ONNX Runtime is one. Test code only: nothing of kiln's
// compiler, runtime or firmware links it.
//
// The simulator keeps one chip per process (node 0); SophgoSim::get() opens
// and initialises it once. Memory is the simulator's own: DDR at
// KILN_BM_DDR_BASE, LMEM lane-major (lane i at lmem() + i * 256 KiB), static
// memory with the SFU tables at offset 0.
#ifndef KILN_TESTS_ORACLE_SOPHGO_SIM_H
#define KILN_TESTS_ORACLE_SOPHGO_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <string>

namespace kiln::oracle {

class SophgoSim {
public:
  enum Engine : unsigned { Tiu = 0, Gdma = 1 };

  // The simulator, or nullptr with the reason in *why: KILN_SOPHGO_SIM (the
  // library's path, set by tools/dev) unset, the file absent, or it fails to
  // load. Tests skip with that reason.
  static SophgoSim *get(std::string *why);

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

} // namespace kiln::oracle

#endif
