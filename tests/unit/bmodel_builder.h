// Builds small bmodel files for tests: FlatBuffer from the schema, the fixed
// header and a blob of coefficients and command records. The checksum is
// zlib's crc32, an outside reference for the runtime's own.
#ifndef KILN_TESTS_BMODEL_BUILDER_H
#define KILN_TESTS_BMODEL_BUILDER_H

#include <stdint.h>

#include <optional>
#include <string>
#include <vector>

#include "kiln/abi/bmodel.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/commands.h"
#include "kiln/abi/version.h"

namespace kiln::test {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  uint64_t ddr_offset = 0;
  uint8_t dtype = KILN_DTYPE_F32;
  std::optional<uint64_t> size; // default: dense bytes of shape and dtype
  int32_t buffer = -1, first_group = -1, last_group = -1; // activation plan (format 1.1)
};

struct BufferSpec {
  uint64_t ddr_offset = 0, size = 0;
  int32_t first_group = -1, last_group = -1;
};

struct TimestepSpec {
  int32_t slice = -1; // -1: the prologue
  uint32_t tiu_begin = 0, tiu_end = 0, gdma_begin = 0, gdma_end = 0;
};

struct LmemSpec {
  std::string tensor;
  uint32_t addr = 0, size = 0;
  uint8_t buffer = 0;
  uint32_t first_step = 0, last_step = 0;
  bool held = false;
};

struct GroupSpec {
  std::vector<kiln_tiu_cmd> tiu;
  std::vector<kiln_gdma_cmd> gdma;
  std::vector<std::string> ops;        // ONNX op names
  std::vector<uint16_t> tiu_ops;       // per TIU command, its op (format 1.2)
  std::vector<std::string> slices;     // tensors with (empty) slice tables
  std::vector<uint16_t> gdma_tensors;  // per GDMA command, its tensor (format 1.2)
  std::vector<TimestepSpec> timesteps;
  std::optional<std::vector<LmemSpec>> lmem; // nullopt: no LmemAlloc table at all
  // BM1684X streams (format 1.5): written when bm_tiu_count is not 0.
  std::vector<uint8_t> bm_tiu, bm_gdma;
  uint32_t bm_tiu_count = 0, bm_gdma_count = 0;
};

struct ResidencySpec {
  std::string tensor;
  bool dynamic = false; // ResidencyKind::DynamicWeight, else Coefficient
  bool formed = false;  // ResidencyKind::FormedOnChip (format 1.4)
  uint32_t group = 0;
  uint32_t lmem_addr = 0, lmem_size = 0;
  uint32_t first_step = 0, last_step = 0;
};

struct NetSpec {
  std::string name = "net";
  uint64_t coeff_size = 0;
  uint64_t neuron_size = 0;
  std::vector<uint8_t> coeff; // initial contents of the coefficient region
  std::vector<TensorSpec> inputs, outputs, tensors;
  std::vector<GroupSpec> groups;
  std::vector<ResidencySpec> residency;
  std::vector<BufferSpec> buffers; // empty: no activation plan (format 1.0)
};

struct ModelSpec {
  uint16_t format_major = KILN_BMODEL_FORMAT_MAJOR;
  uint16_t format_minor = KILN_BMODEL_FORMAT_MINOR;
  uint32_t chip_id = KILN_CHIP_ID_BM1684X;
  uint32_t lanes = KILN_NPU_NUM;
  uint32_t lmem_bytes_per_lane = KILN_LMEM_BYTES_PER_LANE;
  uint16_t abi_major = KILN_ABI_VERSION_MAJOR;
  uint16_t abi_minor = KILN_ABI_VERSION_MINOR;
  std::vector<NetSpec> nets;
};

// Header, then the FlatBuffer at offset 64, then the blob on a 64-byte
// boundary: coefficients first, then each group's TIU and GDMA records.
std::vector<uint8_t> buildBmodel(const ModelSpec &spec);

uint32_t zlibCrc32(const uint8_t *data, size_t size);
kiln_bmodel_header readHeader(const std::vector<uint8_t> &file);
void writeHeader(std::vector<uint8_t> &file, const kiln_bmodel_header &header);
// Recomputes the checksum after bytes behind the header were edited.
void updateChecksum(std::vector<uint8_t> &file);

} // namespace kiln::test

#endif
