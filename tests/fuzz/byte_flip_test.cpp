// Exhaustive single-byte corruption of real bmodels, through the path of
// `kiln run` (runtime load, inputs, runs on the cmodel, outputs), in-process:
//   bmodel_byte_flips PATH...   (.bmodel files, or directories of them)
// For every byte of the header and the FlatBuffer region (everything before
// the blob) and both mutations, byte ^ 0xff and byte + 1:
//   - as is: a byte under the checksum must be refused with
//     KILN_ERR_BAD_CHECKSUM; a header byte must be refused, or the file
//     must load and give bitwise the original outputs (a header edit that
//     changes nothing, e.g. a FlatBuffer size still inside the padding);
//   - with the checksum rewritten: the verifier sees the edit; any status
//     is fine, as long as it is one of kiln_status and nothing crashes (the
//     sanitizer build runs this too).
// Without compiled models it uses the builder-made ones of residency_models.h.
#include <stdio.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kiln/abi/bmodel.h"
#include "residency_models.h"
#include "run_harness.h"

using namespace kiln::fuzz;

namespace {

int failures = 0;

#define CHECK(cond, ...)                                                                  \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      if (++failures <= 20) {                                                             \
        fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                   \
        fprintf(stderr, __VA_ARGS__);                                                     \
        fputc('\n', stderr);                                                              \
      }                                                                                   \
    }                                                                                     \
  } while (0)

bool knownStatus(kiln_status st) {
  return std::string(kiln_status_str(st)) != "unknown status";
}

bool allOk(const Outcome &o) {
  if (o.load != KILN_OK)
    return false;
  for (kiln_status st : o.runs)
    if (st != KILN_OK)
      return false;
  return true;
}

struct Tally {
  uint64_t variants = 0, loaded = 0, ran = 0;
  std::map<kiln_status, uint64_t> statuses; // checksum rewritten: load status
};

void flipAll(Harness &harness, const std::string &name, const std::vector<uint8_t> &bytes,
             Tally *tally) {
  RunOptions options;
  options.inferences = 2; // the second run takes the residency manager's warm path
  AlignedFile good(bytes.data(), bytes.size());
  const Outcome base = harness.run(good.data(), good.size(), options);
  CHECK(allOk(base), "%s: the unmodified file does not run (load %s)", name.c_str(),
        kiln_status_str(base.load));
  if (!allOk(base))
    return;

  kiln_bmodel_header h;
  std::memcpy(&h, bytes.data(), sizeof h);
  const size_t region = h.blob_offset; // header, FlatBuffer and the padding after it
  const int before = failures;
  AlignedFile f;
  for (size_t at = 0; at < region; ++at)
    for (int mutation = 0; mutation < 2; ++mutation) {
      f.assign(bytes.data(), bytes.size());
      f.data()[at] = mutation ? uint8_t(f.data()[at] + 1) : uint8_t(f.data()[at] ^ 0xff);
      tally->variants++;

      const Outcome raw = harness.run(f.data(), f.size(), options);
      CHECK(knownStatus(raw.load), "%s: byte %zu: status 0x%x", name.c_str(), at, raw.load);
      if (at >= h.header_size) {
        CHECK(raw.load == KILN_ERR_BAD_CHECKSUM, "%s: byte %zu mutation %d: load %s",
              name.c_str(), at, mutation, kiln_status_str(raw.load));
      } else if (raw.load == KILN_OK) {
        CHECK(allOk(raw) && raw.outputs == base.outputs,
              "%s: header byte %zu mutation %d loads but runs differently", name.c_str(), at,
              mutation);
      }

      if (!fixChecksum(f.data(), f.size()))
        continue;
      const Outcome fixed = harness.run(f.data(), f.size(), options);
      tally->statuses[fixed.load]++;
      CHECK(knownStatus(fixed.load), "%s: byte %zu: status 0x%x", name.c_str(), at, fixed.load);
      for (kiln_status st : fixed.runs)
        CHECK(knownStatus(st), "%s: byte %zu: run status 0x%x", name.c_str(), at, st);
      tally->loaded += fixed.load == KILN_OK;
      tally->ran += allOk(fixed);
    }
  printf("%s: %zu bytes of header and FlatBuffer, %s\n", name.c_str(), region,
         failures == before ? "ok" : "FAILED");
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> paths(argv + 1, argv + argc);
  std::vector<std::pair<std::string, std::vector<uint8_t>>> models;
  for (const std::string &path : bmodelFiles(paths))
    models.emplace_back(path, readFile(path));
  if (models.empty()) {
    printf("no compiled bmodels given: using builder-made ones\n");
    using namespace kiln::test;
    models.emplace_back("mul_add", buildBmodel(model(mulAddNet())));
    models.emplace_back("two_groups", buildBmodel(model(twoGroupNet(0))));
  }

  Harness harness(16u << 20); // kiln run's device, smaller: the models are small
  Tally tally;
  for (const auto &[name, bytes] : models)
    flipAll(harness, name, bytes, &tally);

  printf("%llu variants; with the checksum rewritten %llu loaded, %llu ran; load statuses:\n",
         (unsigned long long)tally.variants, (unsigned long long)tally.loaded,
         (unsigned long long)tally.ran);
  for (const auto &[st, n] : tally.statuses)
    printf("  %-50s %llu\n", kiln_status_str(st), (unsigned long long)n);
  // The rewritten-checksum variants must reach deep into the verifier.
  CHECK(tally.statuses.count(KILN_ERR_BAD_FLATBUFFER) && tally.statuses.size() >= 4,
        "only %zu distinct load statuses", tally.statuses.size());
  if (failures)
    fprintf(stderr, "%d failures\n", failures);
  return failures ? 1 : 0;
}
