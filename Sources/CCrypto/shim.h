#ifndef SYNCFILES_CCRYPTO_SHIM_H
#define SYNCFILES_CCRYPTO_SHIM_H
// SHA-256 from the libcrypto that libcurl already links (OpenSSL 3), through
// the EVP interface (the SHA256_* functions are deprecated in OpenSSL 3).
#include <openssl/evp.h>

#include <stdatomic.h>

// The SHA-256 implementation, fetched from the default provider on first use
// and kept (each object file this function is inlined into keeps its own).
// Given `EVP_sha256()` instead, each EVP_DigestInit_ex fetches it again, a
// provider lookup for every file, since a hasher is set up and reset once a
// file.
// Threads that race here each fetch; one keeps its fetch, the others free
// theirs. A failed fetch falls back to the implicit one.
static inline const EVP_MD *sf_sha256_md(void) {
  static _Atomic(const EVP_MD *) kept;
  const EVP_MD *md = atomic_load_explicit(&kept, memory_order_acquire);
  if (md) return md;
  EVP_MD *fetched = EVP_MD_fetch(NULL, "SHA256", NULL);
  const EVP_MD *mine = fetched ? fetched : EVP_sha256();
  const EVP_MD *none = NULL;
  if (atomic_compare_exchange_strong(&kept, &none, mine)) return mine;
  EVP_MD_free(fetched);  // another thread kept its own (`none` now holds it)
  return none;
}

static inline EVP_MD_CTX *sf_digest_new(const EVP_MD *md) {
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  if (ctx && EVP_DigestInit_ex(ctx, md, NULL) != 1) {
    EVP_MD_CTX_free(ctx);
    return NULL;
  }
  return ctx;
}
static inline EVP_MD_CTX *sf_sha256_new(void) { return sf_digest_new(sf_sha256_md()); }
static inline int sf_sha256_reset(EVP_MD_CTX *ctx) { return EVP_DigestInit_ex(ctx, sf_sha256_md(), NULL); }
static inline int sf_sha256_update(EVP_MD_CTX *ctx, const void *data, size_t n) {
  return EVP_DigestUpdate(ctx, data, n);
}
// Writes 32 bytes to out.
static inline int sf_sha256_final(EVP_MD_CTX *ctx, unsigned char *out) {
  unsigned int n = 0;
  return EVP_DigestFinal_ex(ctx, out, &n);
}
static inline void sf_sha256_free(EVP_MD_CTX *ctx) { EVP_MD_CTX_free(ctx); }

// MD5, only to check an object store's ETag (the MD5 of a single-part
// upload): never as a checksum of our own. One call over a whole file.
static inline EVP_MD_CTX *sf_md5_new(void) { return sf_digest_new(EVP_md5()); }
#endif
