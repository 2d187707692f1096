//===- StridedLoad.cpp - Loads that read a tensor through strides --------===//

#include "kiln/LayerGroup/StridedLoad.h"

#include "kiln/abi/chip.h"
#include "kiln/abi/cost.h"

#include <algorithm>

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
lg::stridedLoad(const StridedReading &reading, const std::array<int64_t, 4> &shape,
                uint8_t dtype, uint32_t dsize, uint64_t ddr, uint32_t base, Slice holding,
                Slice rows) {
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
        cmd.dir = KILN_GDMA_DDR_TO_LMEM;
        cmd.dtype = dtype;
        cmd.n = n.len;
        cmd.c = c.len;
        cmd.h = h.len;
        cmd.w = w;
        cmd.lmem_plane_h = planeH;
        // Parts of the holding start on lane groups; a piece may start inside one.
        int64_t group = c.idx / KILN_NPU_NUM * KILN_NPU_NUM;
        cmd.lmem_lane = c.idx - group;
        cmd.dst_addr = base +
                       ((n.idx - holding.n.idx) * groups + (group - holding.c.idx) / KILN_NPU_NUM) *
                           plane +
                       (h.idx - holding.h.idx) * w * dsize;
        cmd.src_addr = ddr + (reading.offset + n.offset + c.offset + h.offset) * dsize;
        uint32_t strides[4] = {uint32_t(n.stride), uint32_t(c.stride), uint32_t(h.stride),
                               uint32_t(wStride)};
        std::copy(strides, strides + 4, cmd.src_stride);
        cmds.push_back(cmd);
      }
  return cmds;
}

std::optional<uint64_t> lg::stridedLoadCycles(const StridedReading &reading,
                                              const std::array<int64_t, 4> &shape,
                                              uint8_t dtype, uint32_t dsize) {
  Slice whole{{0, shape[0]}, {0, shape[1]}, {0, shape[2]}};
  auto cmds = stridedLoad(reading, shape, dtype, dsize, 0, 0, whole, whole);
  if (!cmds)
    return std::nullopt;
  uint64_t cycles = 0;
  for (const kiln_gdma_cmd &cmd : *cmds)
    cycles += kiln_gdma_cycles(&cmd);
  return cycles;
}
