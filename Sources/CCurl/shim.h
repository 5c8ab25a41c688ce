#ifndef SYNCFILES_CCURL_SHIM_H
#define SYNCFILES_CCURL_SHIM_H
#include <curl/curl.h>

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
#endif
