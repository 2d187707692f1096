// Sophgo's simulator behind kiln's HAL: a device that runs a net's BM1684X
// command streams (kiln_isa BM1684X) on the chip maker's own model, so that
// `kiln run --device sophgo-sim` runs a bmodel compiled with `isa: bm1684x`
// through kiln's runtime core exactly as on kiln's cmodel. Hosted, for the
// CLI and tests; the simulator itself is dlopened (simulator.h).
//
// A submission runs at once, one command at a time in an order its sync ids
// allow (bm1684x_stream.h). Each GDMA copy is checked against the
// submission's DDR window before the simulator sees it: the simulator has no
// notion of a net and would write wherever a command points.
#ifndef KILN_SOPHGO_SIM_DEVICE_H
#define KILN_SOPHGO_SIM_DEVICE_H

#include <stdint.h>

#include <memory>
#include <string>

#include "kiln/rt/kiln_rt.h"
#include "kiln/sophgo_sim/simulator.h"

namespace kiln::sophgo_sim {

class Device {
public:
  // The device over a simulator with at least ddrBytes of DDR, or nullptr
  // with the reason in *why (simulator.h).
  static std::unique_ptr<Device> open(uint64_t ddrBytes, std::string *why);

  // The HAL points at the device: it stays put.
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  kiln_hal hal();
  uint64_t ddrBytes() const { return sim_->ddrBytes(); }
  // Why the last submission failed; empty if it did not.
  const std::string &faultReason() const { return fault_; }
  uint64_t tiuCommands() const { return tiuCommands_; }
  uint64_t gdmaCommands() const { return gdmaCommands_; }

  // Runs one submission (the HAL's submit).
  kiln_status run(const kiln_submit_desc &desc);
  kiln_status lastStatus() const { return last_; }

private:
  explicit Device(SophgoSim *sim) : sim_(sim) {}
  SophgoSim *sim_;
  std::string fault_;
  kiln_status last_ = KILN_ERR_BAD_STATE; // nothing submitted yet
  uint64_t tiuCommands_ = 0, gdmaCommands_ = 0;
};

} // namespace kiln::sophgo_sim

#endif
