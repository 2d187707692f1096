//===- LmemAlloc.cpp - A layer group's LMEM layout ------------------------===//

#include "kiln/LayerGroup/LmemAlloc.h"

#include "kiln/Dialect/Tpu/IR/TpuOps.h"

#include "kiln/abi/chip.h"
#include "kiln/abi/cost.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace kiln;
using namespace kiln::lg;

namespace {

/// One buffer of a value and the positions it is live at.
struct Buffer {
  int val = 0, copy = 0;
  uint64_t bytes = 0;
  bool whole = false; ///< held or invariant: live for the whole group
  bool loaded = false; ///< a per-slice load writes it (the GDMA runs beside the TIU)
  bool gdma = false;  ///< a per-slice load or store touches it
  /// A held load: the prologue loads it while the TIU runs the first ops.
  bool heldLoad = false;
  /// First and last live position on a cycle of `period` positions; `last`
  /// may pass the period (a store one step later).
  int64_t first = 0, last = 0;
  uint64_t at = 0;
  bool placed = false;
};

struct Lifetimes {
  int64_t period = 1;
  std::vector<Buffer> bufs;

  Lifetimes(const GroupGraph &g, const GroupSlicing &s, int64_t buffers, Layout layout) {
    int64_t step = stepPositions(g);
    period = step * buffers;
    std::vector<Lifetime> live = lg::lifetimes(g, s, buffers, layout);
    for (size_t v = 0; v < g.vals.size(); ++v) {
      bool whole = s.invariant[v];
      int copies = whole || buffers == 1 ? 1 : 2;
      for (int b = 0; b < copies; ++b) {
        Buffer buf;
        buf.val = v;
        buf.copy = b;
        buf.bytes = s.laneBytes(g, v);
        buf.whole = whole;
        buf.loaded = g.vals[v].external && !whole;
        buf.gdma = buf.loaded || g.vals[v].escaping;
        buf.heldLoad = g.vals[v].external && whole;
        buf.first = b * step + live[v].first;
        buf.last = b * step + live[v].last;
        bufs.push_back(buf);
      }
    }
  }

  /// Whether an instance of the buffer is live at position t of the cycle.
  bool liveAt(const Buffer &b, int64_t t) const {
    if (b.whole)
      return true;
    for (int64_t shift : {-period, int64_t(0), period})
      if (b.first <= t + shift && t + shift <= b.last)
        return true;
    return false;
  }

  /// Whether some instances of the two are live at the same position.
  bool together(const Buffer &a, const Buffer &b) const {
    return tpu::liveTogether(a.first, a.last, a.whole, b.first, b.last, b.whole, period);
  }
};

/// The lowest (or highest) offset where `bytes` overlap none of `live`.
std::optional<uint64_t> lowestOrHighestFree(uint64_t bytes, std::vector<const Buffer *> &live,
                                            bool highest) {
  const uint64_t cap = KILN_LMEM_BYTES_PER_LANE;
  if (!highest) {
    llvm::sort(live, [](const Buffer *a, const Buffer *b) { return a->at < b->at; });
    uint64_t at = 0;
    for (const Buffer *o : live) {
      if (o->at >= at + bytes)
        break;
      at = std::max(at, o->at + o->bytes);
    }
    return at + bytes <= cap ? std::optional<uint64_t>(at) : std::nullopt;
  }
  llvm::sort(live, [](const Buffer *a, const Buffer *b) {
    return a->at + a->bytes > b->at + b->bytes;
  });
  uint64_t top = cap;
  for (const Buffer *o : live) {
    if (top < bytes)
      return std::nullopt;
    if (o->at + o->bytes <= top - bytes)
      break;
    top = std::min(top, o->at);
  }
  return top >= bytes ? std::optional<uint64_t>(top - bytes) : std::nullopt;
}

/// The lowest free offset where `buf` shares the fewest banks with the live
/// buffers when one of the two is a per-slice load or store, or a held load
/// and the other a buffer the TIU writes: there the GDMA and the TIU would
/// meet.
std::optional<uint64_t> fewestSharedBanks(const Buffer &buf, std::vector<const Buffer *> &live) {
  // Per bank, the live buffers touching it that would meet `buf`.
  unsigned users[KILN_LMEM_BANKS] = {};
  for (const Buffer *o : live)
    if (buf.gdma || o->gdma || buf.heldLoad != o->heldLoad) {
      uint32_t mask = kiln_lmem_bank_mask(o->at, o->at + o->bytes);
      for (unsigned b = 0; b < KILN_LMEM_BANKS; ++b)
        users[b] += (mask >> b) & 1;
    }
  std::optional<uint64_t> best;
  unsigned bestPenalty = 0;
  auto consider = [&](uint64_t at) {
    uint32_t mask = kiln_lmem_bank_mask(at, at + buf.bytes);
    unsigned penalty = 0;
    for (unsigned b = 0; b < KILN_LMEM_BANKS; ++b)
      penalty += ((mask >> b) & 1) * users[b];
    if (!best || penalty < bestPenalty || (penalty == bestPenalty && at < *best)) {
      best = at;
      bestPenalty = penalty;
    }
  };
  // In each free gap: its ends and the bank boundaries between.
  auto gap = [&](uint64_t lo, uint64_t hi) {
    if (hi < lo + buf.bytes)
      return;
    consider(lo);
    consider(hi - buf.bytes);
    for (uint64_t at = kiln_ceil_div(lo, KILN_LMEM_BANK_BYTES) * KILN_LMEM_BANK_BYTES;
         at + buf.bytes <= hi; at += KILN_LMEM_BANK_BYTES)
      consider(at);
  };
  llvm::sort(live, [](const Buffer *a, const Buffer *b) { return a->at < b->at; });
  uint64_t lo = 0;
  for (const Buffer *o : live) {
    if (o->at > lo)
      gap(lo, o->at);
    lo = std::max(lo, o->at + o->bytes);
  }
  gap(lo, KILN_LMEM_BYTES_PER_LANE);
  return best;
}

/// Greedy placement, largest buffers first (held ones before all): each at
/// the offset `layout` prefers among those free of buffers live with it.
std::optional<Placement> placeByLifetime(const GroupGraph &g, const GroupSlicing &s,
                                         int64_t buffers, Layout layout) {
  Lifetimes life(g, s, buffers, layout);
  std::vector<Buffer> &bufs = life.bufs;
  // No placement beats the bytes live at one position.
  std::vector<uint64_t> liveBytes(life.period);
  for (const Buffer &buf : bufs)
    for (int64_t t = 0; t < life.period; ++t)
      if (life.liveAt(buf, t))
        liveBytes[t] += buf.bytes;
  if (*llvm::max_element(liveBytes) > KILN_LMEM_BYTES_PER_LANE)
    return std::nullopt;
  std::vector<size_t> order(bufs.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (bufs[a].whole != bufs[b].whole)
      return bufs[a].whole;
    return bufs[a].bytes > bufs[b].bytes;
  });
  bool banks = layout == Layout::LifetimeBanks || layout == Layout::LifetimePipelined;
  std::vector<const Buffer *> live;
  for (size_t i : order) {
    Buffer &buf = bufs[i];
    buf.placed = true;
    if (buf.bytes == 0)
      continue;
    live.clear();
    for (const Buffer &o : bufs)
      if (&o != &buf && o.placed && o.bytes && life.together(buf, o))
        live.push_back(&o);
    std::optional<uint64_t> at =
        banks ? fewestSharedBanks(buf, live)
              : lowestOrHighestFree(buf.bytes, live,
                                    layout == Layout::LifetimeSplit && g.vals[buf.val].external);
    if (!at)
      return std::nullopt;
    buf.at = *at;
  }
  Placement p;
  p.layout = layout;
  p.lmem.assign(g.vals.size(), {0, 0});
  p.ddr.assign(g.vals.size(), 0);
  for (const Buffer &buf : bufs) {
    p.lmem[buf.val][buf.copy] = buf.at;
    if (buf.copy == 0)
      p.lmem[buf.val][1] = buf.at; // one buffer: the same offset twice
  }
  return p;
}

} // namespace

std::vector<Lifetime> lg::lifetimes(const GroupGraph &g, const GroupSlicing &s, int64_t buffers,
                                    Layout layout) {
  size_t nv = g.vals.size();
  int64_t step = stepPositions(g);
  // Within a step: loads at 0, node n at 1 + n, stores at step - 1.
  std::vector<int64_t> write(nv, 0), lastUse(nv, 0);
  for (auto [n, node] : llvm::enumerate(g.nodes))
    write[node.result] = lastUse[node.result] = 1 + n;
  for (auto [n, node] : llvm::enumerate(g.nodes))
    for (int v : node.operands)
      if (v >= 0)
        lastUse[v] = std::max<int64_t>(lastUse[v], 1 + n);
  // Pipelined: a slice's loads may run while the slice before computes
  // (with two buffers), so their bytes are kept from that slice on.
  bool earlyLoads = layout == Layout::LifetimePipelined && buffers == 2;
  std::vector<Lifetime> live(nv);
  for (size_t v = 0; v < nv; ++v) {
    if (s.invariant[v]) {
      live[v] = {0, step * buffers - 1};
      continue;
    }
    // Slice k's store is emitted with slice k + buffers - 1's.
    if (g.vals[v].escaping)
      lastUse[v] = std::max(lastUse[v], (buffers - 1) * step + step - 1);
    live[v] = {write[v], lastUse[v]};
    if (earlyLoads && g.vals[v].external)
      live[v].first -= step - 1;
  }
  return live;
}

std::optional<Placement> lg::placeInLmem(const GroupGraph &g, const GroupSlicing &s,
                                         int64_t buffers, Layout layout) {
  if (layout >= Layout::Lifetime)
    return placeByLifetime(g, s, buffers, layout);
  Placement p;
  p.layout = layout;
  p.lmem.resize(g.vals.size());
  p.ddr.assign(g.vals.size(), 0);
  uint64_t bottom = 0, top = KILN_LMEM_BYTES_PER_LANE;
  for (size_t v = 0; v < g.vals.size(); ++v) {
    bool single = s.invariant[v] || buffers == 1;
    uint64_t bytes = s.laneBytes(g, v), copies = single ? 1 : 2;
    uint64_t at[2] = {0, 0};
    if (layout == Layout::Split && g.vals[v].external) {
      for (uint64_t b = 0; b < copies; ++b) {
        if (top < bottom + bytes)
          return std::nullopt;
        top -= bytes;
        at[b] = top;
      }
    } else {
      for (uint64_t b = 0; b < copies; ++b) {
        if (layout == Layout::BankAligned)
          bottom = kiln_ceil_div(bottom, KILN_LMEM_BANK_BYTES) * KILN_LMEM_BANK_BYTES;
        at[b] = bottom;
        bottom += bytes;
        if (bottom > top)
          return std::nullopt;
      }
    }
    p.lmem[v] = {(uint32_t)at[0], (uint32_t)(single ? at[0] : at[1])};
  }
  return p;
}

bool lg::fitsLmem(const GroupGraph &g, const GroupSlicing &s, int64_t buffers) {
  return lmemLaneBytes(g, s, buffers) <= KILN_LMEM_BYTES_PER_LANE ||
         placeByLifetime(g, s, buffers, Layout::Lifetime).has_value();
}

std::optional<Placement> lg::placeSmallest(const GroupGraph &g, const GroupSlicing &s,
                                           int64_t buffers) {
  if (lmemLaneBytes(g, s, buffers) <= KILN_LMEM_BYTES_PER_LANE)
    return placeInLmem(g, s, buffers, Layout::Packed);
  return placeByLifetime(g, s, buffers, Layout::Lifetime);
}
