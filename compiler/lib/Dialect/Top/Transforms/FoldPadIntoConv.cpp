//===- FoldPadIntoConv.cpp - Zero pads become the conv's own padding ------===//
//
// upfirdn2d (StyleGAN2's FIR filters) and many exporters write an explicit
// zero Pad in front of a conv. A conv pads with zeros anyway, and on the chip
// its padding costs nothing (the window just reads fewer rows), while a
// standalone Pad is a DDR-to-DDR copy of the whole tensor.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Top/Transforms/Passes.h"

namespace kiln::top {
#define GEN_PASS_DEF_TOPFOLDPADINTOCONV
#include "kiln/Dialect/Top/Transforms/Passes.h.inc"
} // namespace kiln::top

using namespace mlir;
using namespace kiln::top;

namespace {

/// A 4-D constant-zero pad of H and W only: [top, left, bottom, right].
std::optional<SmallVector<int64_t, 4>> spatialZeroPads(PadOp pad) {
  ArrayRef<int64_t> p = pad.getPads();
  if (p.size() != 8 || pad.getMode() != PadMode::Constant ||
      pad.getValue().convertToDouble() != 0.0)
    return std::nullopt;
  if (p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0)
    return std::nullopt;
  if (llvm::any_of(p, [](int64_t v) { return v < 0; }))
    return std::nullopt;
  return SmallVector<int64_t, 4>{p[2], p[3], p[6], p[7]};
}

struct FoldPadIntoConvPass
    : public kiln::top::impl::TopFoldPadIntoConvBase<FoldPadIntoConvPass> {
  void runOnOperation() override {
    SmallVector<ConvOp> convs;
    getOperation().walk([&](ConvOp conv) { convs.push_back(conv); });
    for (ConvOp conv : convs) {
      auto pad = conv.getInput().getDefiningOp<PadOp>();
      if (!pad)
        continue;
      auto extra = spatialZeroPads(pad);
      if (!extra)
        continue;
      // Kept below the dilated kernel, so every window still reads input.
      SmallVector<int64_t> pads(conv.getPads());
      ArrayRef<int64_t> k = conv.getKernelShape(), d = conv.getDilations();
      bool fits = true;
      for (int i = 0; i < 4; ++i) {
        pads[i] += (*extra)[i];
        fits &= pads[i] < d[i % 2] * (k[i % 2] - 1) + 1;
      }
      if (!fits)
        continue;
      conv.setPads(pads);
      conv.getInputMutable().assign(pad.getInput());
      if (pad->use_empty())
        pad->erase();
    }
  }
};
} // namespace
