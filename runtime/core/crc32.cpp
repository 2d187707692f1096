#include "crc32.h"

namespace kiln::rt {
namespace {

struct CrcTable {
  uint32_t entry[256];
};

// Built by the compiler, so the table is constant data with no init code.
constexpr CrcTable makeCrcTable() {
  CrcTable table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit)
      c = (c & 1u) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    table.entry[i] = c;
  }
  return table;
}

constexpr CrcTable kCrcTable = makeCrcTable();

} // namespace

uint32_t crc32(const uint8_t *data, uint64_t size) {
  uint32_t c = 0xffffffffu;
  for (uint64_t i = 0; i < size; ++i)
    c = kCrcTable.entry[(c ^ data[i]) & 0xffu] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

} // namespace kiln::rt
