#!/usr/bin/env python3
"""Builds side by side on files spread over many HTTPS hosts.

    python3 Benchmarks/tls-hosts.py --rounds 11 before=/tmp/syncfiles-old \\
        after=.build/x86_64-unknown-linux-gnu/release/syncfiles

One nginx (HTTP/1.1 over TLS, sessions kept for clients to resume) listens
on --hosts loopback addresses (127.0.0.1, 127.0.0.2, ...), each a host of
its own to a client. The manifest takes --files files of 16 KiB from each,
interleaved (the first file of every host, then the second, ...), under
the tool's default limits. nginx closes a connection after
--keepalive-requests requests. Each run starts with no destinations and no
journal; the order of the builds is reversed every other round. Prints
each build's median wall time, CPU (wait4) and full and resumed TLS
handshakes (nginx's `$ssl_session_reused`). An extension beside run.sh's
table (issue 15, TLS session reuse), not one of its workloads.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (its CA, nginx and data helpers)


def listen_on_all(nginx, hosts):
    """Adds a listen line per host to nginx's one server, and reloads it."""
    conf = os.path.join(nginx.dir, "nginx.conf")
    text = open(conf).read()
    line = "listen 127.0.0.1:%d ssl;" % nginx.port
    more = "".join(" listen %s:%d ssl;" % (h, nginx.port) for h in hosts[1:])
    open(conf, "w").write(text.replace(line, line + more))
    subprocess.run(["nginx", "-p", nginx.dir, "-c", conf, "-s", "reload"], check=True,
                   stderr=subprocess.DEVNULL)
    time.sleep(0.5)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows", nargs="+", help="NAME=PATH of a syncfiles build")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--hosts", type=int, default=12)
    ap.add_argument("--files", type=int, default=20, help="files per host")
    ap.add_argument("--keepalive-requests", type=int, default=5)
    args = ap.parse_args()
    rows = [(name, os.path.abspath(path)) for name, path in (r.split("=", 1) for r in args.rows)]
    work = tempfile.mkdtemp(prefix="tls-hosts-", dir="/var/tmp")
    os.chmod(work, 0o755)  # nginx's workers read the files
    hosts = ["127.0.0.%d" % (i + 1) for i in range(args.hosts)]
    tls = compare.make_ca(os.path.join(work, "ca"), ips=hosts)
    www = os.path.join(work, "www")
    os.makedirs(www)
    for i in range(args.files):
        compare.deterministic(os.path.join(www, "f%03d.bin" % i), 16 << 10, i)
    nginx = compare.Nginx(work, www, tls=tls, http2=False, keepalive_requests=args.keepalive_requests)
    try:
        listen_on_all(nginx, hosts)
        entries = ["  - {id: h%df%d, url: 'https://%s:%d/f%03d.bin', destination: h%d/f%03d.bin}"
                   % (h, i, hosts[h], nginx.port, i, h, i) for i in range(args.files) for h in range(len(hosts))]
        manifest = ("version: 1\nname: t\nroot: out\njournal: journal\ndefaults: {tls: {ca_file: '%s'}}\n"
                    "files:\n%s\n" % (tls["ca"], "\n".join(entries)))
        results = {name: [] for name, _ in rows}
        for r in range(args.rounds):
            for name, path in (rows if r % 2 == 0 else rows[::-1]):
                d = os.path.join(work, "run")
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                open(os.path.join(d, "m.yaml"), "w").write(manifest)
                mark = nginx.tls_mark()
                os.sync()
                t0 = time.perf_counter()
                p = subprocess.Popen([path, "apply", "--quiet", "m.yaml"], cwd=d, stderr=subprocess.DEVNULL)
                _, status, ru = os.wait4(p.pid, 0)
                wall = time.perf_counter() - t0
                if status != 0:
                    sys.exit("%s failed (status %d)" % (name, status))
                full, resumed = nginx.handshakes_since(mark)
                results[name].append((wall * 1000, (ru.ru_utime + ru.ru_stime) * 1000, full, resumed))
        print("%d hosts x %d files of 16 KiB over TLS (HTTP/1.1, %d requests a connection), %d rounds, medians"
              % (len(hosts), args.files, args.keepalive_requests, args.rounds))
        for name, _ in rows:
            a = results[name]
            med = [statistics.median(x[i] for x in a) for i in range(4)]
            print("  %-10s wall %7.1f ms  CPU %7.1f ms  handshakes: %d full, %d resumed" % (name, *med))
    finally:
        nginx.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
