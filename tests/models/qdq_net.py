#!/usr/bin/python3
"""QDQ test model: a fake-quantized CNN exported with QuantizeLinear/DequantizeLinear.

A small CNN, 1x3x64x64: conv-BN-ReLU stem, a residual block (two 3x3
conv-BN, add, ReLU), a depthwise 3x3/2 conv-BN-ReLU, a pointwise 1x1
conv-BN-ReLU, a 2x2 average pool, a global average pool and a 1x1 conv head.
BatchNorms are folded into their convs (as before quantization-aware
training), then torch.ao.quantization fake quantization is applied:
per-channel symmetric int8 weights (FakeQuantize with a
PerChannelMinMaxObserver) and per-tensor affine activations after each block
(int8; uint8 after the stem's ReLU and on the network input, so both ONNX
zero-point types appear). Observers are calibrated on a few random batches,
then frozen. torch.onnx.export (opset 13) writes float weights ->
QuantizeLinear -> DequantizeLinear and a QDQ pair on every quantized
activation; the reference is the fake-quantized PyTorch output, i.e. the
QDQ model's own float semantics. Run with /usr/bin/python3.
"""
import os

import torch
from torch import nn
from torch.ao import quantization as tq
from torch.nn.utils.fusion import fuse_conv_bn_eval

from common import format_ops, generate, op_counts, seeded_model


def weight_fq() -> tq.FakeQuantize:
    return tq.FakeQuantize(observer=tq.PerChannelMinMaxObserver, quant_min=-128,
                           quant_max=127, dtype=torch.qint8,
                           qscheme=torch.per_channel_symmetric, ch_axis=0)


def act_fq(unsigned: bool = False) -> tq.FakeQuantize:
    if unsigned:
        return tq.FakeQuantize(observer=tq.MinMaxObserver, quant_min=0, quant_max=255,
                               dtype=torch.quint8, qscheme=torch.per_tensor_affine)
    return tq.FakeQuantize(observer=tq.MinMaxObserver, quant_min=-128, quant_max=127,
                           dtype=torch.qint8, qscheme=torch.per_tensor_affine)


class QConv(nn.Module):
    """Conv2d (+ BatchNorm folded in) with a fake-quantized weight."""

    def __init__(self, cin, cout, k, stride=1, groups=1, bn=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=not bn)
        self.bn = nn.BatchNorm2d(cout) if bn else None
        self.wfq = weight_fq()

    def fold_bn(self) -> None:
        if self.bn is not None:
            self.conv = fuse_conv_bn_eval(self.conv.eval(), self.bn.eval())
            self.bn = None

    def forward(self, x):
        assert self.bn is None, "fold_bn() first"
        w = self.wfq(self.conv.weight)
        return nn.functional.conv2d(x, w, self.conv.bias, self.conv.stride,
                                    self.conv.padding, self.conv.dilation,
                                    self.conv.groups)


class QdqNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_fq = act_fq(unsigned=True)
        self.stem = QConv(3, 16, 3)
        self.stem_fq = act_fq(unsigned=True)
        self.res1 = QConv(16, 16, 3)
        self.res1_fq = act_fq()
        self.res2 = QConv(16, 16, 3)
        self.res2_fq = act_fq()
        self.add_fq = act_fq()
        self.dw = QConv(16, 16, 3, stride=2, groups=16)
        self.dw_fq = act_fq()
        self.pw = QConv(16, 32, 1)
        self.pw_fq = act_fq()
        self.pool = nn.AvgPool2d(2)
        self.pool_fq = act_fq()
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.gap_fq = act_fq()
        self.head = QConv(32, 10, 1, bn=False)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.in_fq(x)
        x = self.stem_fq(self.relu(self.stem(x)))
        y = self.res1_fq(self.relu(self.res1(x)))
        y = self.res2_fq(self.res2(y))
        x = self.add_fq(self.relu(x + y))
        x = self.dw_fq(self.relu(self.dw(x)))
        x = self.pw_fq(self.relu(self.pw(x)))
        x = self.pool_fq(self.pool(x))
        x = self.gap_fq(self.gap(x))
        return torch.flatten(self.head(x), 1)


def build_model(seed: int) -> nn.Module:
    model = seeded_model(QdqNet, seed)
    for m in model.modules():
        if isinstance(m, QConv):
            m.fold_bn()
    # Calibrate: observers on, fake quantization off, a few random batches.
    model.apply(tq.disable_fake_quant)
    model.apply(tq.enable_observer)
    calib = torch.Generator().manual_seed(seed + 3)
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(2, 3, 64, 64, generator=calib))
    model.apply(tq.disable_observer)
    model.apply(tq.enable_fake_quant)
    return model


def main() -> None:
    # Without constant folding the weights stay float initializers feeding
    # QuantizeLinear, as QAT exports them. (The BatchNorms are folded already.)
    args, _, graph = generate(__doc__, build_model, (1, 3, 64, 64), ["logits"],
                              keep_batchnorm=False)
    ops = op_counts(graph)
    inits = {t.name for t in graph.graph.initializer}
    consts = {o for n in graph.graph.node if n.op_type == "Constant" for o in n.output}
    weight_q = sum(1 for n in graph.graph.node
                   if n.op_type == "QuantizeLinear" and n.input[0] in inits | consts)
    act_q = ops["QuantizeLinear"] - weight_q
    per_axis = sum(1 for n in graph.graph.node if n.op_type == "QuantizeLinear"
                   and any(a.name == "axis" for a in n.attribute))
    if weight_q != 6 or act_q != 9 or ops["DequantizeLinear"] != 15:
        raise SystemExit("qdq_net: expected 6 weight and 9 activation QDQ pairs, got "
                         "%d weight + %d activation QuantizeLinear, %d DequantizeLinear"
                         % (weight_q, act_q, ops["DequantizeLinear"]))
    print("qdq_net: %s ops: %s (QuantizeLinear: %d on weights, %d per-axis, %d on "
          "activations)" % (os.path.join(args.out, "model.onnx"), format_ops(ops), weight_q,
                            per_axis, act_q))


if __name__ == "__main__":
    main()
