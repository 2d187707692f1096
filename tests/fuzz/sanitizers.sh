#!/usr/bin/env bash
# The runtime under AddressSanitizer and UndefinedBehaviorSanitizer: a nested
# build of the runtime, the cmodel, the chip's engines (chip/) and their tests
# with clang-19 (no MLIR compiler), plus the libFuzzer harness.
#   sanitizers.sh build SRC_DIR BUILD_DIR [MODEL_DIR]  configure and build
#   sanitizers.sh test BUILD_DIR                        its ctest suite, fuzzer aside
#   sanitizers.sh fuzz BUILD_DIR SECONDS [MODEL_DIR...] fuzz from the seeds, fresh corpus
# MODEL_DIR holds compiled bmodels (tests/fuzz/tiny_models.sh) for the soak,
# byte-flip and fuzz tests; without it they use builder-made models.
# The compiler's front doors likewise, in a nested build of only the ONNX
# importer, the Top IR and passes, the config loader and their two fuzzers
# (instrumented; Debian's shared LLVM and MLIR are not):
#   sanitizers.sh build-front SRC_DIR BUILD_DIR         configure and build
#   sanitizers.sh fuzz-front BUILD_DIR SECONDS onnx_import SRC_DIR PYTHON [MODEL_DIR...]
#   sanitizers.sh fuzz-front BUILD_DIR SECONDS config SRC_DIR
# fuzz-front fuzzes from fresh seeds into a corpus kept in BUILD_DIR (so
# long runs go on where they stopped): for onnx_import the small test models
# (generated once into BUILD_DIR/models), every model.onnx up to 1 MiB under
# MODEL_DIR, libonnx-testdata's models and tests/fuzz/regressions; for config
# configs/examples with their model directories renamed `net` (the layout
# config_fuzzer.cpp provides) and the regressions, with config.dict.
# KILN_FUZZ_FLAGS adds libFuzzer flags (e.g. -runs=1000000).
set -euo pipefail
# A sanitizer report is an error that stops the process; leaks are reported.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-19 || true)}
jobs=$(nproc)

# After a failed fuzz run: the inputs it saved, in the log (the next run
# clears the directory, and CI keeps only the log), then the failure.
show_artifacts() {
  local file
  for file in "$1"/*; do
    [ -f "$file" ] || continue
    echo "artifact $(basename "$file") ($(stat -c %s "$file") bytes), base64:"
    head -c 65536 "$file" | base64
  done
  return 1
}

cmd=$1
shift
case "$cmd" in
build)
  src=$1 build=$2 models=${3:-}
  san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  cmake -G Ninja -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" \
    -DKILN_BUILD_COMPILER=OFF -DKILN_WERROR=ON -DKILN_SANITIZER_BUILD=ON \
    -DKILN_TEST_BMODEL_DIR="$models" > "$build.configure.log" ||
    { cat "$build.configure.log"; exit 1; }
  ninja -C "$build" -j"$jobs"
  ;;
test)
  # The freestanding checks read archives, which instrumentation makes
  # hosted; the main build runs them.
  ctest --test-dir "$1" --output-on-failure --no-tests=error -j"$jobs" -E 'freestanding|cross|baremetal'
  ;;
fuzz)
  build=$1 seconds=$2
  shift 2
  work=$build/fuzz-run
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
  "$build/tests/fuzz/make_fuzz_seeds" "$work/seeds"
  cp "$(dirname "$0")/regressions/bmodel/"* "$work/seeds/"
  # Compiled models up to 1 MiB: a larger one spends each run checksumming
  # megabytes of coefficients the fuzzer gains nothing from.
  for dir in "$@"; do
    [ -d "$dir" ] && find "$dir" -maxdepth 1 -name '*.bmodel' -size -1025k -exec cp {} "$work/seeds/" \;
  done
  echo "seeds: $(ls "$work/seeds" | tr '\n' ' ')"
  # Every seed whole: the largest sets the input size limit (at least 256 KiB).
  max_len=$(find "$work/seeds" -type f -printf '%s\n' | sort -n | tail -1)
  [ "$max_len" -ge 262144 ] || max_len=262144
  # -timeout: one input may take at most 10 s (a hang); -rss_limit_mb: no
  # runaway allocation; every crash, leak or sanitizer report fails the run.
  "$build/tests/fuzz/bmodel_fuzzer" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/corpus" "$work/seeds" ||
    show_artifacts "$work/artifacts"
  ;;
build-front)
  src=$1 build=$2
  san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  # -O1 and line tables: ASan's advice, and half the compile time of -O2 -g
  # over MLIR's headers.
  cmake -G Ninja -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" \
    -DKILN_BUILD_COMPILER=ON -DKILN_WERROR=ON -DKILN_SANITIZER_BUILD=ON \
    > "$build.configure.log" || { cat "$build.configure.log"; exit 1; }
  ninja -C "$build" -j"$jobs" onnx_import_fuzzer config_fuzzer
  ;;
fuzz-front)
  build=$1 seconds=$2 name=$3 src=$4
  shift 4
  work=$build/fuzz-$name
  here=$src/tests/fuzz
  rm -rf "$work/seeds" "$work/artifacts"
  mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
  cp "$here/regressions/$name/"* "$work/seeds/"
  flags=()
  case "$name" in
  onnx_import)
    py=$1
    shift
    for model in qdq_net paddle_hardswish paddle_se_net paddle_se_net_opset13 inplace_net views_net; do
      bash "$src/tests/models/generate.sh" "$model" "$build/models/$model" "$py" > /dev/null
      cp "$build/models/$model/model.onnx" "$work/seeds/$model.onnx"
    done
    # One file per model, named by its directory.
    find "$@" /usr/share/libonnx-testdata/data -name model.onnx -size -1025k 2> /dev/null |
      while read -r model; do
        cp "$model" "$work/seeds/$(basename "$(dirname "$model")").onnx"
      done
    flags=(-dict="$here/onnx.dict")
    ;;
  config)
    for config in "$src"/configs/examples/*.yaml; do
      sed -E 's#build/models/[^/]+/#build/models/net/#' "$config" > "$work/seeds/$(basename "$config")"
    done
    flags=(-dict="$here/config.dict")
    ;;
  *)
    echo "fuzz-front: no fuzzer '$name' (onnx_import, config)" >&2
    exit 2
    ;;
  esac
  echo "$name seeds: $(ls "$work/seeds" | wc -l) files"
  max_len=$(find "$work/seeds" -type f -printf '%s\n' | sort -n | tail -1)
  [ "$max_len" -ge 4096 ] || max_len=4096
  # As fuzz above: a crash, leak, sanitizer report, an input over 10 s or
  # 2 GiB fails the run.
  "$build/tests/fuzz/${name}_fuzzer" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len="$max_len" -print_final_stats=1 "${flags[@]}" \
    ${KILN_FUZZ_FLAGS:-} -artifact_prefix="$work/artifacts/" "$work/corpus" "$work/seeds" ||
    show_artifacts "$work/artifacts"
  ;;
*)
  echo "usage: sanitizers.sh {build SRC BUILD [MODELS]|test BUILD|fuzz BUILD SECONDS [MODELS...]|" >&2
  echo "  build-front SRC BUILD|fuzz-front BUILD SECONDS {onnx_import SRC PYTHON [MODELS...]|config SRC}}" >&2
  exit 2
  ;;
esac
