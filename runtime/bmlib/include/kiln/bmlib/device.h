// A HAL over Sophgo's bmlib: the launch path of a BM1684X board. On a board
// (SoC or PCIe host, libsophon installed) the chip's firmware runs command
// streams when the host launches its full-net function, `sg_api_multi_fullnet`,
// through bmlib's tpu_kernel_launch (libsophon's bmdnn_func_1684x.cpp builds
// the same argument; FACTS.md section 3). This HAL does that for each layer
// group kiln's runtime submits: the runtime has placed the net and its
// streams in the device memory this HAL allocated, relocated them there and
// verified them; the firmware runs them. bmlib is dlopened (libbmlib.so.0):
// kiln links nothing of Sophgo's.
//
// Testable here: the tpu-mlir wheel's bmlib is its simulator build, whose
// tpu_kernel_launch calls the firmware inside Sophgo's simulator library
// (TPUKERNEL_FIRMWARE_PATH names it), so `kiln run --device bmlib` runs kiln's
// runtime on Sophgo's firmware and chip model. Not testable here: a real
// board's kernel module (Device::open's kernelModule; libsophon ships it),
// the PCIe/SoC memory paths behind bm_memcpy_*, and timing.
#ifndef KILN_BMLIB_DEVICE_H
#define KILN_BMLIB_DEVICE_H

#include <stdint.h>

#include <memory>
#include <string>

#include "kiln/rt/kiln_rt.h"

namespace kiln::bmlib {

class Device {
public:
  // Opens device `devid` and allocates ddrBytes of its memory for the
  // runtime. kernelModule: the firmware's kernel module file to load (a
  // board's libbm1684x_kernel_module.so); empty: the firmware's own
  // functions (the simulator's). nullptr with the reason in *why.
  static std::unique_ptr<Device> open(uint64_t ddrBytes, const std::string &kernelModule,
                                      std::string *why, int devid = 0);
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  kiln_hal hal(); // points at this device: it stays put
  const std::string &faultReason() const { return fault_; }
  uint64_t launches() const { return launches_; }
  // Commands launched, end commands included.
  uint64_t tiuCommands() const { return tiuCommands_; }
  uint64_t gdmaCommands() const { return gdmaCommands_; }

  kiln_status run(const kiln_submit_desc &desc); // the HAL's submit
  kiln_status lastStatus() const { return last_; }

  struct Api;

private:
  Device() = default;
  const Api *api_ = nullptr;
  void *handle_ = nullptr;      // bm_handle_t
  unsigned char window_[24] = {}; // bm_device_mem_t of the runtime's memory
  uint64_t base_ = 0, size_ = 0;
  int function_ = -1;           // tpu_kernel_function_t of sg_api_multi_fullnet
  std::string fault_;
  kiln_status last_ = KILN_ERR_BAD_STATE;
  uint64_t launches_ = 0, tiuCommands_ = 0, gdmaCommands_ = 0;
};

} // namespace kiln::bmlib

#endif
