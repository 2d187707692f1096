#!/usr/bin/env bash
# generate.sh NAME OUT_DIR [PYTHON] [--calib-samples DIR N]: writes NAME's
# model.onnx, input.npz and reference.npz (PyTorch's outputs) into OUT_DIR,
# once. The one place that maps a bundled example's name to the script and
# arguments that make it. With --calib-samples, also writes N calibration
# samples DIR/sample_NNN.npz drawn like input.npz (calib_samples.py), once.
# NAME_int8 (the INT8 example configs) is NAME's model with 16 calibration
# samples in OUT_DIR/calib unless --calib-samples says otherwise.
set -euo pipefail
name=$1 out=$2 py=/usr/bin/python3 calib_dir="" calib_n=0
shift 2
while [ $# -gt 0 ]; do
  case "$1" in
    --calib-samples)
      [ $# -ge 3 ] || { echo "generate.sh: --calib-samples needs DIR N" >&2; exit 2; }
      calib_dir=$2 calib_n=$3; shift 3 ;;
    *) py=$1; shift ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
case "$name" in
  *_int8)
    name=${name%_int8}
    [ -n "$calib_dir" ] || calib_dir=$out/calib calib_n=16 ;;
esac
if [ ! -f "$out/model.onnx" ]; then
  case "$name" in
    stylegan2_64) "$py" "$here/stylegan2.py" --res 64 --noise const --out "$out" ;;
    stylegan2_64_random) "$py" "$here/stylegan2.py" --res 64 --noise random --out "$out" ;;
    stylegan2_256) "$py" "$here/stylegan2.py" --res 256 --noise const --out "$out" ;;
    stylegan2_256_draggan) "$py" "$here/stylegan2.py" --res 256 --noise const --widths draggan --out "$out" ;;
    stylegan2_64_wide) "$py" "$here/stylegan2.py" --res 64 --noise const --style-bias 12 --out "$out" ;;
    # torchvision's models: tv_resnet18, tv_resnet50, tv_mobilenet_v2, tv_mobilenet_v3_small.
    tv_*) "$py" "$here/torchvision_nets.py" --arch "${name#tv_}" --out "$out" ;;
    # PP-OCRv4's mobile detector and recognizer: ppocr_v4_det, ppocr_v4_rec.
    # The recognizer as exported with dynamic batch and width (several stages).
    ppocr_v4_rec_dynamic) "$py" "$here/ppocr_v4.py" --arch rec --dynamic --out "$out" ;;
    ppocr_v4_*) "$py" "$here/ppocr_v4.py" --arch "${name#ppocr_v4_}" --out "$out" ;;
    # Paddle2ONNX forms with Clip bounds as inputs (opset 13; the default is 11).
    paddle_se_net_opset13) "$py" "$here/paddle_se_net.py" --opset 13 --out "$out" ;;
    *) "$py" "$here/$name.py" --out "$out" ;;
  esac
fi
if [ -n "$calib_dir" ]; then
  last=$(printf '%s/sample_%03d.npz' "$calib_dir" $((calib_n - 1)))
  [ -f "$last" ] || "$py" "$here/calib_samples.py" --input "$out/input.npz" \
    --out "$calib_dir" --count "$calib_n"
fi
