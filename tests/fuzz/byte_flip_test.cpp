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
// A file in Sophgo's container (isa: bm1684x) runs its BM1684X streams; in
// front of the kiln container it carries, a Sophgo header byte follows the
// header rule and a byte of Sophgo's FlatBuffer (which only libbmrt reads)
// must change nothing; then every byte of the first group's streams is
// flipped too, with the checksum rewritten (any status, no crash).
// Every stage of net 0 and net 1 runs (tiny_stages*: a net compiled for two
// input shapes, in a file with a second net).
// Without compiled models it uses the builder-made ones of residency_models.h.
#include <stdio.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kiln/abi/bmodel.h"
#include "kiln/bmodel_generated.h"
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

void flipAll(const std::string &name, const std::vector<uint8_t> &bytes, Tally *tally) {
  static Harness records(16u << 20), streams(16u << 20, KILN_ISA_BM1684X); // smaller than kiln run's
  const bool sophgo = kiln_is_sophgo(bytes.data(), bytes.size());
  Harness &harness = sophgo ? streams : records;
  RunOptions options;
  options.inferences = 2; // the second run takes the residency manager's warm path
  options.second_net = true; // a file of several nets (kiln combine): net 1 too
  AlignedFile good(bytes.data(), bytes.size());
  const Outcome base = harness.run(good.data(), good.size(), options);
  CHECK(allOk(base), "%s: the unmodified file does not run (load %s)", name.c_str(),
        kiln_status_str(base.load));
  if (!allOk(base))
    return;

  // Where kiln's container starts (0, or the blob of Sophgo's container).
  uint64_t kilnAt = 0, kilnSize = bytes.size();
  if (sophgo)
    CHECK(kiln_sophgo_blob(bytes.data(), bytes.size(), &kilnAt, &kilnSize), "%s: bad Sophgo header",
          name.c_str());
  kiln_bmodel_header h;
  std::memcpy(&h, bytes.data() + kilnAt, sizeof h);
  const int before = failures;
  AlignedFile f;
  auto flip = [&](size_t at, int mutation) {
    f.assign(bytes.data(), bytes.size());
    f.data()[at] = mutation ? uint8_t(f.data()[at] + 1) : uint8_t(f.data()[at] ^ 0xff);
    tally->variants++;
  };
  auto runFixed = [&](size_t at) {
    if (!fixChecksum(f.data(), f.size()))
      return;
    const Outcome fixed = harness.run(f.data(), f.size(), options);
    tally->statuses[fixed.load]++;
    CHECK(knownStatus(fixed.load), "%s: byte %zu: status 0x%x", name.c_str(), at, fixed.load);
    for (kiln_status st : fixed.runs)
      CHECK(knownStatus(st), "%s: byte %zu: run status 0x%x", name.c_str(), at, st);
    tally->loaded += fixed.load == KILN_OK;
    tally->ran += allOk(fixed);
  };
  // Headers, FlatBuffers and the padding after them.
  const size_t region = kilnAt + h.blob_offset;
  for (size_t at = 0; at < region; ++at)
    for (int mutation = 0; mutation < 2; ++mutation) {
      flip(at, mutation);
      const Outcome raw = harness.run(f.data(), f.size(), options);
      CHECK(knownStatus(raw.load), "%s: byte %zu: status 0x%x", name.c_str(), at, raw.load);
      const bool header = (sophgo && at < sizeof(kiln_sophgo_header)) ||
                          (at >= kilnAt && at - kilnAt < h.header_size);
      if (header) {
        CHECK(raw.load != KILN_OK || (allOk(raw) && raw.outputs == base.outputs),
              "%s: header byte %zu mutation %d loads but runs differently", name.c_str(), at,
              mutation);
      } else if (at < kilnAt) {
        CHECK(allOk(raw) && raw.outputs == base.outputs,
              "%s: Sophgo FlatBuffer byte %zu mutation %d changed kiln's run (load %s)",
              name.c_str(), at, mutation, kiln_status_str(raw.load));
        continue; // no kiln checksum covers it
      } else {
        CHECK(raw.load == KILN_ERR_BAD_CHECKSUM, "%s: byte %zu mutation %d: load %s",
              name.c_str(), at, mutation, kiln_status_str(raw.load));
      }
      runFixed(at);
    }
  // The first group's BM1684X streams: bad lengths, classes, addresses, ids.
  size_t streamBytes = 0;
  if (sophgo) {
    const auto *model = kiln::bmodel::GetModel(bytes.data() + kilnAt + h.flatbuffer_offset);
    const kiln::bmodel::LayerGroup &g = *model->nets()->Get(0)->groups()->Get(0);
    for (const kiln::bmodel::BlobRange *r : {g.bm1684x_tiu(), g.bm1684x_gdma()})
      for (size_t i = 0; r && i < r->size(); ++i, ++streamBytes) {
        const size_t at = kilnAt + h.blob_offset + r->offset() + i;
        flip(at, int(i & 1));
        runFixed(at);
      }
  }
  printf("%s: %zu bytes of headers and FlatBuffers, %zu of streams, %s\n", name.c_str(), region,
         streamBytes, failures == before ? "ok" : "FAILED");
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

  Tally tally;
  for (const auto &[name, bytes] : models)
    flipAll(name, bytes, &tally);

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
