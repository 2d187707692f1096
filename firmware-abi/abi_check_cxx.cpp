// Compiles every ABI header as C++ so their static_asserts are checked.
#include "kiln/abi/bm1684x.h"
#include "kiln/abi/bmodel.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/cmd_check.h"
#include "kiln/abi/commands.h"
#include "kiln/abi/cost.h"
#include "kiln/abi/quant.h"
#include "kiln/abi/regs.h"
#include "kiln/abi/status.h"
#include "kiln/abi/version.h"

int kiln_abi_check_cxx() { return static_cast<int>(sizeof(kiln_gdma_cmd)); }
