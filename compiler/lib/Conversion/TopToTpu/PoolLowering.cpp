#include "kiln/abi/cost.h"
#include "Patterns.h"

using namespace mlir;
using namespace kiln;

namespace {
/// ceil_mode becomes extra bottom/right padding, so the chip op only knows
/// floor semantics; avg pool still divides by the valid input count.
template <typename TopPool, tpu::PoolKind Kind>
struct PoolLowering : public tpu::TopLowering<TopPool> {
  using tpu::TopLowering<TopPool>::TopLowering;
  using OpAdaptor = typename tpu::TopLowering<TopPool>::OpAdaptor;
  LogicalResult lower(TopPool op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(adaptor.getInput().getType()).getShape();
    auto out = cast<RankedTensorType>(op.getType()).getShape();
    auto k = op.getKernelShape();
    auto s = op.getStrides();
    SmallVector<int64_t> pads(op.getPads());
    for (int i = 0; i < 2; ++i) {
      int64_t needed = (out[2 + i] - 1) * s[i] + k[i] - in[2 + i] - pads[i];
      pads[2 + i] = std::max(pads[2 + i], needed);
    }
    rewriter.replaceOpWithNewOp<tpu::Pool2DOp>(
        op, op.getType(), adaptor.getInput(), Kind, op.getKernelShape(),
        op.getStrides(), pads, op.getCountIncludePad(), false,
        tpu::RequantAttr());
    return success();
  }
};

/// The pool datapath computes an EU row of outputs at a time, each window
/// tap by tap (cost.h): one H x W window to one output per channel leaves
/// all but one of a row's outputs idle. A large global average pool is two
/// pools: k x W windows to an [H/k, 1] column of averages, which a second
/// pool averages (all windows hold k * W elements, so the mean of the means
/// is the mean). k is the divisor of H with the fewest modelled cycles.
/// Float only: in INT8 each pool requantizes.
int64_t firstStageRows(int64_t h, int64_t w, uint32_t dtype) {
  uint64_t eu = kiln_eu_elems(dtype);
  auto cycles = [&](int64_t k) {
    uint64_t first = kiln_ceil_div(h / k, eu) * k * w / 2;
    return k == h ? first : first + kiln_ceil_div(1, eu) * (h / k) / 2 + KILN_TIU_CMD_OVERHEAD;
  };
  int64_t best = h;
  for (int64_t k = 1; k < h; ++k)
    if (h % k == 0 && cycles(k) < cycles(best))
      best = k;
  return best;
}

struct GlobalAvgPoolLowering : public tpu::TopLowering<top::GlobalAvgPoolOp> {
  using TopLowering::TopLowering;
  LogicalResult lower(top::GlobalAvgPoolOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(adaptor.getInput().getType()).getShape();
    // DType values are firmware-abi's kiln_dtype.
    uint32_t chipDtype = uint32_t(top::runDtype(op).value_or(top::DType::F32));
    int64_t k = chipDtype == KILN_DTYPE_INT8 ? in[2] : firstStageRows(in[2], in[3], chipDtype);
    int64_t pads[4] = {0, 0, 0, 0};
    Value x = adaptor.getInput();
    if (k < in[2]) {
      int64_t kernel[2] = {k, in[3]};
      auto type = RankedTensorType::get({in[0], in[1], in[2] / k, 1}, rewriter.getF32Type());
      x = rewriter.create<tpu::Pool2DOp>(op.getLoc(), type, x, tpu::PoolKind::Avg, kernel,
                                         kernel, pads, false, false, tpu::RequantAttr());
    }
    auto rest = cast<RankedTensorType>(x.getType()).getShape();
    int64_t kernel[2] = {rest[2], rest[3]};
    int64_t strides[2] = {1, 1};
    rewriter.replaceOpWithNewOp<tpu::Pool2DOp>(
        op, op.getType(), x, tpu::PoolKind::Avg, kernel, strides,
        pads, false, false, tpu::RequantAttr());
    return success();
  }
};
} // namespace

void tpu::populatePoolLowering(RewritePatternSet &patterns) {
  patterns.add<PoolLowering<top::MaxPoolOp, tpu::PoolKind::Max>,
               PoolLowering<top::AvgPoolOp, tpu::PoolKind::Avg>,
               GlobalAvgPoolLowering>(patterns.getContext());
}
