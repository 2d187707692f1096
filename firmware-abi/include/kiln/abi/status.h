/* kiln firmware ABI: status codes, grouped by kind (high byte). */
#ifndef KILN_ABI_STATUS_H
#define KILN_ABI_STATUS_H

typedef enum kiln_status {
  KILN_OK = 0,

  /* 0x01xx: the caller's arguments */
  KILN_ERR_INVALID_ARGUMENT = 0x0101,
  KILN_ERR_BUFFER_TOO_SMALL = 0x0102,
  KILN_ERR_NOT_FOUND = 0x0103,
  KILN_ERR_BAD_STATE = 0x0104,

  /* 0x02xx: the bmodel file */
  KILN_ERR_BAD_MAGIC = 0x0201,
  KILN_ERR_BAD_VERSION = 0x0202,
  KILN_ERR_TRUNCATED = 0x0203,
  KILN_ERR_BAD_CHECKSUM = 0x0204,
  KILN_ERR_BAD_FLATBUFFER = 0x0205,
  KILN_ERR_CHIP_MISMATCH = 0x0206,
  KILN_ERR_ABI_MISMATCH = 0x0207,
  KILN_ERR_OUT_OF_RANGE = 0x0208,  /* offset/size/address outside its region */
  KILN_ERR_BAD_TENSOR = 0x0209,    /* shape, dtype or size inconsistent */
  KILN_ERR_BAD_COMMAND = 0x020a,   /* unknown op or malformed record */
  KILN_ERR_BAD_SYNC = 0x020b,      /* sync ids that can never be satisfied */
  KILN_ERR_UNSUPPORTED = 0x020c,
  KILN_ERR_BAD_RESIDENCY = 0x020d, /* resident LMEM range overlaps a live allocation */
  KILN_ERR_BAD_MEMORY_PLAN = 0x020e, /* DDR buffers live at once share bytes */

  /* 0x03xx: resources */
  KILN_ERR_NO_DEVICE_MEMORY = 0x0301,
  KILN_ERR_TOO_MANY_NETS = 0x0302,

  /* 0x04xx: the device */
  KILN_ERR_TIMEOUT = 0x0401,
  KILN_ERR_DEVICE_FAULT = 0x0402,
  KILN_ERR_HAL = 0x0403
} kiln_status;

#endif
