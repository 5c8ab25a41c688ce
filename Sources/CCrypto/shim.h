#ifndef SYNCFILES_CCRYPTO_SHIM_H
#define SYNCFILES_CCRYPTO_SHIM_H
// SHA-256 from the libcrypto that libcurl already links (OpenSSL 3), through
// the EVP interface (the SHA256_* functions are deprecated in OpenSSL 3).
#include <openssl/evp.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/provider.h>

#include <stdatomic.h>
#include <string.h>

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
// The other digests a signature or a checksum list may need: SHA-512 (a
// SHA512SUMS line), BLAKE2b-512 (a minisign signature of the file's hash).
static inline EVP_MD_CTX *sf_sha512_new(void) { return sf_digest_new(EVP_sha512()); }
static inline EVP_MD_CTX *sf_blake2b512_new(void) { return sf_digest_new(EVP_blake2b512()); }
// Writes the digest's size in bytes (at most EVP_MAX_MD_SIZE) to out.
static inline int sf_digest_final(EVP_MD_CTX *ctx, unsigned char *out) {
  unsigned int n = 0;
  return EVP_DigestFinal_ex(ctx, out, &n) == 1 ? (int)n : -1;
}

// Ed25519 (RFC 8032) over a whole message: 1 valid, 0 not, -1 the key is unusable.
static inline int sf_ed25519_verify(const unsigned char *pub32, const unsigned char *sig64, const unsigned char *msg,
                                    size_t n) {
  EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub32, 32);
  if (!key) return -1;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  int r = -1;
  if (ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) == 1) {
    r = EVP_DigestVerify(ctx, sig64, 64, msg, n) == 1 ? 1 : 0;
  }
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return r;
}

// A PEM public key (`-----BEGIN PUBLIC KEY-----`), or NULL.
static inline EVP_PKEY *sf_pem_public_key(const char *pem, size_t n) {
  BIO *bio = BIO_new_mem_buf(pem, (int)n);
  if (!bio) return NULL;
  EVP_PKEY *key = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
  BIO_free(bio);
  return key;
}
static inline void sf_pkey_free(EVP_PKEY *key) { EVP_PKEY_free(key); }
// 1 for an EC key on P-256, 0 for another key.
static inline int sf_pkey_is_p256(EVP_PKEY *key) {
  char group[64] = {0};
  size_t len = 0;
  if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC) return 0;
  if (EVP_PKEY_get_utf8_string_param(key, "group", group, sizeof group, &len) != 1) return 0;
  return strcmp(group, "prime256v1") == 0 || strcmp(group, "P-256") == 0;
}
// A DER signature of a SHA-256 digest (ECDSA, as cosign sign-blob makes):
// 1 valid, 0 not, -1 the check could not run.
static inline int sf_pkey_verify_sha256(EVP_PKEY *key, const unsigned char *sig, size_t sig_len,
                                        const unsigned char *digest32) {
  EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
  int r = -1;
  if (ctx && EVP_PKEY_verify_init(ctx) == 1 && EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) == 1) {
    r = EVP_PKEY_verify(ctx, sig, sig_len, digest32, 32) == 1 ? 1 : 0;
  }
  EVP_PKEY_CTX_free(ctx);
  return r;
}
// MD4, only for zsync's block checksums (its format fixes them). OpenSSL 3
// keeps MD4 in its legacy provider: it is loaded into a library context of
// its own, so the process's default context (and every other digest) is
// left as it was. NULL when the legacy provider is missing.
static inline const EVP_MD *sf_md4_md(void) {
  static _Atomic(const EVP_MD *) kept;
  const EVP_MD *md = atomic_load_explicit(&kept, memory_order_acquire);
  if (md) return md;
  OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
  if (!ctx) return NULL;
  if (!OSSL_PROVIDER_load(ctx, "legacy") || !OSSL_PROVIDER_load(ctx, "default")) return NULL;
  EVP_MD *fetched = EVP_MD_fetch(ctx, "MD4", NULL);
  if (!fetched) return NULL;
  const EVP_MD *none = NULL;
  if (atomic_compare_exchange_strong(&kept, &none, fetched)) return fetched;
  EVP_MD_free(fetched);  // another thread kept its own; its context stays too
  return none;
}
// MD4 of one block: 1 on success, writing 16 bytes to out.
static inline int sf_md4(const void *data, size_t n, unsigned char *out) {
  const EVP_MD *md = sf_md4_md();
  return md && EVP_Digest(data, n, out, NULL, md, NULL) == 1;
}
static inline EVP_MD_CTX *sf_sha1_new(void) { return sf_digest_new(EVP_sha1()); }
#endif
