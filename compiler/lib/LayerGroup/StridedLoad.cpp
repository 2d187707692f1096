//===- StridedLoad.cpp - Loads that read a tensor through strides --------===//

#include "kiln/LayerGroup/StridedLoad.h"

#include "kiln/Dialect/Tpu/IR/DmaProgram.h"
#include "kiln/abi/chip.h"
#include "kiln/abi/cost.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;
using namespace kiln::lg;

StridedReading StridedReading::dense(int64_t elements) {
  StridedReading r;
  r.sizes = {elements};
  r.strides = {1};
  return r;
}

StridedReading lg::readingOf(tpu::StridedViewOp view) {
  StridedReading r;
  r.offset = view.getOffset();
  r.sizes.assign(view.getSizes().begin(), view.getSizes().end());
  r.strides.assign(view.getStrides().begin(), view.getStrides().end());
  return r;
}

/// Element addresses are enumerated, so only tensors up to this size.
static constexpr int64_t kMaxElements = int64_t(1) << 20;

std::optional<std::vector<int64_t>> lg::permutedAddresses(tpu::DmaOp dma) {
  auto type = cast<RankedTensorType>(dma.getType());
  if (dma.getInputs().size() != 1 || dma.getProgram().size() != 1 || !type.hasStaticShape() ||
      type.getNumElements() > kMaxElements)
    return std::nullopt;
  auto in = cast<RankedTensorType>(dma.getInputs()[0].getType());
  if (!in.hasStaticShape() || in.getElementType() != type.getElementType() ||
      in.getNumElements() != type.getNumElements())
    return std::nullopt;
  auto copy = cast<tpu::DmaCopyAttr>(dma.getProgram()[0]);
  if (copy.isFill() || copy.getSrc() != 0 || copy.getDstOffset() != 0)
    return std::nullopt;
  ArrayRef<int64_t> shape = copy.getShape(), src = copy.getSrcStrides(),
                    dst = copy.getDstStrides();
  int64_t dense = 1;
  for (int d = 3; d >= 0; --d) {
    if (shape[d] > 1 && (dst[d] != dense || src[d] <= 0))
      return std::nullopt;
    dense *= shape[d];
  }
  if (dense != type.getNumElements())
    return std::nullopt;
  std::vector<int64_t> addresses;
  addresses.reserve(dense);
  for (int64_t n = 0; n < shape[0]; ++n)
    for (int64_t c = 0; c < shape[1]; ++c)
      for (int64_t h = 0; h < shape[2]; ++h)
        for (int64_t w = 0; w < shape[3]; ++w)
          addresses.push_back(copy.getSrcOffset() + n * src[0] + c * src[1] + h * src[2] +
                              w * src[3]);
  return addresses;
}

std::optional<StridedReading> lg::scatterOf(tpu::DmaOp dma) {
  std::optional<std::vector<int64_t>> addresses = permutedAddresses(dma);
  if (!addresses)
    return std::nullopt;
  std::vector<int64_t> inverse(addresses->size());
  for (auto [to, from] : llvm::enumerate(*addresses))
    inverse[from] = to;
  return StridedReading::fit(inverse);
}

tpu::DmaOp lg::scatteringDma(Value v) {
  for (Operation *user : v.getUsers()) {
    if (auto reshape = dyn_cast<tpu::ReshapeOp>(user))
      if (tpu::DmaOp dma = scatteringDma(reshape.getResult()))
        return dma;
    if (auto dma = dyn_cast<tpu::DmaOp>(user); dma && dma.getInPlace())
      return dma;
  }
  return {};
}

std::optional<StridedReading> StridedReading::fit(llvm::ArrayRef<int64_t> a) {
  int64_t n = a.size();
  if (n == 0)
    return std::nullopt;
  // Innermost run first: the longest linear prefix of each block that
  // divides the elements left.
  llvm::SmallVector<int64_t, 6> sizes, strides;
  for (int64_t block = 1; block < n;) {
    int64_t stride = a[block] - a[0];
    if (stride < 0 || stride > int64_t(UINT32_MAX))
      return std::nullopt;
    int64_t linear = 1;
    while (linear * block < n && a[linear * block] == a[0] + linear * stride)
      ++linear;
    int64_t left = n / block, size = linear;
    while (left % size != 0)
      --size;
    sizes.push_back(size);
    strides.push_back(stride);
    block *= size;
  }
  StridedReading r;
  r.offset = a[0];
  r.sizes.assign(sizes.rbegin(), sizes.rend());
  r.strides.assign(strides.rbegin(), strides.rend());
  if (r.sizes.empty()) {
    r.sizes = {1};
    r.strides = {1};
  }
  // The greedy runs must describe every element.
  llvm::SmallVector<int64_t, 6> digit(r.sizes.size(), 0);
  int64_t at = r.offset;
  for (int64_t f = 0; f < n; ++f) {
    if (a[f] != at)
      return std::nullopt;
    for (size_t k = r.sizes.size(); k-- > 0;) {
      at += r.strides[k];
      if (++digit[k] < r.sizes[k])
        break;
      at -= r.strides[k] * r.sizes[k];
      digit[k] = 0;
    }
  }
  return r;
}

namespace {

using Run = std::pair<int64_t, int64_t>; // size, stride
using Runs = llvm::SmallVector<Run, 4>;  // outermost first

/// The reading's runs of each of the shape's four dimensions (a run split
/// where a dimension ends inside it), adjacent runs merged where linear.
std::optional<std::array<Runs, 4>> splitDims(const StridedReading &r,
                                             const std::array<int64_t, 4> &shape) {
  Runs runs;
  for (auto [size, stride] : llvm::zip(r.sizes, r.strides))
    if (size > 1)
      runs.push_back({size, stride});
  std::array<Runs, 4> dims;
  int64_t next = int64_t(runs.size()) - 1;
  for (int d = 3; d >= 0; --d) {
    Runs own;
    for (int64_t need = shape[d]; need > 1;) {
      if (next < 0)
        return std::nullopt;
      auto &[size, stride] = runs[next];
      if (size <= need) {
        if (need % size != 0)
          return std::nullopt;
        own.insert(own.begin(), {size, stride});
        need /= size;
        --next;
      } else {
        if (size % need != 0)
          return std::nullopt;
        own.insert(own.begin(), {need, stride});
        size /= need;
        stride *= need;
        need = 1;
      }
    }
    for (const Run &run : own) {
      if (!dims[d].empty() && dims[d].back().second == run.first * run.second)
        dims[d].back() = {dims[d].back().first * run.first, run.second};
      else
        dims[d].push_back(run);
    }
  }
  if (next >= 0)
    return std::nullopt;
  return dims;
}

/// Indices [idx, idx + len) of one dimension whose element offset is
/// `offset` + i * stride.
struct Piece {
  int64_t idx, len, offset, stride;
};

/// A range of a dimension in pieces that each lie in one innermost run;
/// with `laneGroups`, pieces of a dimension of several runs also stay within
/// one lane group (channels).
std::vector<Piece> pieces(const Runs &runs, Range range, bool laneGroups, bool unit) {
  if (runs.empty())
    return {{range.idx, range.len, 0, 1}};
  auto offsetOf = [&](int64_t i) {
    int64_t offset = 0;
    for (size_t k = runs.size(); k-- > 0;) {
      offset += (i % runs[k].first) * runs[k].second;
      i /= runs[k].first;
    }
    return offset;
  };
  bool linear = runs.size() == 1;
  int64_t inner = runs.back().first;
  std::vector<Piece> out;
  for (int64_t i = range.idx; i < range.end();) {
    int64_t end = range.end();
    if (unit)
      end = i + 1;
    if (!linear) {
      end = std::min(end, (i / inner + 1) * inner);
      if (laneGroups)
        end = std::min<int64_t>(end, (i / KILN_NPU_NUM + 1) * KILN_NPU_NUM);
    }
    out.push_back({i, end - i, offsetOf(i), runs.back().second});
    i = end;
  }
  return out;
}

} // namespace

std::optional<std::vector<kiln_gdma_cmd>>
lg::stridedTransfer(const StridedReading &reading, const std::array<int64_t, 4> &shape,
                    uint8_t dtype, uint32_t dsize, uint64_t ddr, uint32_t base, Slice holding,
                    Slice rows, bool toLmem) {
  std::optional<std::array<Runs, 4>> dims = splitDims(reading, shape);
  if (!dims)
    return std::nullopt;
  int64_t w = shape[3], planeH = holding.h.len;
  uint64_t plane = kiln_lmem_plane_stride(holding.h.len, w, dsize);
  std::vector<Piece> hs;
  // Whole planes are h * w contiguous elements in a lane: any two runs can
  // be their rows and columns.
  Runs planeRuns = (*dims)[2];
  for (const Run &run : (*dims)[3]) {
    if (!planeRuns.empty() && planeRuns.back().second == run.first * run.second)
      planeRuns.back() = {planeRuns.back().first * run.first, run.second};
    else
      planeRuns.push_back(run);
  }
  int64_t wStride = 1;
  if (rows.h.len == shape[2] && holding.h.len == shape[2] && planeRuns.size() <= 2) {
    if (planeRuns.size() == 2) {
      hs.push_back({rows.h.idx, planeRuns[0].first, 0, planeRuns[0].second});
      planeRuns.erase(planeRuns.begin());
    } else {
      hs.push_back({rows.h.idx, 1, 0, 1});
    }
    w = planeRuns.empty() ? 1 : planeRuns[0].first;
    wStride = planeRuns.empty() ? 1 : planeRuns[0].second;
    planeH = hs[0].len;
  } else {
    if ((*dims)[3].size() > 1)
      return std::nullopt;
    if (!(*dims)[3].empty())
      wStride = (*dims)[3][0].second;
    hs = pieces((*dims)[2], rows.h, false, false);
  }
  std::vector<Piece> cs = pieces((*dims)[1], rows.c, true, false);
  // Channel pieces fill one lane group's planes each, so one batch at a time.
  std::vector<Piece> ns = pieces((*dims)[0], rows.n, false, cs.size() > 1);
  uint64_t groups = (holding.c.len + KILN_NPU_NUM - 1) / KILN_NPU_NUM;
  std::vector<kiln_gdma_cmd> cmds;
  for (const Piece &n : ns)
    for (const Piece &c : cs)
      for (const Piece &h : hs) {
        kiln_gdma_cmd cmd{};
        cmd.dir = toLmem ? KILN_GDMA_DDR_TO_LMEM : KILN_GDMA_LMEM_TO_DDR;
        cmd.dtype = dtype;
        cmd.n = n.len;
        cmd.c = c.len;
        cmd.h = h.len;
        cmd.w = w;
        cmd.lmem_plane_h = planeH;
        // Parts of the holding start on lane groups; a piece may start inside one.
        int64_t group = c.idx / KILN_NPU_NUM * KILN_NPU_NUM;
        cmd.lmem_lane = c.idx - group;
        uint64_t lmem = base +
                        ((n.idx - holding.n.idx) * groups + (group - holding.c.idx) / KILN_NPU_NUM) *
                            plane +
                        (h.idx - holding.h.idx) * w * dsize;
        uint64_t at = ddr + (reading.offset + n.offset + c.offset + h.offset) * dsize;
        cmd.src_addr = toLmem ? at : lmem;
        cmd.dst_addr = toLmem ? lmem : at;
        uint32_t strides[4] = {uint32_t(n.stride), uint32_t(c.stride), uint32_t(h.stride),
                               uint32_t(wStride)};
        std::copy(strides, strides + 4, toLmem ? cmd.src_stride : cmd.dst_stride);
        cmds.push_back(cmd);
      }
  return cmds;
}

std::optional<uint64_t> lg::stridedTransferCycles(const StridedReading &reading,
                                                  const std::array<int64_t, 4> &shape,
                                                  uint8_t dtype, uint32_t dsize, bool toLmem) {
  Slice whole{{0, shape[0]}, {0, shape[1]}, {0, shape[2]}, {0, shape[3]}};
  auto cmds = stridedTransfer(reading, shape, dtype, dsize, 0, 0, whole, whole, toLmem);
  if (!cmds)
    return std::nullopt;
  uint64_t cycles = 0;
  for (const kiln_gdma_cmd &cmd : *cmds)
    cycles += kiln_gdma_cycles(&cmd);
  return cycles;
}
