/* Compiles every ABI header as C99 so their static_asserts are checked. */
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

int kiln_abi_check_c(void) { return (int)sizeof(kiln_tiu_cmd); }
