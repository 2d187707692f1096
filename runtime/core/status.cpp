#include "kiln/rt/kiln_rt.h"

// C callers may pass any int (a device's ERROR register, say), but in C++ a
// kiln_status outside the enum's range must not even be read: switch on the
// argument's bytes as an int.
extern "C" const char *kiln_status_str(kiln_status status) {
  int code;
  static_assert(sizeof code == sizeof status, "kiln_status is an int-sized enum");
  __builtin_memcpy(&code, &status, sizeof code);
  switch (code) {
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
  case KILN_ERR_BAD_RESIDENCY: return "LMEM residency plan inconsistent with its allocations";
  case KILN_ERR_BAD_MEMORY_PLAN: return "DDR buffers live at the same time share bytes";
  case KILN_ERR_NO_DEVICE_MEMORY: return "out of device memory";
  case KILN_ERR_TOO_MANY_NETS: return "too many nets";
  case KILN_ERR_TIMEOUT: return "device timeout";
  case KILN_ERR_DEVICE_FAULT: return "device fault";
  case KILN_ERR_HAL: return "HAL error";
  }
  return "unknown status";
}
