#include "kiln/rt/kiln_rt.h"

extern "C" const char *kiln_status_str(kiln_status status) {
  switch (status) {
  case KILN_OK: return "ok";
  case KILN_ERR_INVALID_ARGUMENT: return "invalid argument";
  case KILN_ERR_BUFFER_TOO_SMALL: return "buffer too small";
  case KILN_ERR_NOT_FOUND: return "not found";
  case KILN_ERR_BAD_STATE: return "bad state";
  case KILN_ERR_BAD_MAGIC: return "not a kiln bmodel (bad magic)";
  case KILN_ERR_BAD_VERSION: return "unsupported bmodel format version";
  case KILN_ERR_TRUNCATED: return "bmodel truncated";
  case KILN_ERR_BAD_CHECKSUM: return "bmodel checksum mismatch";
  case KILN_ERR_BAD_FLATBUFFER: return "malformed bmodel FlatBuffer";
  case KILN_ERR_CHIP_MISMATCH: return "bmodel built for another chip";
  case KILN_ERR_ABI_MISMATCH: return "bmodel built for another firmware ABI";
  case KILN_ERR_OUT_OF_RANGE: return "offset, size or address outside its region";
  case KILN_ERR_BAD_TENSOR: return "tensor shape, dtype or size inconsistent";
  case KILN_ERR_BAD_COMMAND: return "malformed command record";
  case KILN_ERR_BAD_SYNC: return "command sync ids can never be satisfied";
  case KILN_ERR_UNSUPPORTED: return "unsupported feature";
  case KILN_ERR_NO_DEVICE_MEMORY: return "out of device memory";
  case KILN_ERR_TOO_MANY_NETS: return "too many nets";
  case KILN_ERR_TIMEOUT: return "device timeout";
  case KILN_ERR_DEVICE_FAULT: return "device fault";
  case KILN_ERR_HAL: return "HAL error";
  }
  return "unknown status";
}
