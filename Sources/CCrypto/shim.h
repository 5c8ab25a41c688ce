#ifndef SYNCFILES_CCRYPTO_SHIM_H
#define SYNCFILES_CCRYPTO_SHIM_H
// SHA-256 from the libcrypto that libcurl already links (OpenSSL 3), through
// the EVP interface (the SHA256_* functions are deprecated in OpenSSL 3).
#include <openssl/evp.h>

static inline EVP_MD_CTX *sf_sha256_new(void) {
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  if (ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
    EVP_MD_CTX_free(ctx);
    return NULL;
  }
  return ctx;
}
static inline int sf_sha256_reset(EVP_MD_CTX *ctx) { return EVP_DigestInit_ex(ctx, EVP_sha256(), NULL); }
static inline int sf_sha256_update(EVP_MD_CTX *ctx, const void *data, size_t n) {
  return EVP_DigestUpdate(ctx, data, n);
}
// Writes 32 bytes to out.
static inline int sf_sha256_final(EVP_MD_CTX *ctx, unsigned char *out) {
  unsigned int n = 0;
  return EVP_DigestFinal_ex(ctx, out, &n);
}
static inline void sf_sha256_free(EVP_MD_CTX *ctx) { EVP_MD_CTX_free(ctx); }
#endif
