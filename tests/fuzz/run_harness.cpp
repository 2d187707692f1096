#include "run_harness.h"

#include "kiln/abi/bm1684x.h"
#include "kiln/abi/chip.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

#include "kiln/abi/bmodel.h"
#include "kiln/abi/cost.h"
#include "kiln/rt/runtime.hpp"

namespace kiln::fuzz {
namespace {

constexpr uint64_t kCyclesPerUs = 1000; // TIU and GDMA clocks are 1 GHz (chip.h)

template <class Record>
bool copyQueue(cmodel::Device &dev, uint64_t addr, uint32_t count, std::vector<Record> *out) {
  std::vector<uint8_t> &ddr = dev.ddr();
  uint64_t bytes = uint64_t{count} * sizeof(Record);
  if (addr < cmodel::Device::kDdrBase || addr - cmodel::Device::kDdrBase > ddr.size() ||
      bytes > ddr.size() - (addr - cmodel::Device::kDdrBase))
    return false;
  out->resize(count);
  if (bytes)
    std::memcpy(out->data(), ddr.data() + (addr - cmodel::Device::kDdrBase), bytes);
  return true;
}

// Every failure of a load or run names its object with a static reason
// (kiln_error_detail): a site that returns a status without one is a bug the
// fuzzer should find, so it aborts like a crash.
kiln_status checked(kiln_status st, const kiln_error_detail &d, const char *call) {
  if (st != KILN_OK && (d.status != st || !d.reason || d.object_kind == KILN_OBJ_NONE ||
                        !d.reason[0])) {
    std::fprintf(stderr, "%s failed with %s but its detail is incomplete (status %s, kind %u, "
                 "reason %s)\n", call, kiln_status_str(st), kiln_status_str(d.status),
                 unsigned(d.object_kind), d.reason ? d.reason : "(null)");
    std::abort();
  }
  return st;
}

// BM1684X streams have no cost model yet (cost.h charges records): the
// watchdog's stand-in bounds a submission's multiply-accumulates instead, at
// the f32 EU rate of every lane, so that a mutated conv or pooling window
// cannot keep the cmodel busy for long.
constexpr uint64_t kStreamMacsPerCycle = KILN_NPU_NUM * KILN_EU_BYTES / 4;

uint64_t streamMacs(cmodel::Device &dev, const kiln_submit_desc &desc) {
  const std::vector<uint8_t> &ddr = dev.ddr();
  const uint64_t at = desc.tiu_queue_addr - cmodel::Device::kDdrBase;
  if (desc.tiu_queue_addr < cmodel::Device::kDdrBase || at > ddr.size() ||
      desc.tiu_bytes > ddr.size() - at)
    return 0; // the device rejects it
  const uint8_t *tiu = ddr.data() + at;
  uint64_t macs = 0;
  for (uint64_t off = 0; off + 8 <= desc.tiu_bytes;) {
    const uint8_t *cmd = tiu + off;
    const kiln_bm_class c = kiln_bm_tiu_class(cmd);
    const uint32_t bytes = kiln_bm_class_bytes(c);
    if (c == KILN_BM_CLASS_SYSID || bytes == 0 || bytes > desc.tiu_bytes - off)
      break;
    if (c == KILN_BM_CLASS_SCONV) {
      kiln_bm_sconv k;
      kiln_bm_sconv_decode(cmd, &k);
      macs += k.res0_n * k.res0_c * k.res0_h * k.res0_w * k.opd1_h * k.opd1_w * k.opd0_c;
    } else if (c == KILN_BM_CLASS_SPORD) {
      kiln_bm_spord p;
      kiln_bm_spord_decode(cmd, &p);
      macs += p.res0_n * p.res0_c * p.res0_h * p.res0_w * p.opd1_h * p.opd1_w;
    }
    off += bytes;
  }
  return macs;
}

} // namespace

Harness::Harness(uint64_t ddr_bytes, kiln_isa isa)
    : device_(ddr_bytes, isa), inner_(device_.hal()) {
  hal_ = inner_;
  hal_.ctx = this;
  hal_.write_mem = [](void *c, uint64_t a, const void *s, uint64_t n) {
    Harness &h = *static_cast<Harness *>(c);
    return h.inner_.write_mem(h.inner_.ctx, a, s, n);
  };
  hal_.read_mem = [](void *c, uint64_t a, void *d, uint64_t n) {
    Harness &h = *static_cast<Harness *>(c);
    return h.inner_.read_mem(h.inner_.ctx, a, d, n);
  };
  hal_.submit = &Harness::submit;
  hal_.wait = &Harness::wait;
  hal_.reset = &Harness::reset;
}

// The cmodel runs a submission synchronously at the doorbell, so the
// watchdog holds it until the wait: with the timeout known, a submission
// whose modelled time exceeds it times out without running, as on a board.
kiln_status Harness::submit(void *ctx, const kiln_submit_desc *desc) {
  Harness &h = *static_cast<Harness *>(ctx);
  if (!desc || h.pending_)
    return KILN_ERR_INVALID_ARGUMENT;
  h.desc_ = *desc;
  h.pending_ = true;
  return KILN_OK;
}

kiln_status Harness::wait(void *ctx, uint32_t timeout_us) {
  Harness &h = *static_cast<Harness *>(ctx);
  if (!h.pending_)
    return KILN_ERR_BAD_STATE;
  h.pending_ = false;
  std::vector<kiln_tiu_cmd> tiu;
  std::vector<kiln_gdma_cmd> gdma;
  kiln_queue_timing timing{};
  if (h.desc_.isa == KILN_ISA_BM1684X &&
      streamMacs(h.device_, h.desc_) / kStreamMacsPerCycle > uint64_t{timeout_us} * kCyclesPerUs) {
    h.timeouts_++;
    return KILN_ERR_TIMEOUT;
  }
  // Queues the device cannot fetch or schedule are its to reject.
  if (h.desc_.isa == KILN_ISA_KILN && copyQueue(h.device_, h.desc_.tiu_queue_addr, h.desc_.tiu_count, &tiu) &&
      copyQueue(h.device_, h.desc_.gdma_queue_addr, h.desc_.gdma_count, &gdma) &&
      kiln_schedule_queues(tiu.data(), uint32_t(tiu.size()), gdma.data(), uint32_t(gdma.size()),
                           nullptr, nullptr, &timing) == KILN_OK &&
      timing.total_cycles > uint64_t{timeout_us} * kCyclesPerUs) {
    h.timeouts_++;
    return KILN_ERR_TIMEOUT;
  }
  kiln_status st = h.inner_.submit(h.inner_.ctx, &h.desc_);
  return st == KILN_OK ? h.inner_.wait(h.inner_.ctx, timeout_us) : st;
}

kiln_status Harness::reset(void *ctx) {
  Harness &h = *static_cast<Harness *>(ctx);
  h.pending_ = false;
  return h.inner_.reset(h.inner_.ctx);
}

void Harness::fillInputs(kiln_net *net, uint32_t seed) {
  for (uint32_t i = 0; i < kiln_net_input_count(net); ++i) {
    kiln_tensor_info info;
    if (kiln_net_input_info(net, i, &info) != KILN_OK || info.bytes > device_.ddr().size())
      continue;
    scratch_.resize(info.bytes);
    uint32_t x = seed * 2654435761u + i;
    for (size_t b = 0; b + 4 <= scratch_.size(); b += 4) {
      x = x * 1664525u + 1013904223u;
      // Floats in [-1, 1): every input of the test models is f32.
      float v = float(int32_t(x >> 8) - (1 << 23)) / float(1 << 23);
      std::memcpy(&scratch_[b], &v, 4);
    }
    kiln_net_set_input(net, i, scratch_.data(), scratch_.size());
  }
}

void Harness::readOutputs(const kiln_net *net, std::vector<uint8_t> &outputs) {
  for (uint32_t i = 0; i < kiln_net_output_count(net); ++i) {
    kiln_tensor_info info;
    if (kiln_net_output_info(net, i, &info) != KILN_OK || info.bytes > device_.ddr().size())
      continue;
    size_t at = outputs.size();
    outputs.resize(at + info.bytes);
    kiln_net_get_output(net, i, outputs.data() + at, info.bytes);
  }
}

Outcome Harness::run(const uint8_t *file, size_t size, const RunOptions &options) {
  Outcome out;
  alignas(16) unsigned char rt_storage[rt::kRuntimeStorageBytes];
  alignas(16) unsigned char net_storage[2][rt::kNetStorageBytes];
  kiln_runtime *rt = nullptr;
  if (kiln_runtime_init(rt_storage, sizeof rt_storage, &hal_, &rt) != KILN_OK)
    return out;
  kiln_net *nets[2] = {nullptr, nullptr};
  kiln_error_detail detail{};
  out.load = checked(kiln_net_load_ex(rt, file, size, 0, net_storage[0], sizeof net_storage[0],
                                      &nets[0], &detail),
                     detail, "kiln_net_load_ex");
  if (out.load != KILN_OK)
    return out;
  if (options.second_net)
    out.load_second = checked(kiln_net_load_ex(rt, file, size, 1, net_storage[1],
                                               sizeof net_storage[1], &nets[1], &detail),
                              detail, "kiln_net_load_ex");
  const int loaded = nets[1] ? 2 : 1;

  // Every stage of every loaded net runs; net 0's outputs are read after
  // each of its stages' last runs (the stages share the neuron region).
  out.outputs.clear();
  for (uint32_t r = 0; r < options.inferences; ++r)
    for (int k = 0; k < loaded; ++k)
      for (uint32_t s = 0; s < kiln_net_stage_count(nets[k]); ++s) {
        out.runs.push_back(checked(kiln_net_select_stage(nets[k], s), detail,
                                   "kiln_net_select_stage"));
        fillInputs(nets[k], options.input_seed + k);
        kiln_run_stats stats{};
        out.runs.push_back(checked(
            kiln_net_run_ex(nets[k], options.timeout_us, nullptr, nullptr, &stats, &detail),
            detail, "kiln_net_run_ex"));
        out.loads_avoided += stats.resident_loads_avoided;
        if (k == 0 && r + 1 == options.inferences)
          readOutputs(nets[0], out.outputs);
      }

  for (int k = loaded - 1; k >= 0; --k)
    kiln_net_unload(nets[k]);
  return out;
}

void AlignedFile::assign(const uint8_t *data, size_t size) {
  words_.assign(size / 8 + 1, 0);
  if (size)
    std::memcpy(words_.data(), data, size);
  size_ = size;
}

bool fixChecksum(uint8_t *file, size_t size) {
  uint64_t at, inner;
  if (kiln_is_sophgo(file, size)) // kiln's container is the blob of Sophgo's
    return kiln_sophgo_blob(file, size, &at, &inner) && fixChecksum(file + at, inner);
  kiln_bmodel_header h;
  if (size < sizeof h)
    return false;
  std::memcpy(&h, file, sizeof h);
  uint64_t end;
  if (__builtin_add_overflow(h.blob_offset, h.blob_size, &end) || end > size ||
      h.header_size < sizeof h || h.header_size > end)
    return false;
  uLong crc = crc32(0L, Z_NULL, 0);
  const uint8_t *p = file + h.header_size;
  for (uint64_t left = end - h.header_size; left;) {
    uInt chunk = uInt(std::min<uint64_t>(left, 1u << 30));
    crc = crc32(crc, p, chunk);
    p += chunk;
    left -= chunk;
  }
  h.checksum = uint32_t(crc);
  std::memcpy(file + offsetof(kiln_bmodel_header, checksum), &h.checksum, sizeof h.checksum);
  return true;
}

std::vector<std::string> bmodelFiles(const std::vector<std::string> &paths) {
  auto isBmodel = [](const std::string &name) {
    return name.size() > 7 && name.compare(name.size() - 7, 7, ".bmodel") == 0;
  };
  std::vector<std::string> files;
  for (const std::string &path : paths) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0)
      continue;
    if (S_ISREG(st.st_mode)) {
      files.push_back(path);
      continue;
    }
    if (DIR *dir = opendir(path.c_str())) {
      while (dirent *e = readdir(dir))
        if (isBmodel(e->d_name))
          files.push_back(path + "/" + e->d_name);
      closedir(dir);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

} // namespace kiln::fuzz
