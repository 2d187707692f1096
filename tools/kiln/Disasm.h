//===- Disasm.h - BM1684X command streams as text ----------------*- C++ -*-===//
#ifndef KILN_TOOLS_KILN_DISASM_H
#define KILN_TOOLS_KILN_DISASM_H

#include <stdint.h>

#include <string>

namespace kiln::cli {

/// One line per command of a BM1684X stream of `bytes` bytes (engine:
/// KILN_BM_ENGINE_TIU or _GDMA), each indented by `indent`: its index, class,
/// id and wait, its operands (LMEM as L<lane>+<offset>, DDR as a net offset,
/// with shape, format and strides), then every other field that is not zero,
/// by the names of its class's field table (kiln/abi/bm1684x.h), and its
/// modelled cycles (kiln/abi/bm1684x_cost.h). Stops, saying so, at bytes that
/// are no command kiln runs.
std::string disassembleStream(const uint8_t *stream, uint64_t bytes, uint32_t engine,
                              const std::string &indent);

} // namespace kiln::cli

#endif
