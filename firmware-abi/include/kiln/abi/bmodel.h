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
 * words. Little-endian. */
#define KILN_SOPHGO_MAGIC 0xFF55AAEEu

typedef struct kiln_sophgo_header {
  uint32_t magic;
  uint32_t header_size; /* 64 */
  uint32_t flatbuffers_size;
  uint32_t binary_size_lo;
  uint32_t binary_size_hi;
  uint32_t reserved[11];
} kiln_sophgo_header;

KILN_STATIC_ASSERT(sizeof(kiln_sophgo_header) == 64, sophgo_header_size);

#endif
