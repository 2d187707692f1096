// GDMA engine: copies an [n, c, h, w] block between DDR (element strides) and
// LMEM (the layout of chip.h), in any of the four directions, or fills one.
#include <algorithm>
#include <cstring>
#include <optional>

#include "kiln/chip/engines.h"
#include "kiln/abi/cmd_check.h"
#include "parallel.h"

namespace kiln::chip {
namespace {

// One side of a copy: where row (n, c, h) starts and the bytes between the
// elements of a row. An LMEM side follows the layout of chip.h (planes of
// lmem_plane_h rows for a window); a DDR side its element strides.
class Side {
public:
  static Side lmem(uint8_t *lmem, const kiln_gdma_cmd &cmd, uint64_t addr) {
    uint32_t dsize = kiln_dtype_bytes(cmd.dtype);
    uint32_t plane_rows = cmd.lmem_plane_h ? cmd.lmem_plane_h : cmd.h;
    return Side(lmem,
                LmemLayout(addr, kiln_gdma_lmem_channels(&cmd), plane_rows, cmd.w, dsize),
                nullptr, dsize, cmd.lmem_lane);
  }
  static Side ddr(uint8_t *window, const kiln_gdma_cmd &cmd, uint64_t addr,
                  const uint32_t *stride) {
    return Side(window + addr, std::nullopt, stride, kiln_dtype_bytes(cmd.dtype));
  }

  uint8_t *row(uint64_t n, uint64_t c, uint64_t h) const {
    if (layout_)
      return base_ + layout_->offset(n, c + lane_, h, 0);
    return base_ + (n * stride_[0] + c * stride_[1] + h * stride_[2]) * dsize_;
  }
  uint64_t step() const { return layout_ ? dsize_ : uint64_t{stride_[3]} * dsize_; }
  // Bytes from one row of a plane to the next (LMEM: a plane's rows follow
  // one another).
  uint64_t rowPitch(uint32_t w) const { return layout_ ? w * dsize_ : uint64_t{stride_[2]} * dsize_; }

private:
  Side(uint8_t *base, std::optional<LmemLayout> layout, const uint32_t *stride, uint32_t dsize,
       uint32_t lane = 0)
      : base_(base), layout_(layout), stride_(stride), dsize_(dsize), lane_(lane) {}

  uint8_t *base_;
  std::optional<LmemLayout> layout_;
  const uint32_t *stride_;
  uint64_t dsize_;
  uint32_t lane_; // LMEM: the lane of the block's first channel
};

Side makeSide(bool is_lmem, const kiln_gdma_cmd &cmd, uint64_t addr, const uint32_t *stride,
              const DdrWindow &ddr, uint8_t *lmem) {
  return is_lmem ? Side::lmem(lmem, cmd, addr) : Side::ddr(ddr.base, cmd, addr, stride);
}

// count elements of size bytes, element by element (each a fixed-size copy
// the compiler inlines, not a library call).
template <size_t Size>
void copyElements(uint8_t *to, uint64_t to_step, const uint8_t *from, uint64_t from_step,
                  uint32_t count) {
  for (uint32_t i = 0; i < count; ++i)
    std::memmove(to + i * to_step, from + i * from_step, Size);
}

void copyStrided(uint8_t *to, uint64_t to_step, const uint8_t *from, uint64_t from_step,
                 uint32_t count, uint64_t size) {
  switch (size) {
  case 1: return copyElements<1>(to, to_step, from, from_step, count);
  case 2: return copyElements<2>(to, to_step, from, from_step, count);
  case 4: return copyElements<4>(to, to_step, from, from_step, count);
  default:
    for (uint32_t i = 0; i < count; ++i)
      std::memmove(to + i * to_step, from + i * from_step, size);
  }
}

} // namespace

// Elements are copied in NCHW order; a copy whose source and destination
// overlap sees its own writes only as far as that order implies. A DDR side
// with a stride of 0 repeats (source) or overwrites (destination) one element.
// A FILL writes the low dsize bytes of the 32-bit pattern in src_addr (the
// whole pattern for a 4-byte dtype) and reads nothing.
const char *runGdma(const kiln_gdma_cmd &cmd, const DdrWindow &ddr, uint8_t *lmem,
                    GdmaTraffic *traffic) {
  switch (kiln_gdma_cmd_check(&cmd, ddr.size)) {
  case KILN_OK: break;
  case KILN_ERR_OUT_OF_RANGE: return "GDMA access outside the DDR window or LMEM";
  default: return "malformed GDMA record";
  }
  const bool fill = cmd.flags & KILN_GDMA_FLAG_FILL;
  const bool src_lmem = kiln_gdma_src_is_lmem(cmd.dir);
  const bool dst_lmem = kiln_gdma_dst_is_lmem(cmd.dir);
  const Side dst = makeSide(dst_lmem, cmd, cmd.dst_addr, cmd.dst_stride, ddr, lmem);
  const uint64_t dsize = kiln_dtype_bytes(cmd.dtype);

  if (fill) {
    uint8_t pattern[4];
    for (uint32_t b = 0; b < 4; ++b)
      pattern[b] = uint8_t(cmd.src_addr >> (8 * b)); // little-endian, as the records
    forEachRow(cmd, [&](uint32_t n, uint32_t c, uint32_t h) {
      uint8_t *to = dst.row(n, c, h);
      for (uint32_t w = 0; w < cmd.w; ++w)
        std::memcpy(to + w * dst.step(), pattern, dsize);
    });
  } else {
    // The source side is only made for a copy: a FILL's src_addr is no address.
    const Side src = makeSide(src_lmem, cmd, cmd.src_addr, cmd.src_stride, ddr, lmem);
    const bool dense_rows = src.step() == dsize && dst.step() == dsize;
    auto copyRow = [&](uint32_t n, uint32_t c, uint32_t h) {
      const uint8_t *from = src.row(n, c, h);
      uint8_t *to = dst.row(n, c, h);
      if (dense_rows) {
        std::memmove(to, from, cmd.w * dsize);
        return;
      }
      copyStrided(to, dst.step(), from, src.step(), cmd.w, dsize);
    };
    // Between DDR and LMEM nothing overlaps, so a large copy splits over the
    // threads by channel; a copy within one memory keeps the NCHW order.
    const uint64_t total = kiln_gdma_elems(&cmd) * dsize;
    const size_t chunks = src_lmem != dst_lmem && total >= (uint64_t{1} << 17)
                              ? std::min<size_t>(cmd.c, 4 * cmodelThreads())
                              : 1;
    // Between memories, planes whose rows follow one another on both sides
    // are one copy each.
    const uint64_t rowBytes = uint64_t{cmd.w} * dsize;
    const bool densePlanes = src_lmem != dst_lmem && dense_rows &&
                             src.rowPitch(cmd.w) == rowBytes && dst.rowPitch(cmd.w) == rowBytes;
    parallelFor(chunks, [&](size_t chunk) {
      for (uint32_t n = 0; n < cmd.n; ++n)
        for (uint32_t c = uint32_t(chunk * cmd.c / chunks); c < (chunk + 1) * cmd.c / chunks; ++c) {
          if (densePlanes) {
            std::memcpy(dst.row(n, c, 0), src.row(n, c, 0), rowBytes * cmd.h);
            continue;
          }
          for (uint32_t h = 0; h < cmd.h; ++h)
            copyRow(n, c, h);
        }
    });
  }

  const uint64_t bytes = kiln_gdma_elems(&cmd) * dsize;
  traffic->ddr_read_bytes += src_lmem || fill ? 0 : bytes;
  traffic->ddr_write_bytes += dst_lmem ? 0 : bytes;
  return nullptr;
}

} // namespace kiln::chip
