// CRC-32 (IEEE 802.3, reflected, as zlib) of the bytes after a bmodel header.
#ifndef KILN_RT_CORE_CRC32_H
#define KILN_RT_CORE_CRC32_H

#include <stdint.h>

namespace kiln::rt {

uint32_t crc32(const uint8_t *data, uint64_t size);

} // namespace kiln::rt

#endif
