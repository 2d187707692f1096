#include "crc32.h"

namespace kiln::rt {
namespace {

// Slicing-by-4 (four 1 KiB tables): a byte table would make checking a
// 100 MB bmodel take half a second; eight tables would cost 4 KiB more .text.
struct CrcTables {
  uint32_t entry[4][256];
};

// Built by the compiler, so the tables are constant data with no init code.
constexpr CrcTables makeCrcTables() {
  CrcTables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit)
      c = (c & 1u) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    t.entry[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i)
    for (int k = 1; k < 4; ++k)
      t.entry[k][i] = (t.entry[k - 1][i] >> 8) ^ t.entry[0][t.entry[k - 1][i] & 0xffu];
  return t;
}

constexpr CrcTables kCrc = makeCrcTables();

} // namespace

uint32_t crc32(const uint8_t *data, uint64_t size) {
  uint32_t c = 0xffffffffu;
  uint64_t i = 0;
  // Four bytes at a time, assembled little-endian whatever the host.
  for (; i + 4 <= size; i += 4) {
    c ^= uint32_t{data[i]} | uint32_t{data[i + 1]} << 8 | uint32_t{data[i + 2]} << 16 |
         uint32_t{data[i + 3]} << 24;
    c = kCrc.entry[3][c & 0xffu] ^ kCrc.entry[2][(c >> 8) & 0xffu] ^
        kCrc.entry[1][(c >> 16) & 0xffu] ^ kCrc.entry[0][c >> 24];
  }
  for (; i < size; ++i)
    c = kCrc.entry[0][(c ^ data[i]) & 0xffu] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

} // namespace kiln::rt
