//===- Disasm.cpp - BM1684X command streams as text ------------------------===//
//
// Field names and positions come from the class tables of kiln/abi/bm1684x.h
// (the encoder's and decoder's), so the listing shows exactly what a command
// holds. Operands are summarised first in the spirit of TPU-MLIR's debugger:
// where each lives, its shape and format.
//
//===----------------------------------------------------------------------===//

#include "Disasm.h"

#include "kiln/abi/bm1684x_cost.h"
#include "kiln/abi/bm1684x_stream.h"

#include <cstdio>
#include <cstring>

using namespace kiln;

namespace {

const char *precName(uint64_t prec) {
  static const char *const kNames[] = {"i8", "f16", "f32", "i16", "i32", "bf16", "i4", "f8"};
  return prec < 8 ? kNames[prec] : "?";
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

/// A GDMA address: LMEM lane and offset, static memory, or a DDR offset.
std::string gdmaPlace(uint64_t addr) {
  if (addr >= KILN_BM_LMEM_BASE && addr < KILN_BM_LMEM_END) {
    uint64_t a = addr - KILN_BM_LMEM_BASE;
    return "L" + std::to_string(a >> KILN_BM_LANE_SHIFT) + "+" +
           hex(a & (KILN_LMEM_BYTES_PER_LANE - 1));
  }
  if (addr >= KILN_BM_SMEM_BASE && addr < KILN_BM_L2_BASE)
    return "S+" + hex(addr - KILN_BM_SMEM_BASE);
  if (addr >= KILN_BM_DDR_BASE)
    return "DDR+" + hex(addr - KILN_BM_DDR_BASE);
  return "?" + hex(addr);
}

/// A TIU operand address (LMEM: lane << 18 | offset).
std::string tiuPlace(uint64_t addr) {
  return "L" + std::to_string(addr >> KILN_BM_LANE_SHIFT) + "+" +
         hex(addr & (KILN_LMEM_BYTES_PER_LANE - 1));
}

/// The value of a named field of the command, if its class has one.
bool field(const uint8_t *cmd, kiln_bm_class cls, const char *name, uint64_t *out) {
  uint32_t count = 0;
  const kiln_bm_field *f = kiln_bm_class_fields(cls, &count);
  for (uint32_t i = 0; i < count; ++i)
    if (std::strcmp(f[i].name, name) == 0) {
      *out = kiln_bm_get(cmd, f[i].bit, f[i].width);
      return true;
    }
  return false;
}
uint64_t get(const uint8_t *cmd, kiln_bm_class cls, const char *name) {
  uint64_t v = 0;
  field(cmd, cls, name, &v);
  return v;
}

/// "res0 L0+0x100 f32 1x64x56x56": a TIU operand in the fields' names.
std::string tiuOperand(const uint8_t *cmd, kiln_bm_class cls, const std::string &op) {
  uint64_t addr, isConst = 0, prec = 0;
  if (!field(cmd, cls, (op + "_addr").c_str(), &addr))
    return "";
  field(cmd, cls, (op + "_const").c_str(), &isConst);
  if (!field(cmd, cls, (op + "_prec").c_str(), &prec))
    prec = get(cmd, cls, op == "res0" ? "res0_prec" : "opd0_prec");
  std::string s = " " + op + "=";
  if (isConst)
    return s + "#" + hex(addr);
  s += tiuPlace(addr) + ":" + precName(prec);
  uint64_t n, c, h, w;
  if (field(cmd, cls, (op + "_n").c_str(), &n) && field(cmd, cls, (op + "_c").c_str(), &c) &&
      field(cmd, cls, (op + "_h").c_str(), &h) && field(cmd, cls, (op + "_w").c_str(), &w))
    s += "[" + std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(h) + "x" +
         std::to_string(w) + "]";
  return s;
}

std::string describe(const uint8_t *cmd, kiln_bm_class cls, uint32_t engine) {
  std::string s = std::string(kiln_bm_class_name(cls)) +
                  " id=" + std::to_string(kiln_bm_cmd_id(cmd, engine)) +
                  " dep=" + std::to_string(kiln_bm_cmd_dep(cmd, engine));
  if (engine == KILN_BM_ENGINE_TIU) {
    if (cls != KILN_BM_CLASS_SYSID)
      s += " eu=" + std::to_string(get(cmd, cls, "tsk_eu_typ"));
    for (const char *op : {"res0", "opd0", "opd1", "opd2", "opd3"})
      s += tiuOperand(cmd, cls, op);
  } else if (cls == KILN_BM_CLASS_DMA_TENSOR) {
    const bool fill = get(cmd, cls, "fill_constant_en") != 0;
    s += std::string(" ") + precName(get(cmd, cls, "src_data_format")) + "[" +
         std::to_string(get(cmd, cls, "src_nsize")) + "x" + std::to_string(get(cmd, cls, "src_csize")) +
         "x" + std::to_string(get(cmd, cls, "src_hsize")) + "x" +
         std::to_string(get(cmd, cls, "src_wsize")) + "] ";
    s += fill ? "fill #" + hex(get(cmd, cls, "constant_value"))
              : gdmaPlace(kiln_bm_gdma_addr(get(cmd, cls, "src_start_addr_l32"),
                                           get(cmd, cls, "src_start_addr_h8")));
    s += " -> " + gdmaPlace(kiln_bm_gdma_addr(get(cmd, cls, "dst_start_addr_l32"),
                                            get(cmd, cls, "dst_start_addr_h8")));
  }
  // Every other field that is set, by its table's name.
  static const char *const kShown[] = {"cmd_id", "cmd_id_dep", "tsk_eu_typ", "cmd_short",
                                       "cmd_id_en", "src_data_format", "fill_constant_en",
                                       "constant_value", "src_nsize", "src_csize", "src_hsize",
                                       "src_wsize"};
  uint32_t count = 0;
  const kiln_bm_field *f = kiln_bm_class_fields(cls, &count);
  std::string rest;
  for (uint32_t i = 0; i < count; ++i) {
    const std::string name = f[i].name;
    uint64_t v = kiln_bm_get(cmd, f[i].bit, f[i].width);
    bool shown = name.rfind("rsvd", 0) == 0 || name.find("addr") != std::string::npos ||
                 name.find("_prec") != std::string::npos || name.find("_const") != std::string::npos;
    for (const char *k : kShown)
      shown = shown || name == k;
    if (engine == KILN_BM_ENGINE_TIU)
      for (const char *op : {"res0_", "opd0_", "opd1_", "opd2_", "opd3_"})
        for (const char *d : {"n", "c", "h", "w"})
          shown = shown || name == std::string(op) + d;
    if (!shown && v)
      rest += " " + name + "=" + std::to_string(v);
  }
  return s + (rest.empty() ? "" : " |" + rest);
}

} // namespace

std::string cli::disassembleStream(const uint8_t *stream, uint64_t bytes, uint32_t engine,
                                   const std::string &indent) {
  std::string out;
  uint64_t at = 0;
  for (uint32_t index = 0;; ++index) {
    uint32_t size = 0;
    kiln_bm_class cls = kiln_bm_stream_cmd(stream, bytes, at, engine, &size);
    if (cls == KILN_BM_CLASS_NONE) {
      out += indent + "[" + std::to_string(index) + "] (not a command kiln runs at byte " +
             std::to_string(at) + ")\n";
      break;
    }
    const uint64_t cycles = engine == KILN_BM_ENGINE_TIU ? kiln_bm_tiu_cycles(stream + at, cls)
                                                        : kiln_bm_gdma_cycles(stream + at, cls);
    out += indent + (engine == KILN_BM_ENGINE_TIU ? "tiu" : "gdma") + "[" +
           std::to_string(index) + "] " + describe(stream + at, cls, engine) + " (" +
           std::to_string(cycles) + " cycles)\n";
    at += size;
    if (kiln_bm_is_end(stream + at - size, cls))
      break;
  }
  return out;
}
