/* kiln firmware ABI: the fixed header in front of a bmodel file.
 *
 * File = header | FlatBuffer (schemas/bmodel.fbs) | blob. Offsets are from the
 * start of the file; the blob is aligned to KILN_BMODEL_BLOB_ALIGN. The
 * checksum is CRC-32 (IEEE, reflected, as zlib) over every byte after the
 * header. */
#ifndef KILN_ABI_BMODEL_H
#define KILN_ABI_BMODEL_H

#include <stdint.h>

#include "kiln/abi/static_assert.h"

#define KILN_BMODEL_MAGIC "KILNBMDL"
#define KILN_BMODEL_BLOB_ALIGN 64u

typedef struct kiln_bmodel_header {
  char magic[8];
  uint32_t header_size;
  uint16_t format_major;
  uint16_t format_minor;
  uint64_t flatbuffer_offset;
  uint64_t flatbuffer_size;
  uint64_t blob_offset;
  uint64_t blob_size;
  uint32_t checksum;
  uint32_t flags;
  uint64_t reserved;
} kiln_bmodel_header;

KILN_STATIC_ASSERT(sizeof(kiln_bmodel_header) == 64, bmodel_header_size);

/* Sophgo's container, the one libbmrt loads (FACTS.md section 6):
 * header | FlatBuffer (schemas/sophgo_bmodel.fbs) | blob, back to back, no
 * checksum. The blob's 64-bit size sits unaligned at offset 12, hence the two
 * words. Little-endian. kiln writes the blob as a whole kiln container,
 * starting KILN_SOPHGO_BLOB_ALIGN-aligned in the file; Sophgo's Binary
 * ranges address its coefficients and command streams. */
#define KILN_SOPHGO_MAGIC 0xFF55AAEEu
#define KILN_SOPHGO_BLOB_ALIGN 4096u

typedef struct kiln_sophgo_header {
  uint32_t magic;
  uint32_t header_size; /* 64 */
  uint32_t flatbuffers_size;
  uint32_t binary_size_lo;
  uint32_t binary_size_hi;
  uint32_t reserved[11];
} kiln_sophgo_header;

KILN_STATIC_ASSERT(sizeof(kiln_sophgo_header) == 64, sophgo_header_size);

static inline uint32_t kiln_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* 1 when `file` (of `size` bytes) starts with Sophgo's magic. */
static inline int kiln_is_sophgo(const uint8_t *file, uint64_t size) {
  return size >= 4u && kiln_le32(file) == KILN_SOPHGO_MAGIC;
}

/* The blob of a Sophgo container: 1 with its offset and size when the header
 * is Sophgo's 64 bytes and its parts fit in `size`, else 0. */
static inline int kiln_sophgo_blob(const uint8_t *file, uint64_t size, uint64_t *offset,
                                   uint64_t *blob_size) {
  uint64_t at, bytes;
  if (!kiln_is_sophgo(file, size) || size < sizeof(kiln_sophgo_header) ||
      kiln_le32(file + 4) != sizeof(kiln_sophgo_header))
    return 0;
  at = sizeof(kiln_sophgo_header) + (uint64_t)kiln_le32(file + 8);
  bytes = (uint64_t)kiln_le32(file + 12) | (uint64_t)kiln_le32(file + 16) << 32;
  if (at > size || bytes > size - at)
    return 0;
  *offset = at;
  *blob_size = bytes;
  return 1;
}

#endif
