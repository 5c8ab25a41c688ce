#ifndef SYNCFILES_CZLIB_SHIM_H
#define SYNCFILES_CZLIB_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

// zlib's crc32 takes a length of type uInt (32 bits): a longer buffer is
// taken in pieces, continuing the register, so any size is one call here.
static inline uint32_t sf_crc32(const void *p, size_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  const Bytef *b = (const Bytef *)p;
  while (n > 0) {
    uInt step = n > 0x40000000u ? 0x40000000u : (uInt)n;
    c = crc32(c, b, step);
    b += step;
    n -= step;
  }
  return (uint32_t)c;
}
#endif
