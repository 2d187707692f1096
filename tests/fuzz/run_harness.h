// Runs a bmodel the way `kiln run` does, in-process: the runtime core on a
// cmodel device, load, set every input, run, read every output. Shared by the
// libFuzzer harness, the byte-flip test, the soak test and the replay tool.
//
// The device sits behind a watchdog HAL: a submission whose modelled cycles
// exceed the wait's timeout (at the chip's 1 GHz) never runs and its wait
// times out, as it would on a board. A mutated but valid record can ask for a
// lot of work; this keeps every run as short as its timeout says. (BM1684X
// streams have no cost model yet: the watchdog bounds their convs' and
// windows' multiply-accumulates instead.)
#ifndef KILN_TESTS_FUZZ_RUN_HARNESS_H
#define KILN_TESTS_FUZZ_RUN_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "kiln/cmodel/device.h"
#include "kiln/rt/kiln_rt.h"

namespace kiln::fuzz {

struct RunOptions {
  uint32_t inferences = 1;  // runs of each loaded net (the second one is warm)
  bool second_net = false;  // also load net 1 of the file and alternate runs
  uint32_t timeout_us = 200; // per submission: the watchdog's budget
  uint32_t input_seed = 1;  // inputs are a pattern derived from it
};

struct Outcome {
  kiln_status load = KILN_ERR_BAD_STATE; // of net 0
  kiln_status load_second = KILN_ERR_BAD_STATE;
  std::vector<kiln_status> runs;         // in order, for every run attempted
  uint64_t loads_avoided = 0;            // summed over the runs
  std::vector<uint8_t> outputs;          // net 0's outputs after its last runs, stage by stage
};

class Harness {
public:
  // isa: what the device runs, kiln's records or BM1684X's own streams.
  explicit Harness(uint64_t ddr_bytes, kiln_isa isa = KILN_ISA_KILN);
  Harness(const Harness &) = delete;
  Harness &operator=(const Harness &) = delete;

  // file must be 8-byte aligned and stay alive during the call.
  Outcome run(const uint8_t *file, size_t size, const RunOptions &options);

  cmodel::Device &device() { return device_; }
  uint64_t watchdogTimeouts() const { return timeouts_; }

private:
  static kiln_status submit(void *ctx, const kiln_submit_desc *desc);
  static kiln_status wait(void *ctx, uint32_t timeout_us);
  static kiln_status reset(void *ctx);
  void fillInputs(kiln_net *net, uint32_t seed);
  void readOutputs(const kiln_net *net, std::vector<uint8_t> &outputs);

  cmodel::Device device_;
  kiln_hal inner_;
  kiln_hal hal_;
  kiln_submit_desc desc_{}; // the submission held until its wait
  bool pending_ = false;
  uint64_t timeouts_ = 0;
  std::vector<uint8_t> scratch_;
};

// An 8-byte aligned copy of a file.
class AlignedFile {
public:
  AlignedFile() = default;
  AlignedFile(const uint8_t *data, size_t size) { assign(data, size); }
  void assign(const uint8_t *data, size_t size);
  uint8_t *data() { return reinterpret_cast<uint8_t *>(words_.data()); }
  size_t size() const { return size_; }

private:
  std::vector<uint64_t> words_;
  size_t size_ = 0;
};

// Rewrites the header's checksum so that edits behind the header reach the
// verifier; false (and nothing written) if the header does not describe a
// covered range inside the file.
bool fixChecksum(uint8_t *file, size_t size);

// Every regular file named, or inside a named directory, ending in .bmodel;
// sorted. Missing paths are skipped.
std::vector<std::string> bmodelFiles(const std::vector<std::string> &paths);
std::vector<uint8_t> readFile(const std::string &path);

} // namespace kiln::fuzz

#endif
