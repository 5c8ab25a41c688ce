#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 server for syncfiles' tests (loopback only).

    python3 faultserver.py DIR        prints "port N" on stdout, then serves

Routes live in DIR/routes.json, re-read on every request, so a test changes
behaviour (content, ETag, faults) between requests by rewriting it:

    {"/a.bin": {"file": "a.bin",            # body: DIR/data/a.bin
                "etag": "\\"v1\\"",          # ETag (weak ones start with W/)
                "last_modified": "Sat, 21 Nov 2026 10:00:00 GMT",
                "ignore_range": false,      # answer Range with the whole body (200)
                "range_answer": {"file": "old.bin", "etag": "\\"v0\\""},
                                            # answer Range with this other version, whole
                                            # (a cache serving its previous copy while it refreshes)
                "drop_after": 1000,         # close the connection after N body bytes...
                "drop_times": 1,            # ...on the first K requests (default: always)
                "trickle_bps": 2000,        # send slowly
                "range_delay": 2.5,         # answer the path's first Range request after N seconds
                "fail_first": 2, "fail_status": 503, "retry_after": "1",
                "redirect": {"status": 302, "location": "http://..."},
                "extra_bytes": 100,         # send more than Content-Length declares
                "content_range_shift": 10,  # lie in Content-Range by this many bytes
                "require": {"x-token": "s3cret"},   # 401 unless these headers match
                "status": 404,              # a plain error status...
                "error_body": "<Error>…",   # ...with this body (an object store's XML)
                "always_304": true,         # 304 Not Modified, whatever was asked
                "gzip": true,               # gzip the body and say so, whatever was asked
                "close_delimited": true,    # no Content-Length: the close marks the end...
                "close_after": 1000,        # ...which comes after N bytes (default: all)
                "huge_header": 1000000,     # one header line of N bytes
                "many_headers": 10000,      # N header lines
                "short_body": 1000,         # full Content-Length, N bytes, then a clean close
                                            # (on the first "drop_times" requests)
                "endless_chunked": true,    # chunks until the client goes (or 1 GiB, or 60 s)
                "hang": 30}}                # wait N seconds before answering at all

Every request is appended to DIR/requests.jsonl (method, path, headers, a
POST's body, and
"in_flight": requests being served when it arrived, itself included).
"""
import json
import os
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]
counts = {}
range_delayed = set()  # paths whose first Range request was delayed
in_flight = 0
lock = threading.Lock()


def routes():
    try:
        with open(os.path.join(DIR, "routes.json")) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.serve(head=True)

    def do_GET(self):
        self.serve(head=False)

    def do_POST(self):
        # A ping's body (a monitor's receiver): logged, then answered as a GET.
        length = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(length) if length > 0 else b""
        self.serve(head=False)

    def send(self, status, headers, body=b"", head=False, declared=None):
        self.send_response(status)
        length = len(body) if declared is None else declared
        self.send_header("Content-Length", str(length))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def serve(self, head):
        global in_flight
        path = self.path.split("?")[0]
        with lock:
            in_flight += 1
            n = counts.get(path, 0) + 1
            counts[path] = n
            with open(os.path.join(DIR, "requests.jsonl"), "a") as f:
                f.write(json.dumps({"n": n, "method": self.command, "path": path, "in_flight": in_flight,
                                    "headers": {k.lower(): v for k, v in self.headers.items()},
                                    "body": getattr(self, "body", b"").decode("utf-8", "replace")}) + "\n")
        try:
            self.respond(path, n, head)
        finally:
            with lock:
                in_flight -= 1

    def respond(self, path, n, head):
        r = routes().get(path)
        if r is None:
            return self.send(404, [], b"not found\n", head)
        if "hang" in r:
            time.sleep(r["hang"])
        if n <= r.get("fail_first", 0):
            hs = [("Retry-After", r["retry_after"])] if "retry_after" in r else []
            return self.send(r.get("fail_status", 503), hs, b"busy\n", head)
        if "status" in r:
            return self.send(r["status"], [], r.get("error_body", "error page\n").encode(), head)
        if r.get("always_304"):
            return self.send(304, [("ETag", r.get("etag", '"x"'))], b"", True)
        if "redirect" in r:
            return self.send(r["redirect"].get("status", 302), [("Location", r["redirect"]["location"])], b"", head)
        for k, v in r.get("require", {}).items():
            if self.headers.get(k) != v:
                return self.send(401, [], b"unauthorized\n", head)
        if "range_answer" in r and self.headers.get("Range"):
            r = dict(r, **r["range_answer"], ignore_range=True)
        with open(os.path.join(DIR, "data", r["file"]), "rb") as f:
            body = f.read()
        etag = r.get("etag")
        lm = r.get("last_modified")
        validators = ([("ETag", etag)] if etag else []) + ([("Last-Modified", lm)] if lm else [])
        validators.append(("Accept-Ranges", "bytes"))
        inm = self.headers.get("If-None-Match")
        ims = self.headers.get("If-Modified-Since")
        if (inm is not None and etag is not None and inm == etag) or (inm is None and ims is not None and ims == lm):
            return self.send(304, validators, b"", True)
        status, start, end = 200, 0, len(body)
        rng = self.headers.get("Range")
        if rng and not r.get("ignore_range") and rng.startswith("bytes=") and "," not in rng:
            if_range = self.headers.get("If-Range")
            if if_range is None or if_range == etag or (etag is None and if_range == lm):
                first, _, last = rng[6:].partition("-")
                start = int(first)
                end = min(len(body), int(last) + 1) if last else len(body)
                if start >= len(body):
                    return self.send(416, validators + [("Content-Range", "bytes */%d" % len(body))], b"", head)
                status = 206
        part = body[start:end]
        headers = list(validators)
        if r.get("huge_header"):
            headers.append(("X-Huge", "a" * r["huge_header"]))
        for i in range(r.get("many_headers", 0)):
            headers.append(("X-Header-%d" % i, "v"))
        if r.get("endless_chunked"):
            return self.endless(headers, head)
        if r.get("close_delimited"):
            self.send_response(200)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Connection", "close")
            self.end_headers()
            if not head:
                self.wfile.write(body[:r.get("close_after", len(body))])
                self.wfile.flush()
            self.close_connection = True
            return
        if r.get("gzip"):
            import gzip
            part = gzip.compress(part)
            headers.append(("Content-Encoding", "gzip"))
        if status == 206 and r.get("range_delay"):
            with lock:
                first = path not in range_delayed
                range_delayed.add(path)
            if first:
                time.sleep(r["range_delay"])
        if status == 206:
            shown = start + r.get("content_range_shift", 0)
            headers.append(("Content-Range", "bytes %d-%d/%d" % (shown, end - 1, len(body))))
        self.send_response(status)
        self.send_header("Content-Length", str(len(part)))
        for k, v in headers:
            self.send_header(k, v)
        extra = r.get("extra_bytes", 0)
        if extra:
            self.send_header("Connection", "close")
        self.end_headers()
        if head:
            return
        short = r.get("short_body")
        if short is not None and n <= r.get("drop_times", 1 << 30):
            self.wfile.write(part[:short])
            self.wfile.flush()
            self.close_connection = True
            return
        drop = r.get("drop_after")
        if drop is not None and n <= r.get("drop_times", 1 << 30):
            self.wfile.write(part[:drop])
            self.wfile.flush()
            # An abrupt close (RST), as a crashed server or a cut cable would do.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        bps = r.get("trickle_bps")
        if bps:
            # Per connection, as a CDN caps each one.
            chunk = max(1, bps // 10)
            try:
                for i in range(0, len(part), chunk):
                    self.wfile.write(part[i:i + chunk])
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                self.close_connection = True  # the client cut the range short
        else:
            self.wfile.write(part)
        if extra:
            self.wfile.write(b"X" * extra)
            self.close_connection = True


    def endless(self, headers, head):
        """A chunked body that never ends, bounded so a broken test cannot run forever."""
        self.send_response(200)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.close_connection = True
        if head:
            return
        chunk = b"z" * 65536
        deadline = time.time() + 60
        try:
            for _ in range(1 << 14):  # at most 1 GiB
                if time.time() > deadline:
                    break
                self.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        except OSError:
            pass  # the client went away: that is the point


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    server = Server(("127.0.0.1", 0), Handler)
    print("port %d" % server.server_address[1], flush=True)
    server.serve_forever()
