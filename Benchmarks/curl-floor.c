/* W4's floor on our stack: libcurl's multi interface revalidating every URL
 * of a list, `parallel` at a time, each with the If-Modified-Since header
 * that follows its URL on the line (after a tab; nginx answers 304 only to
 * the exact date), easy handles reused, bodies dropped. No
 * manifest, no journal, no files: only what libcurl costs per request.
 * (The header, not CURLOPT_TIMECONDITION: libcurl closes the connection after
 * every 304 it gets under a time condition.) `pipewait` sets CURLOPT_PIPEWAIT
 * as syncfiles does, to see what it costs on HTTP/1.1.
 *   cc -O2 -o curl-floor Benchmarks/curl-floor.c -lcurl
 *   ./curl-floor LIST [PARALLEL [pipewait]]   (prints the count of each status) */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t drop(char *p, size_t size, size_t n, void *u) {
  (void)p;
  (void)u;
  return size * n;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIST [PARALLEL]\n", argv[0]);
    return 2;
  }
  int parallel = argc > 2 ? atoi(argv[2]) : 8;
  int pipewait = argc > 3 && strcmp(argv[3], "pipewait") == 0;
  FILE *f = fopen(argv[1], "r");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  char **urls = NULL;
  struct curl_slist **dates = NULL;
  size_t count = 0, cap = 0;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = 0;
    if (!*line) continue;
    if (count == cap) {
      cap = cap ? cap * 2 : 1024;
      urls = realloc(urls, cap * sizeof *urls);
      dates = realloc(dates, cap * sizeof *dates);
    }
    char *tab = strchr(line, '\t');
    dates[count] = NULL;
    if (tab) {
      *tab = 0;
      char header[256];
      snprintf(header, sizeof header, "If-Modified-Since: %s", tab + 1);
      dates[count] = curl_slist_append(NULL, header);
    }
    urls[count++] = strdup(line);
  }
  fclose(f);

  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURLM *multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)parallel);
  size_t next = 0, running = 0;
  long statuses[600] = {0};
  CURL **idle = calloc((size_t)parallel, sizeof *idle);
  int idleCount = 0;
  for (int i = 0; i < parallel; i++) idle[idleCount++] = curl_easy_init();

  while (next < count || running > 0) {
    while (next < count && idleCount > 0) {
      CURL *e = idle[--idleCount];
      curl_easy_reset(e);
      curl_easy_setopt(e, CURLOPT_URL, urls[next]);
      curl_easy_setopt(e, CURLOPT_HTTPHEADER, dates[next]);
      next++;
      curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, drop);
      if (pipewait) curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
      curl_multi_add_handle(multi, e);
      running++;
    }
    int still = 0;
    curl_multi_perform(multi, &still);
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(multi, &left))) {
      if (m->msg != CURLMSG_DONE) continue;
      long code = 0;
      curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &code);
      statuses[code >= 0 && code < 600 ? code : 0]++;
      curl_multi_remove_handle(multi, m->easy_handle);
      idle[idleCount++] = m->easy_handle;
      running--;
    }
    if (running > 0 && next >= count) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    else if (running > 0 && idleCount == 0) curl_multi_poll(multi, NULL, 0, 1000, NULL);
  }
  for (int c = 0; c < 600; c++)
    if (statuses[c]) printf("%d %ld\n", c, statuses[c]);
  for (int i = 0; i < idleCount; i++) curl_easy_cleanup(idle[i]);
  curl_multi_cleanup(multi);
  for (size_t i = 0; i < count; i++) curl_slist_free_all(dates[i]);
  curl_global_cleanup();
  return 0;
}
