#!/usr/bin/python3
"""PP-OCRv4 mobile text detector and recognizer: exports model.onnx, input.npz
and reference.npz.

The architectures of PaddleOCR's public sources at the published widths, as
the deployed (re-parameterized) inference models, in PyTorch with the op
forms Paddle2ONNX emits at opset 11:

--arch det (ch_PP-OCRv4_det: PPLCNetV3 scale 0.75 det=True, RSEFPN 96
  shortcut, DBHead), 1x3x640x640 -> shrink map 1x1x640x640:
  - backbone (ppocr/modeling/backbones/rec_lcnetv3.py): a 3x3 s2 ConvBN stem
    (no activation), then LCNetV3 blocks of 16..384 channels: a depthwise
    LearnableRepLayer (3x3 or 5x5; re-parameterized, so one Conv with bias)
    and a pointwise one; each followed by a LearnableAffineBlock (a scalar
    Mul and Add) and, unless the stride is 2, HardSwish and another affine
    block; squeeze-and-excitation (HardSigmoid, slope 1/6) in the first two
    blocks of the last stage; 1x1 convs to 12, 18, 42 and 360 channels;
  - neck (ppocr/modeling/necks/db_fpn.py RSEFPN): per scale a 1x1 conv to 96
    channels with an SE branch added back (HardSigmoid slope 0.2, offset
    0.5), a top-down path with nearest x2 Resize, 3x3 convs to 24 channels
    with SE, nearest Resize x8/x4/x2, Concat to 96 channels at 1/4;
  - head (det_db_head.py, the binarize branch inference uses): 3x3 conv,
    BatchNorm, ReLU, ConvTranspose 2x2 s2, BatchNorm, ReLU, ConvTranspose
    2x2 s2 to one channel, Sigmoid.
--arch rec (ch_PP-OCRv4_rec's CTC branch: PPLCNetV3 scale 0.95, SVTR neck,
  CTC head over ppocr_keys_v1's 6623 characters + blank + space = 6625
  classes), 1x3x48x320 -> probabilities 1x40x6625:
  - backbone as above with the recognizer's (2,1)/(1,2) strides, 16..480
    channels, then AveragePool [3,2];
  - neck (ppocr/modeling/necks/rnn.py EncoderWithSVTR, dims 120, depth 2,
    kernel [1,3], use_guide): ConvBN+Swish (x * Sigmoid) 480->60 [1,3] and
    60->120, flatten to a [1,40,120] sequence, two SVTR global-attention
    blocks (rec_svtrnet.py Block: LayerNorm eps 1e-5, 8 heads, qkv Linear
    with the traced reshape (B, N, 3, heads, C/heads) and transpose
    (2,0,3,1,4), Softmax, proj; an MLP 120->240->120 with GELU, erf form, as
    SVTRNet's blocks use - PP-OCRv4's neck uses Swish there), LayerNorm eps
    1e-6, back to [1,120,1,40], ConvBN+Swish 120->480, Concat with the
    backbone's output, ConvBN+Swish 960->60 [1,3] and 60->120;
  - head: squeeze and transpose to [1,40,120], Linear 120->6625 (MatMul +
    Add), Softmax over the classes.

Paddle2ONNX's forms: HardSwish as Add(3) -> Clip(0,6) -> Mul -> Div(6);
HardSigmoid as the ONNX op (slope 1/6) and, in the neck, as Mul(0.2) ->
Add(0.5) -> Clip(0,1); Swish as x * Sigmoid(x); LayerNorm decomposed
(opset 11 has no LayerNormalization); Linear as MatMul + Add; BatchNorm kept
as BatchNormalization (kiln folds it). Random weights (He-scaled), seeded
random BatchNorm statistics and affine-block scalars, so that every node does
real work. Run with /usr/bin/python3 (Debian's torch, onnx, numpy).
"""
import math
import os

import torch
import torch.nn.functional as F
from torch import nn

from common import deterministic, export_with_batchnorm, parse_args, randomize_batchnorm

# (kernel, in_c, out_c, stride, use_se) per stage: rec_lcnetv3.py.
NET_CONFIG_DET = {
    "blocks2": [[3, 16, 32, 1, False]],
    "blocks3": [[3, 32, 64, 2, False], [3, 64, 64, 1, False]],
    "blocks4": [[3, 64, 128, 2, False], [3, 128, 128, 1, False]],
    "blocks5": [[3, 128, 256, 2, False]] + [[5, 256, 256, 1, False]] * 4,
    "blocks6": [[5, 256, 512, 2, True], [5, 512, 512, 1, True],
                [5, 512, 512, 1, False], [5, 512, 512, 1, False]],
}
NET_CONFIG_REC = {
    "blocks2": [[3, 16, 32, 1, False]],
    "blocks3": [[3, 32, 64, 1, False], [3, 64, 64, 1, False]],
    "blocks4": [[3, 64, 128, (2, 1), False], [3, 128, 128, 1, False]],
    "blocks5": [[3, 128, 256, (1, 2), False]] + [[5, 256, 256, 1, False]] * 4,
    "blocks6": [[5, 256, 512, (2, 1), True], [5, 512, 512, 1, True],
                [5, 512, 512, (2, 1), False], [5, 512, 512, 1, False]],
}
REC_CLASSES = 6625


def make_divisible(v, divisor=16):
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def hardswish(x):
    """Paddle2ONNX's HardSwish below opset 14."""
    return x * torch.clamp(x + 3.0, 0.0, 6.0) / 6.0


class Affine(nn.Module):
    """LearnableAffineBlock: a learned scalar scale and bias."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return self.scale * x + self.bias


class RepLayer(nn.Module):
    """LearnableRepLayer after rep(): one Conv with bias, an affine block, and
    HardSwish + affine unless the stride is 2."""

    def __init__(self, cin, cout, k, stride, groups=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups)
        self.lab = Affine()
        self.act = stride != 2
        self.act_lab = Affine()

    def forward(self, x):
        x = self.lab(self.conv(x))
        return self.act_lab(hardswish(x)) if self.act else x


class SqueezeExcite(nn.Module):
    """Squeeze-and-excitation: x * gate(conv2(relu(conv1(avgpool(x))))), the
    gate a HardSigmoid in one of its two export forms."""

    def __init__(self, c, gate):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c // 4, 1)
        self.conv2 = nn.Conv2d(c // 4, c, 1)
        self.gate = gate

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.conv2(F.relu(self.conv1(s))))


def backbone_gate(s):
    """rec_lcnetv3.SELayer: Paddle's Hardsigmoid (slope 1/6), the ONNX op."""
    return F.hardsigmoid(s)


def neck_gate(s):
    """db_fpn.SEModule: hardsigmoid(slope 0.2, offset 0.5), decomposed."""
    return torch.clamp(s * 0.2 + 0.5, 0.0, 1.0)


class LCNetV3Block(nn.Module):
    def __init__(self, cin, cout, stride, k, use_se):
        super().__init__()
        self.dw = RepLayer(cin, cin, k, stride, groups=cin)
        self.se = SqueezeExcite(cin, backbone_gate) if use_se else None
        self.pw = RepLayer(cin, cout, 1, 1)

    def forward(self, x):
        x = self.dw(x)
        if self.se is not None:
            x = self.se(x)
        return self.pw(x)


class PPLCNetV3(nn.Module):
    def __init__(self, scale, det):
        super().__init__()
        self.det = det
        config = NET_CONFIG_DET if det else NET_CONFIG_REC
        self.conv1 = nn.Conv2d(3, make_divisible(16 * scale), 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(make_divisible(16 * scale))
        self.stages = nn.ModuleList()
        for name in ("blocks2", "blocks3", "blocks4", "blocks5", "blocks6"):
            self.stages.append(nn.Sequential(*[
                LCNetV3Block(make_divisible(cin * scale), make_divisible(cout * scale), s, k, se)
                for k, cin, cout, s, se in config[name]]))
        if det:
            widths = [make_divisible(config[n][-1][2] * scale)
                      for n in ("blocks3", "blocks4", "blocks5", "blocks6")]
            self.outs = nn.ModuleList(nn.Conv2d(c, int(m * scale), 1)
                                      for c, m in zip(widths, (16, 24, 56, 480)))
            self.out_channels = [int(m * scale) for m in (16, 24, 56, 480)]
        else:
            self.out_channels = make_divisible(512 * scale)

    def forward(self, x):
        x = self.stages[0](self.bn1(self.conv1(x)))
        feats = []
        for stage in self.stages[1:]:
            x = stage(x)
            feats.append(x)
        if self.det:
            return [conv(f) for conv, f in zip(self.outs, feats)]
        return F.avg_pool2d(x, [3, 2])


class RSELayer(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.in_conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.se = SqueezeExcite(cout, neck_gate)

    def forward(self, x):
        x = self.in_conv(x)
        return x + self.se(x)


class RSEFPN(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.ins = nn.ModuleList(RSELayer(c, out_channels, 1) for c in in_channels)
        self.inp = nn.ModuleList(RSELayer(out_channels, out_channels // 4, 3) for _ in in_channels)

    def forward(self, feats):
        c2, c3, c4, c5 = feats
        in5, in4, in3, in2 = self.ins[3](c5), self.ins[2](c4), self.ins[1](c3), self.ins[0](c2)
        up = lambda t, s: F.interpolate(t, scale_factor=s, mode="nearest")
        out4 = in4 + up(in5, 2)
        out3 = in3 + up(out4, 2)
        out2 = in2 + up(out3, 2)
        p5 = up(self.inp[3](in5), 8)
        p4 = up(self.inp[2](out4), 4)
        p3 = up(self.inp[1](out3), 2)
        p2 = self.inp[0](out2)
        return torch.cat([p5, p4, p3, p2], dim=1)


class DBHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c // 4, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c // 4)
        self.conv2 = nn.ConvTranspose2d(c // 4, c // 4, 2, 2)
        self.bn2 = nn.BatchNorm2d(c // 4)
        self.conv3 = nn.ConvTranspose2d(c // 4, 1, 2, 2)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return torch.sigmoid(self.conv3(x))


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = PPLCNetV3(0.75, det=True)
        self.neck = RSEFPN(self.backbone.out_channels, 96)
        self.head = DBHead(96)

    def forward(self, x):
        return self.head(self.neck(self.backbone(x)))


class ConvBNSwish(nn.Module):
    """rnn.py ConvBNLayer with act=nn.Swish."""

    def __init__(self, cin, cout, k):
        super().__init__()
        pad = (k[0] // 2, k[1] // 2) if isinstance(k, tuple) else k // 2
        self.conv = nn.Conv2d(cin, cout, k, padding=pad, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        x = self.bn(self.conv(x))
        return x * torch.sigmoid(x)


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape  # traced: Shape -> Gather, as the export of any PyTorch model
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = torch.softmax(q.matmul(k.transpose(2, 3)), dim=-1)
        return self.proj(attn.matmul(v).transpose(1, 2).reshape(b, n, c))


class SVTRBlock(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=2.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-5)
        self.mixer = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-5)
        self.fc1 = nn.Linear(dim, int(dim * mlp_ratio))
        self.fc2 = nn.Linear(int(dim * mlp_ratio), dim)

    def forward(self, x):
        x = x + self.mixer(self.norm1(x))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class EncoderWithSVTR(nn.Module):
    def __init__(self, cin, dims=120, depth=2, hidden=120, k=(1, 3)):
        super().__init__()
        self.conv1 = ConvBNSwish(cin, cin // 8, k)
        self.conv2 = ConvBNSwish(cin // 8, hidden, 1)
        self.blocks = nn.ModuleList(SVTRBlock(hidden, 8) for _ in range(depth))
        self.norm = nn.LayerNorm(hidden, eps=1e-6)
        self.conv3 = ConvBNSwish(hidden, cin, 1)
        self.conv4 = ConvBNSwish(2 * cin, cin // 8, k)
        self.conv1x1 = ConvBNSwish(cin // 8, dims, 1)

    def forward(self, x):
        h = x
        z = self.conv2(self.conv1(x))
        b, c, hh, ww = z.shape
        z = z.flatten(2).transpose(1, 2)
        for blk in self.blocks:
            z = blk(z)
        z = self.norm(z)
        z = z.reshape(b, hh, ww, c).permute(0, 3, 1, 2)
        z = torch.cat([h, self.conv3(z)], dim=1)
        return self.conv1x1(self.conv4(z))


class Recognizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = PPLCNetV3(0.95, det=False)
        self.neck = EncoderWithSVTR(self.backbone.out_channels)
        self.fc = nn.Linear(120, REC_CLASSES)

    def forward(self, x):
        x = self.neck(self.backbone(x))
        x = x.squeeze(2).permute(0, 2, 1)  # Im2Seq
        return torch.softmax(self.fc(x), dim=2)


class Classifier(nn.Module):
    """The pipeline's text-line direction classifier (0 or 180 degrees; the
    role of PaddleOCR's ch_ppocr_mobile_v2.0_cls) on the recognizer's
    backbone at scale 0.25: 1x3x48x192 -> global average pool -> Linear to
    2 classes -> Softmax."""
    def __init__(self):
        super().__init__()
        self.backbone = PPLCNetV3(0.25, det=False)
        self.fc = nn.Linear(make_divisible(NET_CONFIG_REC["blocks6"][-1][2] * 0.25), 2)

    def forward(self, x):
        x = self.backbone.stages[0](self.backbone.bn1(self.backbone.conv1(x)))
        for stage in self.backbone.stages[1:]:
            x = stage(x)
        return torch.softmax(self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)), dim=1)


def randomize(model: nn.Module, gen: torch.Generator) -> None:
    """He-scaled conv and linear weights, small biases, affine blocks near
    (1, 0): activations stay O(1) through the depth of the nets."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
                fan_in = m.weight[0].numel() if not isinstance(m, nn.ConvTranspose2d) \
                    else m.weight.shape[0] * m.weight[0, 0].numel() // 4
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * math.sqrt(2.0 / fan_in))
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
            elif isinstance(m, Affine):
                m.scale.copy_(torch.rand(1, generator=gen) * 0.4 + 0.8)
                m.bias.copy_(torch.randn(1, generator=gen) * 0.1)
            elif isinstance(m, nn.LayerNorm):
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
        # Trained heads are decisive: CTC logits spread over tens (a peaked
        # Softmax, not a uniform one that any error keeps near 1/6625); the
        # DB map's logits are kept mostly inside the Sigmoid's slope, where
        # errors show.
        if isinstance(model, Recognizer):
            model.fc.weight.mul_(6.0)
        elif isinstance(model, Detector):
            model.head.conv3.weight.mul_(0.25)
    randomize_batchnorm(model, gen)


def export_stages(model: nn.Module, x: torch.Tensor, out_dir: str,
                  shapes: list) -> None:
    """The recognizer as PaddleOCR's ONNX exports ship it: batch and width
    dynamic (x [N, 3, 48, W]), so one model serves every crop; input.npz and
    reference.npz at x's shape, and under shape_NxW/ the same for each of
    `shapes`."""
    import numpy as np
    import onnx
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "model.onnx")
    torch.onnx.export(model, x, path, opset_version=11, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE, input_names=["x"],
                      output_names=["probs"],
                      dynamic_axes={"x": {0: "batch", 3: "width"},
                                    "probs": {0: "batch", 1: "steps"}})
    onnx.checker.check_model(onnx.load(path))
    for i, shape in enumerate([tuple(x.shape)] + [tuple(s) for s in shapes]):
        where = out_dir if i == 0 else os.path.join(out_dir, "shape_%dx%d" % (shape[0], shape[3]))
        os.makedirs(where, exist_ok=True)
        xi = x if i == 0 else torch.randn(
            shape, generator=torch.Generator().manual_seed(100 + i)) * 0.5
        with torch.no_grad():
            y = model(xi)
        np.savez(os.path.join(where, "input.npz"), x=xi.numpy())
        np.savez(os.path.join(where, "reference.npz"), probs=y.numpy())
        print("ppocr_v4_rec_dynamic: x %s -> probs %s" % (tuple(xi.shape), tuple(y.shape)))


def main() -> None:
    def options(p):
        p.add_argument("--arch", required=True, choices=("det", "rec", "cls"))
        p.add_argument("--dynamic", action="store_true",
                       help="rec: batch and width dynamic, with references at 1x640 and "
                            "4x320 besides 1x320")
    args = parse_args(__doc__, options)
    deterministic()
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed + 1)
    if args.arch == "det":
        model, shape, output = Detector(), (1, 3, 640, 640), "maps"
    elif args.arch == "cls":
        model, shape, output = Classifier(), (1, 3, 48, 192), "probs"
    else:
        model, shape, output = Recognizer(), (1, 3, 48, 320), "probs"
    randomize(model, gen)
    # PaddleOCR's normalized input: roughly zero-mean, unit-range.
    x = torch.randn(shape, generator=torch.Generator().manual_seed(args.seed + 2)) * 0.5
    if args.dynamic:
        export_stages(model.eval(), x, args.out, [(1, 3, 48, 640), (4, 3, 48, 320)])
        return
    export_with_batchnorm(model.eval(), x, args.out, "ppocr_v4_" + args.arch,
                          input_name="x", output_name=output, opset=11)


if __name__ == "__main__":
    main()
