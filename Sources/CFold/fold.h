#ifndef SYNCFILES_CFOLD_H
#define SYNCFILES_CFOLD_H
// CRC-32 (IEEE, reflected) folded 16 bytes at a time with carry-less
// multiplication (PCLMULQDQ), for the journal's record checksums. Swift
// cannot reach the instruction; this is the one loop that needs it.
//
// Folding keeps the CRC of what was read so far congruent modulo the
// polynomial while it shortens it: a 128-bit block multiplied by x^(D+32)
// and x^(D-32) (reduced, bit-reflected, shifted left by one) lands D bits
// further on, where it is added to the block there. The constants below
// are those powers for D = 512 (four blocks in flight) and D = 128 (one),
// reflect(x^(D+32) mod P) << 1 and reflect(x^(D-32) mod P) << 1 for the
// polynomial P = 0x104C11DB7, computed for this file.
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#include <immintrin.h>

// Whether this CPU can fold (PCLMULQDQ and SSE4.1).
static inline int sf_crc_fold_available(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

__attribute__((target("pclmul,sse4.1"))) static inline __m128i sf_crc_fold_step(__m128i x, __m128i k, __m128i next) {
  __m128i low = _mm_clmulepi64_si128(x, k, 0x00);   // x's first 8 bytes times k's low constant
  __m128i high = _mm_clmulepi64_si128(x, k, 0x11);  // x's last 8 bytes times k's high constant
  return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

// Folds `blocks` (at least 4) 16-byte blocks at `p`, the CRC register
// before them being `reg` (not inverted), into 16 bytes at `out` whose
// CRC from a register of 0 is the CRC of the blocks from `reg`.
__attribute__((target("pclmul,sse4.1"))) static inline void sf_crc32_fold(
    uint32_t reg, const uint8_t *p, size_t blocks, uint8_t *out) {
  const __m128i by4 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);  // (high, low): D = 512
  const __m128i by1 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);  // D = 128
  __m128i x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)reg));
  __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
  __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
  __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
  p += 64;
  blocks -= 4;
  for (; blocks >= 4; blocks -= 4, p += 64) {
    x0 = sf_crc_fold_step(x0, by4, _mm_loadu_si128((const __m128i *)p));
    x1 = sf_crc_fold_step(x1, by4, _mm_loadu_si128((const __m128i *)(p + 16)));
    x2 = sf_crc_fold_step(x2, by4, _mm_loadu_si128((const __m128i *)(p + 32)));
    x3 = sf_crc_fold_step(x3, by4, _mm_loadu_si128((const __m128i *)(p + 48)));
  }
  x0 = sf_crc_fold_step(x0, by1, x1);
  x0 = sf_crc_fold_step(x0, by1, x2);
  x0 = sf_crc_fold_step(x0, by1, x3);
  for (; blocks > 0; blocks--, p += 16) x0 = sf_crc_fold_step(x0, by1, _mm_loadu_si128((const __m128i *)p));
  _mm_storeu_si128((__m128i *)out, x0);
}
#else
static inline int sf_crc_fold_available(void) { return 0; }
static inline void sf_crc32_fold(uint32_t reg, const uint8_t *p, size_t blocks, uint8_t *out) {
  (void)reg; (void)p; (void)blocks; (void)out;
}
#endif
#endif
