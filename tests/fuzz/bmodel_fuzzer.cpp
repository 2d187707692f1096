// libFuzzer harness over the runtime's whole load path: header, checksum,
// FlatBuffer and record verification, residency plan, device memory plan and
// upload, then (if the file loads) inputs, two runs of each net on the
// cmodel (the second one warm) and the outputs. Built with
// -fsanitize=fuzzer,address,undefined by the sanitizer build; the same file
// with replay_main.cpp replays a corpus anywhere else.
//
// The harness rewrites the header checksum before loading: without that
// nearly every mutation would stop at KILN_ERR_BAD_CHECKSUM. The checksum
// check itself is covered by the byte-flip and unit tests.
#include <stddef.h>
#include <stdint.h>

#include "kiln/abi/bmodel.h"
#include "run_harness.h"

namespace {

// Small DDR keeps each run cheap; a bmodel that needs more is refused with
// KILN_ERR_NO_DEVICE_MEMORY after it has been verified.
constexpr uint64_t kDeviceDdrBytes = 1u << 20;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Sophgo's container carries BM1684X's streams: a device that runs them.
  static kiln::fuzz::Harness records(kDeviceDdrBytes), streams(kDeviceDdrBytes, KILN_ISA_BM1684X);
  static kiln::fuzz::AlignedFile file;
  file.assign(data, size);
  kiln::fuzz::fixChecksum(file.data(), file.size());
  kiln::fuzz::RunOptions options;
  options.inferences = 2;
  options.second_net = true;
  (kiln_is_sophgo(file.data(), file.size()) ? streams : records)
      .run(file.data(), file.size(), options);
  return 0;
}
