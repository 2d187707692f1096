// Where the smoke tests run: the register-level board driver (kiln_board.h)
// on the cmodel's register file, or, with KILN_SMOKE_BOARD=<file>, the same
// driver on a board's MMIO. The tests see only the HAL the driver returns.
#ifndef KILN_TESTS_SMOKE_BOARD_TARGET_H
#define KILN_TESTS_SMOKE_BOARD_TARGET_H

#include <stdint.h>

#include <memory>
#include <string>

#include "kiln/rt/kiln_board.h"
#include "kiln/rt/kiln_rt.h"

namespace kiln::cmodel {
class Device;
}

namespace kiln::smoke {

class Target {
public:
  virtual ~Target() = default;
  // The board driver's HAL.
  const kiln_hal &hal() const { return hal_; }
  // The cmodel behind the driver, for fault and hang injection; nullptr on a board.
  virtual cmodel::Device *device() { return nullptr; }
  virtual std::string describe() const = 0;

protected:
  kiln_board board_{};
  kiln_hal hal_{};
};

// The target the environment selects: a board if KILN_SMOKE_BOARD names a
// board file, else a cmodel with ddr_bytes of DDR. nullptr and *error on failure.
std::unique_ptr<Target> makeTarget(uint64_t ddr_bytes, std::string *error);

// A board file has `key = value` lines (# starts a comment); numbers in C syntax:
//   device     = /dev/mem     file to map (/dev/mem or a UIO node)
//   regs       = 0x...        offset of the register block in the device file
//   ddr        = 0x...        offset of the NPU's DDR window in the device file
//   ddr_size   = 0x...        bytes of that window the runtime may use
//   ddr_device = 0x...        the window's address as the NPU sees it (default: ddr)
// Both are mapped with O_SYNC (uncached), so the driver needs no cache hooks.
std::unique_ptr<Target> makeBoardTarget(const std::string &path, std::string *error);
std::unique_ptr<Target> makeCmodelTarget(uint64_t ddr_bytes, std::string *error);

} // namespace kiln::smoke

#endif
