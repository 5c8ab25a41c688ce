#ifndef SYNCFILES_CCURL_SHIM_H
#define SYNCFILES_CCURL_SHIM_H
#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>

// curl_easy_setopt / curl_easy_getinfo / curl_multi_setopt are variadic, which
// Swift cannot call. One typed wrapper per argument kind; Swift code calls
// these and nothing variadic.

typedef size_t (*sf_curl_data_cb)(char *ptr, size_t size, size_t nmemb, void *userdata);

static inline CURLcode sf_easy_setopt_long(CURL *h, CURLoption o, long v) {
  return curl_easy_setopt(h, o, v);
}
static inline CURLcode sf_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) {
  return curl_easy_setopt(h, o, v);
}
static inline CURLcode sf_easy_setopt_string(CURL *h, CURLoption o, const char *v) {
  return curl_easy_setopt(h, o, v);
}
static inline CURLcode sf_easy_setopt_pointer(CURL *h, CURLoption o, void *v) {
  return curl_easy_setopt(h, o, v);
}
static inline CURLcode sf_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) {
  return curl_easy_setopt(h, o, v);
}
static inline CURLcode sf_easy_setopt_data_cb(CURL *h, CURLoption o, sf_curl_data_cb v) {
  return curl_easy_setopt(h, o, v);
}
typedef int (*sf_curl_debug_cb)(CURL *h, curl_infotype type, char *data, size_t size, void *userdata);
static inline CURLcode sf_easy_setopt_debug_cb(CURL *h, sf_curl_debug_cb v) {
  return curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, v);
}
// The kinds of text the debug callback receives (curl_infotype values).
static const int sf_info_text = CURLINFO_TEXT;
static const int sf_info_header_in = CURLINFO_HEADER_IN;
static const int sf_info_header_out = CURLINFO_HEADER_OUT;
static const int sf_error_size = CURL_ERROR_SIZE;
static const long sf_netrc_optional = CURL_NETRC_OPTIONAL;

// Returned by a write callback to pause the transfer (the rate cap); the
// same bytes are delivered again after curl_easy_pause(h, CURLPAUSE_CONT).
static const size_t sf_writefunc_pause = CURL_WRITEFUNC_PAUSE;
static const int sf_pause_cont = CURLPAUSE_CONT;

static inline CURLcode sf_easy_getinfo_long(CURL *h, CURLINFO i, long *out) {
  return curl_easy_getinfo(h, i, out);
}
static inline CURLcode sf_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *out) {
  return curl_easy_getinfo(h, i, out);
}
static inline CURLcode sf_easy_getinfo_string(CURL *h, CURLINFO i, const char **out) {
  char *p = NULL;
  CURLcode rc = curl_easy_getinfo(h, i, &p);
  *out = p;
  return rc;
}
static inline CURLMcode sf_multi_setopt_long(CURLM *m, CURLMoption o, long v) {
  return curl_multi_setopt(m, o, v);
}

// Fields of CURLMsg (a struct holding a union).
static inline CURL *sf_msg_easy(const CURLMsg *m) { return m->easy_handle; }
static inline int sf_msg_is_done(const CURLMsg *m) { return m->msg == CURLMSG_DONE; }
static inline CURLcode sf_msg_result(const CURLMsg *m) { return m->data.result; }

// Runtime facts about the linked libcurl.
static inline const char *sf_curl_version_string(void) {
  return curl_version_info(CURLVERSION_NOW)->version;
}
static inline const char *sf_curl_ssl_version_string(void) {
  const char *s = curl_version_info(CURLVERSION_NOW)->ssl_version;
  return s ? s : "";
}
// A share of TLS sessions between easy handles (CURLSH), with a mutex for
// each kind of data libcurl locks: handles are set up on one thread and
// driven on another, so the share's lock callbacks must really lock.
typedef struct sf_share {
  CURLSH *share;
  pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
} sf_share;

static void sf_share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *u) {
  (void)h;
  (void)a;
  pthread_mutex_lock(&((sf_share *)u)->locks[d]);
}
static void sf_share_unlock(CURL *h, curl_lock_data d, void *u) {
  (void)h;
  pthread_mutex_unlock(&((sf_share *)u)->locks[d]);
}

// NULL when libcurl cannot make a share or will not share TLS sessions.
static inline sf_share *sf_share_new(void) {
  sf_share *s = calloc(1, sizeof(sf_share));
  if (!s) return NULL;
  s->share = curl_share_init();
  if (!s->share) {
    free(s);
    return NULL;
  }
  for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&s->locks[i], NULL);
  if (curl_share_setopt(s->share, CURLSHOPT_LOCKFUNC, sf_share_lock) != CURLSHE_OK ||
      curl_share_setopt(s->share, CURLSHOPT_UNLOCKFUNC, sf_share_unlock) != CURLSHE_OK ||
      curl_share_setopt(s->share, CURLSHOPT_USERDATA, (void *)s) != CURLSHE_OK ||
      curl_share_setopt(s->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK) {
    curl_share_cleanup(s->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&s->locks[i]);
    free(s);
    return NULL;
  }
  return s;
}

// Call only once no easy handle uses the share (each one cleaned up).
static inline void sf_share_free(sf_share *s) {
  curl_share_cleanup(s->share);
  for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&s->locks[i]);
  free(s);
}

static inline CURLcode sf_easy_set_share(CURL *h, sf_share *s) {
  return curl_easy_setopt(h, CURLOPT_SHARE, s->share);
}
#endif
