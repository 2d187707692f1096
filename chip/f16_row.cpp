// f32 -> f16 rows for the cmodel's stores (kiln/chip/tiu_kernels.h).
#include <cstring>

#include "kiln/abi/quant.h"
#include "kiln/chip/tiu_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln::chip {
namespace {

void f32ToF16Scalar(const float *src, uint32_t count, uint8_t *dst) {
  for (uint32_t i = 0; i < count; ++i) {
    uint16_t h = kiln_f32_to_f16(src[i]);
    std::memcpy(dst + 2 * size_t{i}, &h, 2);
  }
}

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void f32ToF16F16c(const float *src, uint32_t count,
                                                      uint8_t *dst) {
  uint32_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 2 * size_t{i}), h);
  }
  if (i < count) { // the last 1..7 values through a padded vector
    float tail[8] = {};
    std::memcpy(tail, src + i, (count - i) * sizeof(float));
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(tail), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    uint16_t bits[8];
    _mm_storeu_si128(reinterpret_cast<__m128i *>(bits), h);
    std::memcpy(dst + 2 * size_t{i}, bits, (count - i) * 2);
  }
  // Clean upper halves before SSE code runs again (without it every later
  // SSE instruction pays a state transition).
  _mm256_zeroupper();
}

// Read while static objects are constructed: CPU detection must be set up first.
const bool kHasF16c = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
}();
#endif

} // namespace

void f32ToF16Row(const float *src, uint32_t count, uint8_t *dst) {
#if defined(__x86_64__)
  if (kHasF16c)
    return f32ToF16F16c(src, count, dst);
#endif
  f32ToF16Scalar(src, count, dst);
}

} // namespace kiln::chip
