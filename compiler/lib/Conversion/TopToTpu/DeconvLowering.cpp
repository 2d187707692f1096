//===- DeconvLowering.cpp - ConvTranspose ---------------------------------===//
//
// The chip reads deconv filters as [oc, ic/group, kh, kw]. A weight filter is
// reordered here at compile time; a dynamic filter must have been reordered
// on the device by top-reorder-deconv-filter.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
struct DeconvLowering : public tpu::TopLowering<top::DeconvOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::DeconvOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Value filter = adaptor.getFilter();
    if (!op.getFilterReordered()) {
      auto weight = filter.getDefiningOp<top::WeightOp>();
      if (!weight)
        return rewriter.notifyMatchFailure(op, "dynamic filter not reordered");
      auto shape = cast<RankedTensorType>(weight.getType()).getShape();
      int64_t g = static_cast<int64_t>(op.getGroup());
      int64_t ic = shape[0], ocg = shape[1], icg = ic / g, k = shape[2] * shape[3];
      std::vector<float> src = top::readWeight(weight), dst(src.size());
      // [g, ic/g, oc/g, k] -> [g, oc/g, ic/g, k]
      for (int64_t gi = 0; gi < g; ++gi)
        for (int64_t i = 0; i < icg; ++i)
          for (int64_t o = 0; o < ocg; ++o)
            for (int64_t t = 0; t < k; ++t)
              dst[((gi * ocg + o) * icg + i) * k + t] =
                  src[((gi * icg + i) * ocg + o) * k + t];
      std::string name = locName(weight.getLoc());
      name = name.empty() ? "deconv_filter" : name + "_oihw";
      filter = top::createWeight(rewriter, weight.getLoc(),
                                 {g * ocg, icg, shape[2], shape[3]}, dst, name);
    }
    rewriter.replaceOpWithNewOp<tpu::Deconv2DOp>(
        op, op.getType(), adaptor.getInput(), filter, adaptor.getBias(),
        op.getKernelShapeAttr(), op.getStridesAttr(), op.getPadsAttr(),
        op.getDilationsAttr(), op.getGroupAttr(), op.getDoReluAttr());
    return success();
  }
};
} // namespace

void tpu::populateDeconvLowering(RewritePatternSet &patterns) {
  patterns.add<DeconvLowering>(patterns.getContext());
}
