#!/usr/bin/python3
"""StyleGAN2 generator test model: exports model.onnx, input.npz and reference.npz.

A small, self-contained StyleGAN2 generator modeled on NVlabs
stylegan2-ada-pytorch (training/networks.py, torch_utils/ops/upfirdn2d.py,
conv2d_resample.py, bias_act.py), in the form DragGAN deploys it: the exported
model is the synthesis network alone, called with `ws` [1, num_ws, w_dim], and
it returns the image [1, 3, R, R] (`image`) and the 16x16 block's features
[1, 64, 16, 16] (`feature`, which DragGAN uses for point tracking).

Mapping network: normalize_2nd_moment(z), FC layers with equalized-lr weight
gain (lr_multiplier 0.01) and leaky ReLU (alpha 0.2, gain sqrt(2)), broadcast
to num_ws, truncation toward the w_avg buffer (w_avg.lerp(w, psi)). The
script runs it to turn a seeded z into the `ws` input; `--part mapping`
exports it instead (z -> ws).

Synthesis network: a learned 4x4 constant, then per resolution a
SynthesisBlock with two modulated 3x3 convs (the first upsamples x2) and a
toRGB layer (modulated 1x1 conv, no demodulation) whose output is added to the
x2-upsampled image of the previous block (skip architecture). The modulated
convs use StyleGAN2's fused form: the per-sample filter is computed from ws
(w [N,O,I,k,k] = weight * styles, demodulated by
(w.square().sum(dim=[2,3,4]) + 1e-8).rsqrt()), reshaped to grouped-conv
weights [N*O, I, k, k], and the activations reshaped to [1, N*I, H, W] for a
conv with groups=N, so every modulated Conv gets its filter from the graph.
The upsampling conv is conv2d_resample's fast path: a ConvTranspose (stride
2, no padding, groups N) whose filter is the dynamic one in [I, O, k, k]
order - the ConvTranspose gets its filter through a Transpose: at batch 1
(groups == 1) conv2d_resample transposes (0, 1), a 4-D Transpose {1,0,2,3}
straight into the ConvTranspose, as in DragGAN's graph; with
--deconv-filter grouped, its groups > 1 form: Reshape [N, O, I, k, k],
Transpose {0,2,1,3,4}, Reshape [N*I, O, k, k]. Then upfirdn2d's FIR
low-pass [1,3,3,1] (pad 1 + depthwise 4x4 conv with a constant filter, gain
4; --upfirdn ref writes it as upfirdn2d's reference path with 6-D tensors). The image skip
path upsamples with upfirdn2d.upsample2d written as a depthwise ConvTranspose
(stride 2, pad 1) with the constant 4x4 FIR filter, which is exactly
zero-insertion + pad [2, 1] + filter. Each conv layer adds noise scaled by a
noise_strength parameter (--noise random: torch.randn like stylegan2, which
exports ConstantOfShape -> RandomNormalLike; const: a registered buffer per
layer; none), then bias_act: bias, leaky ReLU 0.2, gain sqrt(2), clamp to
+-256 (conv_clamp); toRGB: bias, clamp.

Channels: min(2048 // res, 64), w_dim = z_dim = 64, 4 mapping layers
(--widths draggan: DragGAN's min(16384 // res, 512), 512, 8 layers);
num_ws = 10 at 64x64, 14 at 256x256. Weights are seeded random (deterministic),
scaled so activations stay O(1): affine biases 1 as in StyleGAN, small random
conv biases, noise strengths in [0.1, 0.3], w_avg the mean mapping output of
4096 seeded z's.

--noise random: the graph keeps RandomNormalLike, and the reference is
computed with noise tensors drawn from a seeded generator and fed through the
same code path (SynthesisLayer.noise_source); they are saved as noise.npz
keyed by the RandomNormalLike node output names, so a test can feed
PyTorch's noise to a model whose random ops became inputs; input_with_noise.npz
holds ws and those tensors together (a `kiln run --input` file).

The export uses opset 13 with do_constant_folding=True (the static parts of
the modconv, e.g. FC weights times their gains, fold; the filters computed
from ws stay in the graph). The script checks the model with onnx.checker and
prints its op histogram and how many Conv/ConvTranspose filters are not
initializers (or Constant/Identity copies of them). Outputs are
byte-identical from run to run.

Run with /usr/bin/python3 (Debian's torch, onnx, numpy).
"""
import argparse
import collections
import os
import time
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from torch import nn

Z_DIM = 64
W_DIM = 64
MAPPING_LAYERS = 4
CHANNEL_BASE = 2048
CHANNEL_MAX = 64
IMG_CHANNELS = 3
CONV_CLAMP = 256.0
FEATURE_RES = 16
LRELU_ALPHA = 0.2
LRELU_GAIN = float(np.sqrt(2))
# --deconv-filter grouped: always use conv2d_resample's groups > 1 path
# (reshape to 5-D, transpose (1, 2), reshape) for the ConvTranspose filter.
GROUPED_DECONV_FILTER = [False]
# --upfirdn ref: write the FIR steps as upfirdn2d's reference path does (6-D
# zero-insertion Reshape/Pad/Reshape, Pad, crop Slice, depthwise Conv), the
# graph stylegan2-ada-pytorch exports without its CUDA plugin.
UPFIRDN_REF = [False]
# --style-bias: the affine layers' bias init. 1 is stylegan2's; a trained
# generator's styles reach magnitudes near 10, where the demodulation's sum of
# squared modulated weights exceeds f16's 65504 (the DragGAN port's overflow).
STYLE_BIAS = [1.0]


# ---------------------------------------------------------------- ops

def normalize_2nd_moment(x, dim=1, eps=1e-8):
    return x * (x.square().mean(dim=dim, keepdim=True) + eps).rsqrt()


def bias_act(x, b=None, dim=1, act="linear", gain=None, clamp=None):
    """bias_act.bias_act's reference path for act in {linear, lrelu}."""
    if b is not None:
        x = x + b.reshape([-1 if i == dim else 1 for i in range(x.ndim)])
    if act == "lrelu":
        x = F.leaky_relu(x, LRELU_ALPHA)
        gain = LRELU_GAIN if gain is None else gain
    else:
        gain = 1.0 if gain is None else gain
    if gain != 1:
        x = x * gain
    if clamp is not None and clamp >= 0:
        x = x.clamp(-clamp, clamp)
    return x


def setup_filter(f=(1, 3, 3, 1)):
    """upfirdn2d.setup_filter: the separable filter's outer product, sum 1."""
    f = torch.as_tensor(f, dtype=torch.float32)
    f = f.ger(f)
    return f / f.sum()


def upfirdn2d_ref(x, f, up=1, down=1, padding=(0, 0, 0, 0), gain=1.0):
    """upfirdn2d._upfirdn2d_ref (square up/down, 2-D filter); used only to
    check the graph's formulations in self_check()."""
    n, c, h, w = x.shape
    px0, px1, py0, py1 = padding
    x = x.reshape([n, c, h, 1, w, 1])
    x = F.pad(x, [0, up - 1, 0, 0, 0, up - 1])
    x = x.reshape([n, c, h * up, w * up])
    x = F.pad(x, [max(px0, 0), max(px1, 0), max(py0, 0), max(py1, 0)])
    x = x[:, :, max(-py0, 0): x.shape[2] - max(-py1, 0), max(-px0, 0): x.shape[3] - max(-px1, 0)]
    f = (f * (gain ** (f.ndim / 2))).flip(list(range(f.ndim)))
    f = f[np.newaxis, np.newaxis].repeat([c, 1] + [1] * f.ndim)
    x = F.conv2d(x, f, groups=c)
    return x[:, :, ::down, ::down]


def upfirdn2d_graph(x, weight, up, padding):
    """upfirdn2d._upfirdn2d_ref's tensor ops on x, with the flipped, gained,
    per-channel filter precomputed (weight [C, 1, fh, fw], a constant)."""
    n, c, h, w = x.shape
    px0, px1, py0, py1 = padding
    x = x.reshape([n, c, h, 1, w, 1])
    x = F.pad(x, [0, up - 1, 0, 0, 0, up - 1])
    x = x.reshape([n, c, h * up, w * up])
    x = F.pad(x, [px0, px1, py0, py1])
    x = x[:, :, 0: x.shape[2], 0: x.shape[3]]  # the crop for negative padding: none here
    return F.conv2d(x, weight, groups=c)


class FirFilter(nn.Module):
    """upfirdn2d(x, f, padding=1, gain=4) at up=down=1 (what conv2d_resample
    runs after the stride-2 transposed conv): F.pad + depthwise conv2d with
    a constant [C, 1, 4, 4] filter."""

    def __init__(self, channels, gain=4.0, pad=1):
        super().__init__()
        f = setup_filter() * gain
        self.pad = pad
        self.register_buffer("weight", f.flip([0, 1])[None, None].repeat(channels, 1, 1, 1).contiguous())

    def forward(self, x):
        if UPFIRDN_REF[0]:
            return upfirdn2d_graph(x, self.weight, 1, [self.pad] * 4)
        x = F.pad(x, [self.pad] * 4)
        return F.conv2d(x, self.weight, groups=self.weight.shape[0])


class Upsample2d(nn.Module):
    """upfirdn2d.upsample2d(x, f, up=2) (zero insertion, pad [2, 1], 4x4 FIR
    with gain 4) written as one depthwise ConvTranspose with stride 2 and
    padding 1 and a constant filter: the same arithmetic."""

    def __init__(self, channels):
        super().__init__()
        f = setup_filter() * 4
        # conv_transpose2d correlates with the flipped kernel; upfirdn2d
        # convolves with the flipped filter: the kernel is f itself.
        self.register_buffer("weight", f[None, None].repeat(channels, 1, 1, 1).contiguous())

    def forward(self, x):
        if UPFIRDN_REF[0]:  # f is symmetric: flipped or not, the same filter
            return upfirdn2d_graph(x, self.weight, 2, [2, 1, 2, 1])
        return F.conv_transpose2d(x, self.weight, stride=2, padding=1, groups=self.weight.shape[0])


def modulated_conv2d(x, weight, styles, noise=None, up=1, padding=0, fir=None, demodulate=True):
    """networks.modulated_conv2d with fused_modconv=True, flip_weight as
    SynthesisLayer passes it (up == 1), and conv2d_resample's paths for
    up in {1, 2}."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        batch_size = int(x.shape[0])  # a constant in the trace, as in stylegan2
        out_channels, in_channels, kh, kw = [int(d) for d in weight.shape]

    # Per-sample weights and demodulation coefficients.
    w = weight.unsqueeze(0)                                   # [NOIkk]
    w = w * styles.reshape(batch_size, 1, -1, 1, 1)           # [NOIkk]
    if demodulate:
        dcoefs = (w.square().sum(dim=[2, 3, 4]) + 1e-8).rsqrt()  # [NO]
        w = w * dcoefs.reshape(batch_size, -1, 1, 1, 1)       # [NOIkk]

    # One grouped convolution over the batch.
    x = x.reshape(1, -1, *x.shape[2:])
    w = w.reshape(-1, in_channels, kh, kw)
    if up == 1:
        x = F.conv2d(x, w, padding=padding, groups=batch_size)
    else:
        # conv2d_resample fast path (up=2, 3x3, padding 1, 4-tap filter):
        # px0 = 1 + 5 // 2 - (kw - 1) = 1, px1 = 1 + 2 // 2 - (kw - up) = 1,
        # so a stride-2 transposed conv without padding, then upfirdn2d with
        # padding 1 and gain up**2. flip_weight=False in the layer makes the
        # transposed conv use the weight unflipped. Its filter is [I, O/g, k, k]:
        # with groups == 1 (batch 1, as exported) conv2d_resample transposes
        # (0, 1), a 4-D Transpose {1,0,2,3} right before the ConvTranspose;
        # otherwise (or with grouped_deconv_filter) through a 5-D Transpose.
        assert up == 2 and (kh, kw, padding) == (3, 3, 1)
        if batch_size == 1 and not GROUPED_DECONV_FILTER[0]:
            w = w.transpose(0, 1)
        else:
            w = w.reshape(batch_size, out_channels, in_channels, kh, kw)
            w = w.transpose(1, 2)
            w = w.reshape(batch_size * in_channels, out_channels, kh, kw)
        x = F.conv_transpose2d(x, w, stride=2, padding=0, groups=batch_size)
        x = fir(x)
    x = x.reshape(batch_size, -1, *x.shape[2:])
    if noise is not None:
        x = x + noise
    return x


# ---------------------------------------------------------------- layers

class FullyConnectedLayer(nn.Module):
    def __init__(self, in_features, out_features, activation="linear", lr_multiplier=1.0, bias_init=0.0):
        super().__init__()
        self.activation = activation
        self.weight = nn.Parameter(torch.randn([out_features, in_features]) / lr_multiplier)
        self.bias = nn.Parameter(torch.full([out_features], np.float32(bias_init)))
        self.weight_gain = lr_multiplier / np.sqrt(in_features)
        self.bias_gain = lr_multiplier

    def forward(self, x):
        w = self.weight * self.weight_gain
        b = self.bias
        if self.bias_gain != 1:
            b = b * self.bias_gain
        if self.activation == "linear":
            return torch.addmm(b.unsqueeze(0), x, w.t())
        return bias_act(x.matmul(w.t()), b, act=self.activation)


class MappingNetwork(nn.Module):
    def __init__(self, z_dim, w_dim, num_ws, num_layers=MAPPING_LAYERS, lr_multiplier=0.01):
        super().__init__()
        self.z_dim, self.w_dim, self.num_ws = z_dim, w_dim, num_ws
        features = [z_dim] + [w_dim] * num_layers
        for i in range(num_layers):
            setattr(self, f"fc{i}", FullyConnectedLayer(
                features[i], features[i + 1], activation="lrelu", lr_multiplier=lr_multiplier))
        self.num_layers = num_layers
        self.register_buffer("w_avg", torch.zeros([w_dim]))

    def forward(self, z, truncation_psi=1.0, broadcast=True):
        x = normalize_2nd_moment(z)
        for i in range(self.num_layers):
            x = getattr(self, f"fc{i}")(x)
        if not broadcast:
            return x
        x = x.unsqueeze(1).repeat([1, self.num_ws, 1])
        if truncation_psi != 1:
            x = self.w_avg.lerp(x, truncation_psi)
        return x


class SynthesisLayer(nn.Module):
    def __init__(self, in_channels, out_channels, w_dim, resolution, up=1, kernel_size=3):
        super().__init__()
        self.resolution, self.up = resolution, up
        self.padding = kernel_size // 2
        self.affine = FullyConnectedLayer(w_dim, in_channels, bias_init=STYLE_BIAS[0])
        self.weight = nn.Parameter(torch.randn([out_channels, in_channels, kernel_size, kernel_size]))
        self.register_buffer("noise_const", torch.randn([resolution, resolution]))
        self.noise_strength = nn.Parameter(torch.zeros([]))
        self.bias = nn.Parameter(torch.zeros([out_channels]))
        self.fir = FirFilter(out_channels) if up == 2 else None
        # When set (by the script, never in the export), a callable returning
        # the "random" noise tensor for this layer instead of torch.randn.
        self.noise_source = None
        self.qualname = ""

    def forward(self, x, w, noise_mode="const"):
        styles = self.affine(w)
        noise = None
        if noise_mode == "random":
            shape = [x.shape[0], 1, self.resolution, self.resolution]
            if self.noise_source is None:
                rnd = torch.randn(shape, device=x.device)
            else:
                rnd = self.noise_source(self, shape)
            noise = rnd * self.noise_strength
        elif noise_mode == "const":
            noise = self.noise_const * self.noise_strength
        x = modulated_conv2d(x, self.weight, styles, noise=noise, up=self.up,
                             padding=self.padding, fir=self.fir)
        return bias_act(x, self.bias, act="lrelu", gain=LRELU_GAIN, clamp=CONV_CLAMP)


class ToRGBLayer(nn.Module):
    def __init__(self, in_channels, out_channels, w_dim, kernel_size=1):
        super().__init__()
        self.affine = FullyConnectedLayer(w_dim, in_channels, bias_init=1)
        self.weight = nn.Parameter(torch.randn([out_channels, in_channels, kernel_size, kernel_size]))
        self.bias = nn.Parameter(torch.zeros([out_channels]))
        self.weight_gain = 1 / np.sqrt(in_channels * kernel_size ** 2)

    def forward(self, x, w):
        styles = self.affine(w) * self.weight_gain
        x = modulated_conv2d(x, self.weight, styles, demodulate=False)
        return bias_act(x, self.bias, clamp=CONV_CLAMP)


class SynthesisBlock(nn.Module):
    def __init__(self, in_channels, out_channels, w_dim, resolution, is_last):
        super().__init__()
        self.in_channels, self.resolution, self.is_last = in_channels, resolution, is_last
        self.num_conv = 0
        if in_channels == 0:
            self.const = nn.Parameter(torch.randn([out_channels, resolution, resolution]))
        else:
            self.conv0 = SynthesisLayer(in_channels, out_channels, w_dim, resolution, up=2)
            self.num_conv += 1
            self.upsample = Upsample2d(IMG_CHANNELS)
        self.conv1 = SynthesisLayer(out_channels, out_channels, w_dim, resolution)
        self.num_conv += 1
        self.torgb = ToRGBLayer(out_channels, IMG_CHANNELS, w_dim)
        self.num_torgb = 1

    def forward(self, x, img, ws, noise_mode):
        w_iter = iter(ws.unbind(dim=1))
        if self.in_channels == 0:
            x = self.const.unsqueeze(0).repeat([ws.shape[0], 1, 1, 1])
            x = self.conv1(x, next(w_iter), noise_mode)
        else:
            x = self.conv0(x, next(w_iter), noise_mode)
            x = self.conv1(x, next(w_iter), noise_mode)
        if img is not None:
            img = self.upsample(img)
        y = self.torgb(x, next(w_iter))
        img = img + y if img is not None else y
        return x, img


class SynthesisNetwork(nn.Module):
    def __init__(self, w_dim, img_resolution, noise_mode="const"):
        super().__init__()
        self.w_dim, self.img_resolution, self.noise_mode = w_dim, img_resolution, noise_mode
        log2 = int(np.log2(img_resolution))
        self.block_resolutions = [2 ** i for i in range(2, log2 + 1)]
        channels = {res: min(CHANNEL_BASE // res, CHANNEL_MAX) for res in self.block_resolutions}
        self.num_ws = 0
        for res in self.block_resolutions:
            in_channels = channels[res // 2] if res > 4 else 0
            block = SynthesisBlock(in_channels, channels[res], w_dim, res, res == img_resolution)
            self.num_ws += block.num_conv
            if res == img_resolution:
                self.num_ws += block.num_torgb
            setattr(self, f"b{res}", block)
        for name, m in self.named_modules():
            if isinstance(m, SynthesisLayer):
                m.qualname = name

    def layers(self):
        return [m for m in self.modules() if isinstance(m, SynthesisLayer)]

    def forward(self, ws):
        block_ws, w_idx = [], 0
        for res in self.block_resolutions:
            block = getattr(self, f"b{res}")
            block_ws.append(ws.narrow(1, w_idx, block.num_conv + block.num_torgb))
            w_idx += block.num_conv
        x = img = feature = None
        for res, cur_ws in zip(self.block_resolutions, block_ws):
            x, img = getattr(self, f"b{res}")(x, img, cur_ws, self.noise_mode)
            if res == FEATURE_RES:
                feature = x
        return img, feature


# ---------------------------------------------------------------- building

def build(res, noise_mode, seed):
    """The synthesis and mapping networks with seeded weights (CPU, eval)."""
    torch.manual_seed(seed)
    synthesis = SynthesisNetwork(W_DIM, res, noise_mode)
    mapping = MappingNetwork(Z_DIM, W_DIM, synthesis.num_ws, num_layers=MAPPING_LAYERS)
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for layer in synthesis.layers():
            layer.noise_strength.copy_(torch.rand([], generator=gen) * 0.2 + 0.1)
            layer.bias.copy_(torch.randn(layer.bias.shape, generator=gen) * 0.1)
        for m in synthesis.modules():
            if isinstance(m, ToRGBLayer):
                # Keep the summed skip image near [-1, 1] (trained generators' range).
                m.weight.mul_(0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.05)
        for i in range(mapping.num_layers):
            fc = getattr(mapping, f"fc{i}")
            fc.bias.copy_(torch.randn(fc.bias.shape, generator=gen))  # x 0.01 bias gain
        z = torch.randn([4096, Z_DIM], generator=gen)
        mapping.w_avg.copy_(mapping(z, broadcast=False).mean(dim=0))
    return synthesis.eval(), mapping.eval()


def self_check():
    """The graph's upfirdn2d formulations (both --upfirdn forms) against the
    reference ops."""
    gen = torch.Generator().manual_seed(123)
    x = torch.randn([1, 5, 6, 6], generator=gen)
    w = torch.randn([4, 5, 3, 3], generator=gen)
    f = setup_filter()
    up_want = upfirdn2d_ref(x, f, up=2, padding=(2, 1, 2, 1), gain=4)
    # conv2d_resample(up=2, padding=1): the fast path the graph uses (stride-2
    # transposed conv, then upfirdn2d pad 1 gain 4) against its generic path
    # (upfirdn2d up=2 pad (3, 2) gain 4, then conv2d; flip_weight=False flips w).
    conv_want = F.conv2d(upfirdn2d_ref(x, f, up=2, padding=(3, 2, 3, 2), gain=4), w.flip([2, 3]))
    saved = UPFIRDN_REF[0]
    try:
        for ref in (False, True):
            UPFIRDN_REF[0] = ref
            up = Upsample2d(5)(x)
            assert up.shape == up_want.shape and torch.allclose(up, up_want, atol=1e-5), "upsample2d"
            conv = FirFilter(4)(F.conv_transpose2d(x, w.transpose(0, 1), stride=2))
            assert conv.shape == conv_want.shape == (1, 4, 12, 12), (conv.shape, conv_want.shape)
            assert torch.allclose(conv, conv_want, atol=1e-4), "conv2d_resample up=2"
    finally:
        UPFIRDN_REF[0] = saved


# ---------------------------------------------------------------- export

def static_names(graph):
    """Initializers, Constant outputs, and Identity copies of either (the
    exporter deduplicates equal initializers through Identity nodes)."""
    names = {i.name for i in graph.initializer}
    names |= {o for n in graph.node if n.op_type == "Constant" for o in n.output}
    for n in graph.node:  # topological order
        if n.op_type == "Identity" and n.input[0] in names:
            names.add(n.output[0])
    return names


def report(path, tag):
    model = onnx.load(path)
    onnx.checker.check_model(model)
    g = model.graph
    ops = collections.Counter(n.op_type for n in g.node)
    static = static_names(g)
    convs = [n for n in g.node if n.op_type in ("Conv", "ConvTranspose")]
    dynamic = [n for n in convs if n.input[1] not in static]
    print("stylegan2 %s: %s ops (%d nodes): %s" % (
        tag, path, len(g.node), " ".join("%s=%d" % kv for kv in sorted(ops.items()))))
    print("stylegan2 %s: %d of %d Conv/ConvTranspose nodes have non-initializer filters "
          "(%d Conv, %d ConvTranspose)" % (
              tag, len(dynamic), len(convs), sum(n.op_type == "Conv" for n in dynamic),
              sum(n.op_type == "ConvTranspose" for n in dynamic)))
    producer = {o: n for n in g.node for o in n.output}

    def describe(name):
        n = producer.get(name)
        if n is None:
            return "input"
        perm = [list(a.ints) for a in n.attribute if a.name == "perm"]
        return n.op_type + ("{%s}" % ",".join(map(str, perm[0])) if perm else "")

    for op in ("Conv", "ConvTranspose"):
        kinds = collections.Counter(describe(n.input[1]) for n in dynamic if n.op_type == op)
        if kinds:
            print("stylegan2 %s: dynamic %s filters come from %s" % (
                tag, op, " ".join("%s=%d" % kv for kv in sorted(kinds.items()))))
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--res", type=int, choices=(64, 256), default=64)
    parser.add_argument("--noise", choices=("const", "random", "none"), default="const")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--style-bias", type=float, default=1.0,
                        help="affine bias init of the synthesis convs (trained-like: 12)")
    parser.add_argument("--psi", type=float, default=0.7, help="truncation_psi")
    parser.add_argument("--widths", choices=("narrow", "draggan"), default="narrow",
                        help="narrow: w_dim 64, at most 64 channels (the small tests); draggan: "
                        "DragGAN's generator, w_dim = z_dim = 512, 8 mapping layers, "
                        "channel_base 16384, channel_max 512 (512 channels up to 32 px, "
                        "then 256, 128, 64)")
    parser.add_argument("--part", choices=("synthesis", "mapping"), default="synthesis")
    parser.add_argument("--deconv-filter", choices=("transpose", "grouped"), default="transpose",
                        help="ConvTranspose filter at batch 1: conv2d_resample's groups == 1 "
                        "path (4-D Transpose {1,0,2,3}, default) or its grouped path "
                        "(Reshape 5-D, Transpose {0,2,1,3,4}, Reshape)")
    parser.add_argument("--upfirdn", choices=("simple", "ref"), default="simple",
                        help="FIR steps as Pad + depthwise Conv and a depthwise ConvTranspose "
                        "(default), or as upfirdn2d's reference path with 6-D tensors")
    args = parser.parse_args()
    if args.widths == "draggan":
        global Z_DIM, W_DIM, MAPPING_LAYERS, CHANNEL_BASE, CHANNEL_MAX
        Z_DIM, W_DIM, MAPPING_LAYERS, CHANNEL_BASE, CHANNEL_MAX = 512, 512, 8, 16384, 512
    GROUPED_DECONV_FILTER[0] = args.deconv_filter == "grouped"
    UPFIRDN_REF[0] = args.upfirdn == "ref"
    STYLE_BIAS[0] = args.style_bias
    os.makedirs(args.out, exist_ok=True)
    torch.set_grad_enabled(False)

    self_check()
    synthesis, mapping = build(args.res, args.noise, args.seed)
    z = torch.randn([1, Z_DIM], generator=torch.Generator().manual_seed(args.seed + 2))
    onnx_path = os.path.join(args.out, "model.onnx")
    tag = "%s %dx%d" % (args.part, args.res, args.res) if args.part == "synthesis" else \
        "mapping (num_ws %d)" % synthesis.num_ws

    if args.part == "mapping":
        class Mapping(nn.Module):
            def __init__(self, mapping, psi):
                super().__init__()
                self.mapping, self.psi = mapping, psi

            def forward(self, z):
                return self.mapping(z, truncation_psi=self.psi)

        model = Mapping(mapping, args.psi).eval()
        ws = model(z)
        t0 = time.time()
        torch.onnx.export(model, z, onnx_path, opset_version=13, do_constant_folding=True,
                          input_names=["z"], output_names=["ws"])
        t1 = time.time()
        np.savez(os.path.join(args.out, "input.npz"), z=z.numpy())
        np.savez(os.path.join(args.out, "reference.npz"), ws=ws.numpy())
        report(onnx_path, tag)
        print("stylegan2 %s: export %.1f s" % (tag, t1 - t0))
        return

    ws = mapping(z, truncation_psi=args.psi)  # [1, num_ws, w_dim], as DragGAN passes it

    # Export: with --noise random the graph keeps torch.randn's RandomNormalLike.
    t0 = time.time()
    torch.onnx.export(synthesis, ws, onnx_path, opset_version=13, do_constant_folding=True,
                      input_names=["ws"], output_names=["image", "feature"])
    t1 = time.time()

    # Reference: random noise comes from a seeded generator, through the same path.
    drawn = collections.OrderedDict()
    if args.noise == "random":
        gen = torch.Generator().manual_seed(args.seed + 3)

        def source(layer, shape):
            t = torch.randn(shape, generator=gen)
            drawn[layer.qualname] = t
            return t

        for layer in synthesis.layers():
            layer.noise_source = source
    image, feature = synthesis(ws)
    for layer in synthesis.layers():
        layer.noise_source = None

    np.savez(os.path.join(args.out, "input.npz"), ws=ws.numpy())
    np.savez(os.path.join(args.out, "reference.npz"), image=image.numpy(), feature=feature.numpy())

    model = report(onnx_path, tag)
    if args.noise == "random":
        rnd = [n for n in model.graph.node if n.op_type in ("RandomNormalLike", "RandomNormal")]
        if len(rnd) != len(drawn):
            raise SystemExit("stylegan2: %d random nodes in the graph, %d noise tensors drawn"
                             % (len(rnd), len(drawn)))
        noise = collections.OrderedDict()
        # Graph order is execution order; the node names carry the module path.
        for node, (qualname, t) in zip(rnd, drawn.items()):
            if node.op_type != "RandomNormalLike" or not node.name.startswith("/" + qualname.replace(".", "/") + "/"):
                raise SystemExit("stylegan2: random node %s (%s) does not match layer %s"
                                 % (node.name, node.op_type, qualname))
            noise[node.output[0]] = t.numpy()
        np.savez(os.path.join(args.out, "noise.npz"), **noise)
        # ws and the noise together, for `kiln run --input` on a model compiled
        # with `random_ops: input`.
        np.savez(os.path.join(args.out, "input_with_noise.npz"), ws=ws.numpy(), **noise)
        print("stylegan2 %s: noise.npz: %s" % (tag, ", ".join(
            "%s%s" % (k, list(v.shape)) for k, v in noise.items())))
    elif any(n.op_type.startswith("Random") for n in model.graph.node):
        raise SystemExit("stylegan2: random ops in a --noise %s export" % args.noise)
    print("stylegan2 %s: num_ws %d, image range [%.3f, %.3f] std %.3f, feature %s std %.3f; export %.1f s"
          % (tag, synthesis.num_ws, image.min(), image.max(), image.std(),
             list(feature.shape), feature.std(), t1 - t0))


if __name__ == "__main__":
    main()
