/* The floor of the SPEC's steps on our stack (libcurl, libyaml, libcrypto, a
 * journal of checked records): what any client that does what the SPEC asks
 * has to do, written in C with nothing else in it. It leaves out what the
 * workloads do not need (retries, redirects, resume, hooks, reports), so it
 * errs low. One run:
 *   - reads the journal whole on a second thread while the manifest is
 *     parsed (libyaml events: name, root, journal, `defaults.tls.ca_file`,
 *     and each file's id, url and destination), again under the lock
 *     (flock on journal.lock) if the file changed meanwhile; checks each
 *     line's length and CRC-32 (zlib) and takes each task's latest record:
 *     size, mtime, ETag, Last-Modified, sha256;
 *   - lstat()s each destination (fstatat from the root folder): one the
 *     record vouches for (size and mtime as recorded) is revalidated, an
 *     absent one fetched, any other only counted;
 *   - sends each request `parallel` at a time on reused easy handles (HTTP/2
 *     multiplexed for https, as libcurl does by default), with the lines
 *     syncfiles sends (User-Agent, Accept-Encoding: identity; to
 *     revalidate also If-None-Match, If-Modified-Since, Cache-Control:
 *     max-age=0), and reads the status, Content-Length, ETag and
 *     Last-Modified in a header callback;
 *   - a fetch: before the first byte, makes the hidden partial in the
 *     destination's folder and writes the journal's record of it and its
 *     version; writes each byte and hashes it (SHA-256) as it comes; at the
 *     end checks the status and the size, and hands the file to a thread
 *     that makes each group of finished files (those ready within 5 ms of
 *     the first, as syncfiles groups them) durable (syncfs), renames
 *     each over its destination, fsyncs the folder and records each as
 *     installed;
 *   - a revalidation: records the task as unchanged after a 304;
 *   - records go out in syncfiles' record shape (length, CRC, JSON), every
 *     64 KiB and at the end, then one fdatasync; the journal is compacted
 *     (latest record per task, fdatasync, rename, the folder fsynced) when
 *     it holds more than four records a task, as syncfiles does.
 * A 200 to a revalidation is counted and its body dropped.
 *   cc -O2 -o spec-floor Benchmarks/spec-floor.c -lcurl -lyaml -lz -lcrypto -lpthread
 *   ./spec-floor m.yaml [PARALLEL]   (in the manifest's folder; prints the
 *   count of each status; SPEC_FLOOR_PHASES=1 prints each step's time) */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <openssl/evp.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>
#include <zlib.h>

typedef struct {
  char *id, *url, *dest;
  /* the latest record: where it is in the journal's bytes, and what it says */
  const char *record;
  size_t recordLength;
  long long size, mtimeNs;
  char etag[256], lastModified[64], sha256[65];
  int vouched;
  /* the answer */
  long status;
  char newEtag[256], newLastModified[64];
  struct curl_slist *lines;
  /* a fetch: its hidden partial (relative to the root folder), bytes, hash */
  int fetch, fd;
  char partial[1200];
  long long got, contentLength;
  EVP_MD_CTX *sha;
} Task;

static Task *tasks;
static size_t taskCount, taskCap;
static char name[256] = "", root[1024] = ".", journalName[1024] = "journal", caFile[1024] = "";
static char rootPath[PATH_MAX];
static int rootFd = -1;
static pthread_mutex_t journalLock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *what) {
  fprintf(stderr, "spec-floor: %s: %s\n", what, strerror(errno));
  exit(1);
}

/* ---- the manifest: libyaml events, a stack of containers ---- */

typedef struct {
  int isMap, wantKey;
  char key[64];
} Level;

static void setValue(Level *stack, int depth, const char *v) {
  const char *k = stack[depth].key;
  if (depth == 0) {
    if (!strcmp(k, "name")) snprintf(name, sizeof name, "%s", v);
    if (!strcmp(k, "root")) snprintf(root, sizeof root, "%s", v);
    if (!strcmp(k, "journal")) snprintf(journalName, sizeof journalName, "%s", v);
  } else if (depth == 2 && !strcmp(stack[0].key, "defaults") && !strcmp(stack[1].key, "tls")) {
    if (!strcmp(k, "ca_file")) snprintf(caFile, sizeof caFile, "%s", v);
  } else if (depth == 2 && !strcmp(stack[0].key, "files")) {
    Task *t = &tasks[taskCount - 1];
    if (!strcmp(k, "id")) t->id = strdup(v);
    if (!strcmp(k, "url")) t->url = strdup(v);
    if (!strcmp(k, "destination")) t->dest = strdup(v);
  }
}

static void readManifest(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) fail(path);
  yaml_parser_t p;
  yaml_event_t e;
  Level stack[64];
  int depth = -1, done = 0;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_file(&p, f);
  while (!done) {
    if (!yaml_parser_parse(&p, &e)) {
      fprintf(stderr, "spec-floor: %s: %s\n", path, p.problem);
      exit(1);
    }
    switch (e.type) {
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT:
      if (depth == 63) exit(1);
      depth++;
      stack[depth].isMap = e.type == YAML_MAPPING_START_EVENT;
      stack[depth].wantKey = 1;
      stack[depth].key[0] = 0;
      if (depth == 2 && stack[depth].isMap && !strcmp(stack[0].key, "files")) {
        if (taskCount == taskCap) {
          taskCap = taskCap ? taskCap * 2 : 1024;
          tasks = realloc(tasks, taskCap * sizeof *tasks);
        }
        memset(&tasks[taskCount++], 0, sizeof *tasks);
      }
      break;
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT:
      depth--;
      if (depth >= 0) stack[depth].wantKey = 1;
      break;
    case YAML_SCALAR_EVENT:
      if (depth >= 0 && stack[depth].isMap) {
        if (stack[depth].wantKey) {
          snprintf(stack[depth].key, sizeof stack[depth].key, "%s", (char *)e.data.scalar.value);
          stack[depth].wantKey = 0;
        } else {
          setValue(stack, depth, (char *)e.data.scalar.value);
          stack[depth].wantKey = 1;
        }
      }
      break;
    case YAML_STREAM_END_EVENT: done = 1; break;
    default: break;
    }
    yaml_event_delete(&e);
  }
  yaml_parser_delete(&p);
  fclose(f);
}

/* ---- the journal ---- */

#define FNV_START 14695981039346656037ULL

static uint64_t fnvBytes(const char *s, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
  return h;
}

static uint64_t fnv(const char *s, uint64_t h) { return fnvBytes(s, strlen(s), h); }

/* Open addressing over the qualified ids ("name/id"). */
static size_t *slots, slotCount;
static char **qualified;

static size_t findTask(const char *id, size_t n) {
  uint64_t h = fnvBytes(id, n, FNV_START);
  for (size_t s = h & (slotCount - 1);; s = (s + 1) & (slotCount - 1)) {
    if (slots[s] == SIZE_MAX) return SIZE_MAX;
    const char *q = qualified[slots[s]];
    if (strlen(q) == n && !memcmp(q, id, n)) return slots[s];
  }
}

static void indexTasks(void) {
  slotCount = 1;
  while (slotCount < taskCount * 2) slotCount <<= 1;
  slots = malloc(slotCount * sizeof *slots);
  memset(slots, 0xFF, slotCount * sizeof *slots);
  qualified = malloc(taskCount * sizeof *qualified);
  for (size_t i = 0; i < taskCount; i++) {
    size_t n = strlen(name) + strlen(tasks[i].id) + 2;
    qualified[i] = malloc(n);
    snprintf(qualified[i], n, "%s/%s", name, tasks[i].id);
    uint64_t h = fnv(qualified[i], FNV_START);
    size_t s = h & (slotCount - 1);
    while (slots[s] != SIZE_MAX) s = (s + 1) & (slotCount - 1);
    slots[s] = i;
  }
}

/* A JSON string's value after `key` within [p, end), unescaped; 0 when absent. */
static int field(const char *p, const char *end, const char *key, char *out, size_t cap) {
  size_t k = strlen(key);
  const char *at = memmem(p, (size_t)(end - p), key, k);
  if (!at) return 0;
  const char *s = at + k;
  size_t o = 0;
  while (s < end && *s != '"' && o + 1 < cap) {
    if (*s == '\\' && s + 1 < end) s++;
    out[o++] = *s++;
  }
  out[o] = 0;
  return 1;
}

static long long number(const char *p, const char *end, const char *key) {
  const char *at = memmem(p, (size_t)(end - p), key, strlen(key));
  return at ? strtoll(at + strlen(key), NULL, 10) : -1;
}

static char *journal;
static size_t journalLength, journalRecords;

/* The journal's good lines, in file order (a later one supersedes). */
typedef struct {
  const char *id, *body;
  size_t idLength, length;
} Line;
static Line *lines;
static size_t lineCount;

/* On a thread of its own while the manifest is parsed: the file read whole,
 * each line's length and CRC-32 checked, each good line's id found. */
static struct stat scanned;

static void *scanJournal(void *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NULL;
    fail(path);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) fail(path);
  scanned = st;
  journal = malloc((size_t)st.st_size + 1);
  ssize_t got = read(fd, journal, (size_t)st.st_size);
  if (got < 0) fail(journalName);
  journalLength = (size_t)got;
  close(fd);
  lines = malloc((journalLength / 64 + 1) * sizeof *lines);
  const char *p = memchr(journal, '\n', journalLength), *end = journal + journalLength;
  if (!p) return NULL;
  for (p++; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) break;
    char *after;
    unsigned long len = strtoul(p, &after, 10);
    unsigned long crc = strtoul(after + 1, &after, 16);
    const char *body = after + 1;
    if (body + len == nl && len > 64 && crc32(0, (const Bytef *)body, (uInt)len) == crc) {
      const char *idAt = body + strlen("{\"t\":\"task\",\"id\":\"");
      const char *idEnd = memchr(idAt, '"', (size_t)(nl - idAt));
      if (idEnd) lines[lineCount++] = (Line){idAt, body, (size_t)(idEnd - idAt), len};
    }
    p = nl + 1;
  }
  journalRecords = lineCount;
  return NULL;
}

/* Each task's latest record, and what it says of the installed file. */
static void matchJournal(void) {
  for (size_t k = 0; k < lineCount; k++) {
    size_t i = findTask(lines[k].id, lines[k].idLength);
    if (i != SIZE_MAX) {
      tasks[i].record = lines[k].body;
      tasks[i].recordLength = lines[k].length;
    }
  }
  for (size_t i = 0; i < taskCount; i++) {
    Task *t = &tasks[i];
    if (!t->record) continue;
    const char *end = t->record + t->recordLength;
    const char *in = memmem(t->record, t->recordLength, "\"installed\":{", 13);
    if (!in) continue;
    t->size = number(in, end, "\"size\":");
    t->mtimeNs = number(in, end, "\"mtime_ns\":");
    field(in, end, "\"etag\":\"", t->etag, sizeof t->etag);
    field(in, end, "\"last_modified\":\"", t->lastModified, sizeof t->lastModified);
    field(in, end, "\"sha256\":\"", t->sha256, sizeof t->sha256);
  }
}

/* ---- the requests ---- */

/* The field `name` (with its colon) of a header line, its value copied into
 * `out` without the spaces before it and the line end after it. */
static int headerValue(const char *b, size_t len, const char *name, char *out, size_t cap) {
  size_t v = strlen(name);
  if (len <= v || strncasecmp(b, name, v)) return 0;
  while (v < len && b[v] == ' ') v++;
  size_t e = len;
  while (e > v && (b[e - 1] == '\r' || b[e - 1] == '\n')) e--;
  if (e - v < cap) {
    memcpy(out, b + v, e - v);
    out[e - v] = 0;
  }
  return 1;
}

static size_t headerLine(char *b, size_t size, size_t n, void *u) {
  Task *t = u;
  size_t len = size * n;
  char length[32];
  if (len > 5 && !memcmp(b, "HTTP/", 5)) {
    const char *sp = memchr(b, ' ', len);
    t->status = sp ? strtol(sp + 1, NULL, 10) : 0;
    t->newEtag[0] = t->newLastModified[0] = 0;
    t->contentLength = -1;
  } else if (headerValue(b, len, "content-length:", length, sizeof length)) {
    t->contentLength = strtoll(length, NULL, 10);
  } else if (!headerValue(b, len, "etag:", t->newEtag, sizeof t->newEtag)) {
    headerValue(b, len, "last-modified:", t->newLastModified, sizeof t->newLastModified);
  }
  return len;
}

static size_t dropBody(char *p, size_t size, size_t n, void *u) {
  (void)p;
  (void)u;
  return size * n;
}

static void partialRecord(Task *t);

/* A fetch's body: the hidden partial is made, and its version journaled,
 * before the first byte; every byte is written and hashed as it comes. */
static size_t writeBody(char *b, size_t size, size_t n, void *u) {
  Task *t = u;
  size_t len = size * n;
  if (t->status != 200) return len;
  if (t->fd < 0) {
    t->fd = openat(rootFd, t->partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (t->fd < 0) return 0;
    partialRecord(t);
    t->sha = EVP_MD_CTX_new();
    EVP_DigestInit_ex(t->sha, EVP_sha256(), NULL);
  }
  for (size_t done = 0; done < len;) {
    ssize_t w = write(t->fd, b + done, len - done);
    if (w < 0) return 0;
    done += (size_t)w;
  }
  EVP_DigestUpdate(t->sha, b, len);
  t->got += (long long)len;
  return len;
}

static void prepare(CURL *e, Task *t) {
  char line[512];
  curl_easy_reset(e);
  curl_easy_setopt(e, CURLOPT_URL, t->url);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt(e, CURLOPT_USERAGENT, "syncfiles/0.1.0");
  if (caFile[0]) curl_easy_setopt(e, CURLOPT_CAINFO, caFile);
  t->lines = curl_slist_append(NULL, "Accept-Encoding: identity");
  if (t->fetch) {
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->lines);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, headerLine);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, writeBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(e, CURLOPT_PRIVATE, t);
    return;
  }
  if (t->etag[0]) {
    snprintf(line, sizeof line, "If-None-Match: %s", t->etag);
    t->lines = curl_slist_append(t->lines, line);
  }
  if (t->lastModified[0]) {
    snprintf(line, sizeof line, "If-Modified-Since: %s", t->lastModified);
    t->lines = curl_slist_append(t->lines, line);
  }
  t->lines = curl_slist_append(t->lines, "Cache-Control: max-age=0");
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->lines);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, headerLine);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, dropBody);
  curl_easy_setopt(e, CURLOPT_PRIVATE, t);
}

/* ---- the records ---- */

static char *out;
static size_t outLength, outCap;
static int journalFd = -1;

static void flushRecords(void) {
  size_t done = 0;
  while (done < outLength) {
    ssize_t w = write(journalFd, out + done, outLength - done);
    if (w < 0) fail(journalName);
    done += (size_t)w;
  }
  outLength = 0;
}

/* The record is built by appending, not by printf: a printf per record
 * would cost more than the record's bytes need. */
typedef struct {
  char *p;
} Cursor;

static void put(Cursor *c, const char *s) {
  size_t n = strlen(s);
  memcpy(c->p, s, n);
  c->p += n;
}

static void putEscaped(Cursor *c, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') *c->p++ = '\\';
    *c->p++ = *s;
  }
}

static void putNumber(Cursor *c, long long v) {
  char digits[24];
  int n = 0;
  unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
  do digits[n++] = (char)('0' + u % 10);
  while ((u /= 10) > 0);
  if (v < 0) *c->p++ = '-';
  while (n > 0) *c->p++ = digits[--n];
}

static void putHex(Cursor *c, uint64_t v, int digits) {
  for (int i = digits - 1; i >= 0; i--) *c->p++ = "0123456789abcdef"[(v >> (4 * i)) & 15];
}

/* `,"etag":"…","last_modified":"…"`, in both records' order. */
static void putValidators(Cursor *c, const char *etag, const char *date) {
  put(c, ",\"etag\":\"");
  putEscaped(c, etag);
  put(c, "\",\"last_modified\":\"");
  putEscaped(c, date);
  put(c, "\"");
}

static void recordStart(Cursor *c, Task *t) {
  put(c, "{\"t\":\"task\",\"id\":\"");
  putEscaped(c, name);
  put(c, "/");
  putEscaped(c, t->id);
  put(c, "\",\"fp\":\"");
  putHex(c, fnv(t->dest, fnv(t->url, FNV_START)), 16);
  put(c, "\"");
}

/* The record's line (length, CRC-32, body) into the buffer of records, under
 * the journal's lock; `now` writes it at once (a partial's record must be in
 * the file before the partial's first byte). */
static void appendLine(const char *body, size_t n, int now) {
  pthread_mutex_lock(&journalLock);
  if (outLength + n + 32 > outCap) {
    outCap = outCap ? outCap * 2 : 1 << 17;
    out = realloc(out, outCap);
  }
  Cursor o = {out + outLength};
  putNumber(&o, (long long)n);
  *o.p++ = ' ';
  putHex(&o, crc32(0, (const Bytef *)body, (uInt)n), 8);
  *o.p++ = ' ';
  memcpy(o.p, body, n);
  o.p += n;
  *o.p++ = '\n';
  outLength = (size_t)(o.p - out);
  if (now || outLength >= 1 << 16) flushRecords();
  pthread_mutex_unlock(&journalLock);
}

/* The outcome: `unchanged` after a 304, `installed` after a fetch. */
static void record(Task *t, const char *now) {
  /* id, dest and url come from the manifest and the server's fields are
   * bounded: 4 KiB holds any record W1, W4 and W7 make. */
  char body[4096];
  const char *tag = t->newEtag[0] ? t->newEtag : t->etag;
  const char *date = t->newLastModified[0] ? t->newLastModified : t->lastModified;
  Cursor c = {body};
  recordStart(&c, t);
  put(&c, ",\"last_check\":\"");
  put(&c, now);
  put(&c, "\",\"last_success\":\"");
  put(&c, now);
  put(&c, t->fetch ? "\",\"outcome\":\"installed\"" : t->status == 304 ? "\",\"outcome\":\"unchanged\""
                                                               : "\",\"outcome\":\"changed\"");
  put(&c, ",\"bytes\":");
  putNumber(&c, t->fetch ? t->got : 0);
  put(&c, ",\"http_status\":");
  putNumber(&c, t->status);
  put(&c, ",\"installed\":{\"size\":");
  putNumber(&c, t->size);
  put(&c, ",\"mtime_ns\":");
  putNumber(&c, t->mtimeNs);
  putValidators(&c, tag, date);
  put(&c, ",\"sha256\":\"");
  put(&c, t->sha256);
  put(&c, "\",\"lm_strong\":true}}");
  appendLine(body, (size_t)(c.p - body), 0);
}

/* A fetch's partial and the version it holds, written at once. */
static void partialRecord(Task *t) {
  char body[4096];
  Cursor c = {body};
  recordStart(&c, t);
  put(&c, ",\"partial\":{\"path\":\"");
  putEscaped(&c, rootPath);
  put(&c, "/");
  putEscaped(&c, t->partial);
  put(&c, "\",\"offset\":0");
  if (t->contentLength >= 0) {
    put(&c, ",\"total\":");
    putNumber(&c, t->contentLength);
  }
  putValidators(&c, t->newEtag, t->newLastModified);
  put(&c, ",\"lm_strong\":true}}");
  appendLine(body, (size_t)(c.p - body), 1);
}

/* ---- installs: a thread that makes groups of fetched files durable ---- */

static size_t *queue, queued;
static int fetchesDone;
static pthread_mutex_t queueLock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queueReady = PTHREAD_COND_INITIALIZER;

static void now(char out[32]) {
  time_t second = time(NULL);
  struct tm tm;
  gmtime_r(&second, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* What is queued 5 ms after the first file is one group: syncfs, then each
 * partial renamed over its destination, the folder fsynced, each outcome
 * recorded. */
static void *installer(void *unused) {
  (void)unused;
  size_t *group = malloc(taskCount * sizeof *group);
  for (;;) {
    pthread_mutex_lock(&queueLock);
    while (queued == 0 && !fetchesDone) pthread_cond_wait(&queueReady, &queueLock);
    /* As syncfiles does: once the first file is ready, 5 ms for more to join
     * its group (one syncfs for all of them). */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 5000000;
    if (until.tv_nsec >= 1000000000) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000;
    }
    while (!fetchesDone && pthread_cond_timedwait(&queueReady, &queueLock, &until) == 0) {}
    size_t n = queued;
    memcpy(group, queue, n * sizeof *group);
    queued = 0;
    int last = fetchesDone;
    pthread_mutex_unlock(&queueLock);
    if (n > 0) {
      if (syncfs(rootFd) != 0) fail("syncfs");
      for (size_t k = 0; k < n; k++)
        if (renameat(rootFd, tasks[group[k]].partial, rootFd, tasks[group[k]].dest) != 0) fail(tasks[group[k]].dest);
      if (fsync(rootFd) != 0) fail(root);
      char stamp[32];
      now(stamp);
      for (size_t k = 0; k < n; k++) record(&tasks[group[k]], stamp);
    }
    if (last && n == 0) break;
  }
  free(group);
  return NULL;
}

/* A fetch that ended: checked (status, size), hashed, handed to the installer. */
static int finishFetch(Task *t, CURLcode code) {
  if (t->fd < 0 && code == CURLE_OK && t->status == 200) writeBody(NULL, 0, 0, t);  // an empty body
  if (t->fd < 0) return 0;
  struct stat st;
  unsigned char digest[32];
  unsigned int length = 0;
  int ok = code == CURLE_OK && t->status == 200 && (t->contentLength < 0 || t->got == t->contentLength) &&
           fstat(t->fd, &st) == 0;
  EVP_DigestFinal_ex(t->sha, digest, &length);
  EVP_MD_CTX_free(t->sha);
  close(t->fd);
  t->fd = -1;
  if (!ok) return 0;
  for (int k = 0; k < 32; k++) snprintf(t->sha256 + 2 * k, 3, "%02x", digest[k]);
  t->size = st.st_size;
  t->mtimeNs = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
  pthread_mutex_lock(&queueLock);
  queue[queued++] = (size_t)(t - tasks);
  if (queued == 1) pthread_cond_signal(&queueReady);  // a busy installer takes the rest when it is done
  pthread_mutex_unlock(&queueLock);
  return 1;
}

/* Latest record per task, in a new file renamed over the journal. */
static void compact(void) {
  char path[1100];
  snprintf(path, sizeof path, "%s.compact", journalName);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail(path);
  free(journal);
  journal = NULL;
  int jfd = open(journalName, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (jfd < 0 || fstat(jfd, &st) != 0) fail(journalName);
  char *all = malloc((size_t)st.st_size);
  if (read(jfd, all, (size_t)st.st_size) != st.st_size) fail(journalName);
  close(jfd);
  /* Every task was recorded this run: its record is the last of its id. */
  const char *p = memchr(all, '\n', (size_t)st.st_size), *end = all + st.st_size;
  size_t keepFrom = (size_t)st.st_size, lines = 0;
  for (const char *q = end - 1; q > p && lines <= taskCount; q--)
    if (q[-1] == '\n') {
      lines++;
      if (lines == taskCount) keepFrom = (size_t)(q - all);
    }
  if (write(fd, all, (size_t)(p - all + 1)) < 0 || write(fd, all + keepFrom, (size_t)st.st_size - keepFrom) < 0)
    fail(path);
  if (fdatasync(fd) != 0) fail(path);
  close(fd);
  if (rename(path, journalName) != 0) fail(path);
  int folder = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder < 0 || fsync(folder) != 0) fail("the journal's folder");
  close(folder);
  free(all);
}

/* SPEC_FLOOR_PHASES=1: each step's milliseconds on stderr. */
static struct timespec phaseStart;
static void phase(const char *step) {
  if (!getenv("SPEC_FLOOR_PHASES")) return;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  fprintf(stderr, "%s %.2f ms\n", step,
          (double)(now.tv_sec - phaseStart.tv_sec) * 1e3 + (double)(now.tv_nsec - phaseStart.tv_nsec) / 1e6);
  phaseStart = now;
}

int main(int argc, char **argv) {
  clock_gettime(CLOCK_MONOTONIC, &phaseStart);
  if (argc < 2) {
    fprintf(stderr, "usage: %s MANIFEST [PARALLEL]\n", argv[0]);
    return 2;
  }
  int parallel = argc > 2 ? atoi(argv[2]) : 8;
  /* The journal the manifest is likely to name, read beside the parse. */
  static char guess[] = "journal";
  pthread_t scanner;
  pthread_create(&scanner, NULL, scanJournal, guess);
  readManifest(argv[1]);
  phase("manifest");
  char lockName[1100];
  snprintf(lockName, sizeof lockName, "%s.lock", journalName);
  int lock = open(lockName, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0) fail(lockName);
  indexTasks();
  pthread_join(scanner, NULL);
  /* Under the lock: read again unless it is the file read, unchanged. */
  struct stat current;
  int same = stat(journalName, &current) == 0 && !strcmp(journalName, guess) && current.st_ino == scanned.st_ino &&
             current.st_size == scanned.st_size && current.st_mtim.tv_nsec == scanned.st_mtim.tv_nsec &&
             current.st_mtim.tv_sec == scanned.st_mtim.tv_sec;
  if (!same) {
    free(journal);
    free(lines);
    journal = NULL;
    lines = NULL;
    lineCount = 0;
    scanJournal(journalName);
  }
  matchJournal();
  phase("lock and journal");

  /* The plan: a destination the journal vouches for is revalidated, an
   * absent one fetched; any other is only counted. */
  size_t vouched = 0, fetches = 0, neither = 0;
  if (mkdir(root, 0777) != 0 && errno != EEXIST) fail(root);
  if (!realpath(root, rootPath)) fail(root);
  rootFd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootFd < 0) fail(root);
  for (size_t i = 0; i < taskCount; i++) {
    Task *t = &tasks[i];
    struct stat st;
    int found = fstatat(rootFd, t->dest, &st, AT_SYMLINK_NOFOLLOW) == 0;
    t->vouched = found && t->record && S_ISREG(st.st_mode) && st.st_size == t->size &&
                 (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec == t->mtimeNs;
    t->fetch = !found && errno == ENOENT;
    t->fd = -1;
    if (t->fetch) {
      const char *slash = strrchr(t->dest, '/');
      int folder = slash ? (int)(slash - t->dest + 1) : 0;
      snprintf(t->partial, sizeof t->partial, "%.*s.%s.syncfiles-partial", folder, t->dest, t->dest + folder);
    }
    vouched += t->vouched;
    fetches += t->fetch;
    neither += !t->vouched && !t->fetch;
  }
  phase("lstat");
  journalFd = open(journalName, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (journalFd < 0) fail(journalName);
  struct stat js;
  if (fstat(journalFd, &js) != 0) fail(journalName);
  if (js.st_size == 0 && write(journalFd, "syncfiles-journal 1\n", 20) != 20) fail(journalName);
  pthread_t installs;
  queue = malloc((taskCount + 1) * sizeof *queue);
  if (fetches) pthread_create(&installs, NULL, installer, NULL);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURLM *multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)parallel);
  CURL **idle = calloc((size_t)parallel, sizeof *idle);
  int idleCount = 0;
  for (int i = 0; i < parallel; i++) idle[idleCount++] = curl_easy_init();
  long statuses[600] = {0};
  size_t next = 0, running = 0, failed = 0;
  char stamp[32];
  time_t stampSecond = 0;
  while (next < taskCount || running > 0) {
    while (next < taskCount && idleCount > 0) {
      Task *t = &tasks[next++];
      if (!t->vouched && !t->fetch) continue;
      CURL *e = idle[--idleCount];
      prepare(e, t);
      curl_multi_add_handle(multi, e);
      running++;
    }
    int still = 0;
    curl_multi_perform(multi, &still);
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(multi, &left))) {
      if (m->msg != CURLMSG_DONE) continue;
      Task *t;
      CURLcode code = m->data.result;
      curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&t);
      curl_multi_remove_handle(multi, m->easy_handle);
      idle[idleCount++] = m->easy_handle;
      running--;
      curl_slist_free_all(t->lines);
      statuses[t->status >= 0 && t->status < 600 ? t->status : 0]++;
      if (t->fetch) {
        failed += !finishFetch(t, code);
        continue;
      }
      if (time(NULL) != stampSecond) {
        stampSecond = time(NULL);
        now(stamp);
      }
      record(t, stamp);
    }
    if (running > 0 && (next >= taskCount || idleCount == 0)) curl_multi_poll(multi, NULL, 0, 1000, NULL);
  }
  phase("requests");
  if (fetches) {
    pthread_mutex_lock(&queueLock);
    fetchesDone = 1;
    pthread_cond_signal(&queueReady);
    pthread_mutex_unlock(&queueLock);
    pthread_join(installs, NULL);
    phase("last installs");
  }
  flushRecords();
  if (fdatasync(journalFd) != 0) fail(journalName);
  close(journalFd);
  /* Compaction keeps the last record of each task: written in task order
   * only by a run that revalidated every task. */
  if (vouched == taskCount && journalRecords + vouched > 4 * taskCount) compact();
  phase("fdatasync and compaction");
  for (int c = 0; c < 600; c++)
    if (statuses[c]) printf("%d %ld\n", c, statuses[c]);
  if (neither) printf("neither vouched nor absent %zu\n", neither);
  if (failed) printf("failed %zu\n", failed);
  for (int i = 0; i < idleCount; i++) curl_easy_cleanup(idle[i]);
  curl_multi_cleanup(multi);
  curl_global_cleanup();
  close(rootFd);
  close(lock);
  return failed ? 1 : 0;
}
