#!/usr/bin/env python3
"""syncfiles side by side with curl, aria2c and wget2 on one nginx (loopback).

    Benchmarks/run.sh [--rounds N] [--only W1,W3] [--json FILE]

Generates deterministic data, starts nginx on a free loopback port (stopped
by its pid at the end), runs each workload for each tool in alternation
(A B C D, A B C D, ...) and prints medians, the ratio of each tool's median
to syncfiles', CPU time (user+sys), peak memory (GNU time's %M) and the
CPU time nginx's workers spent serving each run (client and server share
the machine's cores), then writes the figures as JSON.

Each run of W1-W5, W7, W7h1, W3h2 and W8 gets a new ext4 on a loop device, as
Benchmarks/ab.py does: the workload's lists are copied in (for W4 also the
tool's own state: its destinations with their times and, for syncfiles, its
journal), the tool runs there, and the file system is unmounted. No run
pays for the inodes or blocks an earlier one freed, or for a journal
another run's records grew. `--same-fs` runs in the workload's folder
instead (not root, or no mkfs.ext4), as before.

W7h1 and W3h2 are not among issue 15's workloads. W7h1: W7's files over
TLS with HTTP/1.1 only, the server closing each connection after 100
requests, so that each tool's TLS handshakes (full or resumed, counted from
nginx's `$ssl_session_reused`) show beside its times. W3h2: one file of
--w8 bytes with its sha256 over TLS + HTTP/2, which libcurl hands over 16
KiB at a time.

What the tools guarantee differs, and the table does not hide it: syncfiles
writes each file to a hidden partial, checks it, fsyncs it, renames it over
the destination and fsyncs the folder (W3 also checks sha256); curl, wget2
and aria2c write in place and do not fsync (W3's curl row runs `sync` after,
as the issue asks).
"""
import argparse
import email.utils
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class RunFileSystem:
    """A new ext4 for each run (no journal, inode tables written at mkfs),
    mounted at `mount` over a loop device (direct I/O) on an image in `work`.
    run.sh's runs and ab.py's both use it."""

    def __init__(self, work, size, mount="/mnt/syncfiles-bench"):
        self.image = os.path.join(work, "run-fs.img")
        self.size = size
        self.mount = mount
        self.device = None
        os.makedirs(mount, exist_ok=True)
        subprocess.run(["umount", mount], stderr=subprocess.DEVNULL)
        # Every block of the image written once, now: no run's writes are the
        # first to a block of BENCH_DIR's file system (which allocates it), as
        # only the first rounds' would be otherwise.
        subprocess.run(["dd", "if=/dev/zero", "of=" + self.image, "bs=4M", "count=%d" % (size >> 22),
                        "conv=fsync", "status=none"], check=True)

    def fresh(self):
        """A new, empty file system (the one before unmounted); returns the
        path of the run's folder in it, not made yet."""
        self.leave()
        subprocess.run(["truncate", "-s", str(self.size), self.image], check=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-E",
                        "lazy_itable_init=0,lazy_journal_init=0", self.image], check=True)
        # Direct I/O: the loop device writes through to the image file, not
        # through a second page cache (1 GiB written and fsynced: 1.1 GB/s
        # this way, 0.78 GB/s buffered, 1.2 GB/s on BENCH_DIR's own ext4).
        self.device = subprocess.run(["losetup", "--direct-io=on", "--find", "--show", self.image],
                                     capture_output=True, text=True, check=True).stdout.strip()
        subprocess.run(["mount", self.device, self.mount], check=True)
        return os.path.join(self.mount, "w")

    def enter(self, src, state):
        """A new file system holding `src`'s top-level files (the workload's
        lists), or with `state` all of `src` (W4: what the tool's first fetch
        left, times kept); returns the run's folder in it, with an empty dest/."""
        d = self.fresh()
        if state:
            subprocess.run(["cp", "-a", src, d], check=True)
        else:
            os.makedirs(d)
            for f in os.listdir(src):
                if os.path.isfile(os.path.join(src, f)) and f not in ("journal", "journal.lock"):
                    shutil.copy2(os.path.join(src, f), d)
        os.makedirs(os.path.join(d, "dest"), exist_ok=True)
        os.chmod(d, 0o755)
        return d

    def leave(self):
        """Unmounts the run's file system, if one is mounted."""
        if self.device is None:
            return
        subprocess.run(["umount", self.mount], check=True)
        subprocess.run(["losetup", "-d", self.device], check=True)
        self.device = None

    @staticmethod
    def usable():
        return os.geteuid() == 0 and shutil.which("mkfs.ext4") is not None


def curl_z_config(base, names):
    """curl's config to revalidate each file against its copy in dest/ (W4):
    one block per file, `next` between them (without it curl applies the
    last time-cond to every URL, and each file made in another second than
    the last was fetched again in every round), the server's time kept."""
    return "next\n".join('url = "%s/%s"\noutput = "dest/%s"\ntime-cond = "dest/%s"\nremote-time\n'
                         % (base, n, n, n) for n in names)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# Peak memory through GNU time: wait4's ru_maxrss counts a child's size from
# before its exec, when it is still a copy of this Python, so every tool
# smaller than this script would show this script's size.
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run(argv, cwd=None, env=None):
    """Runs argv; returns (wall seconds, cpu seconds, peak RSS MiB, exit status)."""
    # stderr to a file, not a pipe: a chatty tool must not block on a full pipe.
    with tempfile.TemporaryFile() as errf, tempfile.NamedTemporaryFile(mode="r") as peakf:
        full = [GNU_TIME, "-f", "%M", "-o", peakf.name, "--"] + argv if GNU_TIME else argv
        start = time.monotonic()
        p = subprocess.Popen(full, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=errf)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        errf.seek(0)
        err = errf.read().decode(errors="replace")
        # GNU time writes "Command exited with non-zero status N" before the figure.
        words = peakf.read().split()
        peak = int(words[-1]) / 1024.0 if GNU_TIME and words else ru.ru_maxrss / 1024.0
    if p.returncode not in (0,):
        sys.stderr.write("  ! %s exited %d: %s\n" % (argv[0], p.returncode, err.strip()[-300:]))
    return wall, ru.ru_utime + ru.ru_stime, peak, p.returncode


# --callgrind: where a syncfiles run's user-space instructions go. Each part
# is the inclusive count of the function that begins it (callgrind_annotate
# --inclusive=yes, names demangled); the parts on other threads are counted
# on those threads. "rest" is the total less the parts: the dynamic loader,
# the Swift runtime's start, the report and the exit.
PARTS = [
    ("argument parsing", "ParsableCommand.parseAsRoot("),
    ("manifests: libyaml and decoding (main thread)", "LoadedSession.manifests("),
    ("manifest entries decoded (their thread)", "PipelinedFiles.work()"),
    ("journal read and decoded (its thread)", "JournalPrefetch.start(path:)"),
    ("lock, journal check, facts, plan", "ApplySession.init("),
    ("runner: set-up before the transfers", "Runner.run()"),
    ("runner: task states, journal records", "Runner.transferAll()"),
    ("engine thread", "TransferEngine.loop()"),
    ("install thread", "InstallQueue.loop()"),
    ("hash thread", "HashRing.work()"),
]
# Shown inside a part, not added to the rest. Under valgrind the CPU's SHA
# extensions are hidden: OpenSSL hashes in software, about 28 instructions a
# byte, where the real run takes a small fraction of that.
INNER = [
    ("in libcurl (curl_multi_perform)", "curl_multi_perform"),
    ("SHA-256 in libcrypto (software under valgrind)", "EVP_DigestUpdate"),
]


def callgrind(argv, cwd, out):
    """Runs argv (and any child) under callgrind; returns the files it wrote."""
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.unlink(os.path.join(out, f))
    cmd = ["valgrind", "--tool=callgrind", "--trace-children=yes", "--callgrind-out-file=%s/cg.%%p" % out]
    p = subprocess.run(cmd + argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.stderr.write("  ! %s under callgrind exited %d: %s\n" % (argv[0], p.returncode, p.stderr[-300:]))
    return [os.path.join(out, f) for f in sorted(os.listdir(out))]


def inclusive(path):
    """(count, demangled function) of each line of callgrind_annotate --inclusive=yes."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                          capture_output=True, text=True).stdout
    if shutil.which("swift"):
        text = subprocess.run(["swift", "demangle", "--simplified"], input=text, capture_output=True,
                              text=True).stdout
    rows = []
    for line in text.splitlines():
        words = line.split(None, 2)
        if len(words) == 3 and words[0].replace(",", "").isdigit() and words[1].startswith("("):
            rows.append((int(words[0].replace(",", "")), words[2]))
    return rows


def instruction_parts(paths):
    """Total instructions of all files, and of a syncfiles run its parts."""
    total, parts = 0, {}
    for path in paths:
        rows = inclusive(path)
        total += next((n for n, f in rows if f.startswith("PROGRAM TOTALS")), 0)
        for name, fn in PARTS + INNER:
            n = max((n for n, f in rows if fn in f), default=0)
            if n:
                parts[name] = parts.get(name, 0) + n
    if "runner: set-up before the transfers" not in parts:
        return total, {k: v for k, v in parts.items() if k in dict(INNER)}  # not a syncfiles run
    parts["runner: set-up before the transfers"] -= parts.get("runner: task states, journal records", 0)
    parts["rest: loader, runtime start, report, exit"] = total - sum(v for k, v in parts.items() if k in dict(PARTS))
    return total, {k: v for k, v in parts.items() if v >= 100000}


def deterministic(path, size, seed):
    """Bytes from AES-CTR over zeros with a fixed key: fast, reproducible."""
    key = "%032x" % seed
    with open(path, "wb") as out:
        enc = subprocess.Popen(["openssl", "enc", "-aes-128-ctr", "-K", key, "-iv", "0" * 32, "-nosalt"],
                               stdin=subprocess.PIPE, stdout=out)
        left = size
        chunk = b"\0" * (1 << 20)
        while left > 0:
            n = min(left, len(chunk))
            enc.stdin.write(chunk[:n])
            left -= n
        enc.stdin.close()
        enc.wait()


def sha256(path):
    return subprocess.check_output(["sha256sum", path]).decode().split()[0]


def make_ca(d, ips=("127.0.0.1",)):
    """A CA and a server certificate for the addresses ips (openssl, EC keys), in d."""
    os.makedirs(d, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    quiet = {"cwd": d, "check": True, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run(["openssl", "req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
                                                      "-subj", "/CN=bench CA"], **quiet)
    subprocess.run(["openssl", "req"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=b"],
                   **quiet)
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("subjectAltName=%s\n" % ",".join("IP:" + ip for ip in ips))
    subprocess.run(["openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                    "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf"], **quiet)
    os.chmod(os.path.join(d, "server.key"), 0o644)  # nginx workers read it; a benchmark key
    return {"ca": os.path.join(d, "ca.pem"), "cert": os.path.join(d, "server.pem"),
            "key": os.path.join(d, "server.key")}


class Nginx:
    def __init__(self, work, www, tls=None, limit_rate=None, http2=True, keepalive_requests=100000):
        """Plain http, or TLS when tls = make_ca(...), with HTTP/2 unless http2 is
        False; limit_rate caps each connection; keepalive_requests closes a
        connection after that many. Over TLS, sessions are kept for clients to
        resume, and tls.log names each request's connection and whether its
        handshake resumed a session (`handshakes_since`)."""
        name = "nginx-tls" if tls else "nginx-limited" if limit_rate else "nginx"
        self.dir = os.path.join(work, name if http2 or not tls else "nginx-tls-h1")
        os.makedirs(os.path.join(self.dir, "tmp"), exist_ok=True)
        self.port = free_port()
        temps = "".join("%s_temp_path %s/tmp/%s; " % (t, self.dir, t)
                        for t in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"])
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write("daemon off; pid %s/nginx.pid; error_log %s/error.log; worker_processes 2;\n"
                    "events { worker_connections 4096; }\n"
                    "http { log_format b '$request_uri $status $body_bytes_sent $msec $request_time $http_range';\n"
                    "  access_log %s/access.log b; %s\n"
                    "  log_format tls '$connection $ssl_session_reused';\n"
                    "  keepalive_requests %d;\n"
                    "  http2_max_requests 100000;\n"
                    "  server { listen 127.0.0.1:%d%s; root %s; %s %s } }\n"
                    % (self.dir, self.dir, self.dir, temps, keepalive_requests, self.port,
                       (" ssl http2" if http2 else " ssl") if tls else "", www,
                       ("ssl_certificate %s; ssl_certificate_key %s; ssl_session_cache shared:tls:10m; "
                        "access_log %s/tls.log tls; "
                        "access_log %s/access.log b;" % (tls["cert"], tls["key"], self.dir, self.dir))
                       if tls else "",
                       "limit_rate %s;" % limit_rate if limit_rate else ""))
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        self.proc = subprocess.Popen([binary, "-p", self.dir, "-c", conf, "-e", self.dir + "/error.log"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("nginx did not start")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def cpu_seconds(self):
        """CPU time of nginx's workers so far (schedstat: nanoseconds, not 10 ms ticks)."""
        total = 0
        try:
            with open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)) as f:
                workers = [int(w) for w in f.read().split()]
            for w in workers:
                for t in os.listdir("/proc/%d/task" % w):
                    with open("/proc/%d/task/%s/schedstat" % (w, t)) as f:
                        total += int(f.read().split()[0])
        except (OSError, ValueError):
            return None
        return total / 1e9

    def settled_cpu_seconds(self):
        """cpu_seconds once nginx has finished with the run that just ended (closing
        its connections, logging): two readings 10 ms apart agree, or 100 ms passed."""
        last = self.cpu_seconds()
        for _ in range(10):
            time.sleep(0.01)
            now = self.cpu_seconds()
            if now == last:
                break
            last = now
        return last

    def log_mark(self):
        path = os.path.join(self.dir, "access.log")
        return os.path.getsize(path) if os.path.exists(path) else 0

    def tls_mark(self):
        path = os.path.join(self.dir, "tls.log")
        return os.path.getsize(path) if os.path.exists(path) else 0

    def handshakes_since(self, mark):
        """(full, resumed) TLS handshakes of the connections that served a request since mark."""
        reused = {}
        with open(os.path.join(self.dir, "tls.log")) as f:
            f.seek(mark)
            for line in f:
                fields = line.split()
                if len(fields) == 2:
                    reused[fields[0]] = fields[1] == "r"
        resumed = sum(1 for r in reused.values() if r)
        return len(reused) - resumed, resumed

    def bytes_sent_since(self, mark):
        with open(os.path.join(self.dir, "access.log")) as f:
            f.seek(mark)
            return sum(int(line.split()[2]) for line in f if line.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", help="workloads to run (all; with --callgrind W1,W4,W7)")
    ap.add_argument("--delete-between", action="store_true",
                    help="with --same-fs, W1 and W7: delete each run's files before the next run instead of "
                         "moving them aside")
    ap.add_argument("--same-fs", action="store_true",
                    help="run in the workload's folder on BENCH_DIR's file system instead of a new ext4 for "
                         "each run (the default where root can mount one)")
    ap.add_argument("--w8", type=int, default=256 << 20, help="W8 file size in bytes")
    ap.add_argument("--json", help="where the figures go (Benchmarks/results.json; with --callgrind "
                                   "Benchmarks/results-callgrind.json, so that the counts never replace the times)")
    ap.add_argument("--big", type=int, default=1 << 30, help="W3/W6 file size in bytes")
    ap.add_argument("--syncfiles", default=os.path.join(ROOT, ".build", "release", "syncfiles"))
    ap.add_argument("--also", action="append", default=[], metavar="NAME=PATH",
                    help="W1-W4, W7 and W8: another syncfiles build in the same rounds, as the row 'syncfiles NAME' "
                         "(an A/B of two builds, alternating with the peers); repeatable")
    ap.add_argument("--callgrind", action="store_true",
                    help="W1-W4 and W7: instead of timing rounds, run each tool once under valgrind's callgrind "
                         "and print its user-space instructions, and where syncfiles' go (repeatable where "
                         "wall times are not)")
    args = ap.parse_args()
    if args.json is None:
        name = "results-callgrind.json" if args.callgrind else "results.json"
        args.json = os.path.join(ROOT, "Benchmarks", name)
    only = set((args.only or ("W1,W4,W7" if args.callgrind else "W1,W2,W3,W4,W5,W6,W7,W7h1,W3h2,W8,W9")).split(","))
    if args.callgrind and only - {"W1", "W2", "W3", "W4", "W7"}:
        ap.error("--callgrind counts W1-W4 and W7 only")
    if args.callgrind and not shutil.which("valgrind"):
        ap.error("--callgrind needs valgrind (apt-get install valgrind)")
    sf = os.path.abspath(args.syncfiles)
    if not args.same_fs and not args.callgrind and not RunFileSystem.usable():
        print("not root or no mkfs.ext4: every run in its workload's folder (--same-fs)", file=sys.stderr)
        args.same_fs = True
    also = []
    for a in args.also:
        name, sep, path = a.partition("=")
        if not sep or not name or not os.access(path, os.X_OK):
            ap.error("--also wants NAME=PATH of an executable syncfiles: %r" % a)
        also.append((name, os.path.abspath(path)))

    def applies():
        """The syncfiles rows of a workload: the build under test, then each --also build."""
        rows = {"syncfiles": [sf, "apply", "--quiet", "m.yaml"]}
        for name, path in also:
            rows["syncfiles " + name] = [path, "apply", "--quiet", "m.yaml"]
        return rows

    work = tempfile.mkdtemp(prefix="syncfiles-bench-", dir=os.environ.get("BENCH_DIR", "/var/tmp"))
    os.chmod(work, 0o755)  # nginx workers run as nobody
    www = os.path.join(work, "www")
    os.makedirs(www)
    print("data and destinations in %s (one disk for all tools)" % work, file=sys.stderr)

    # Data: W1 2,000 x 16 KiB, W2 64 x 4 MiB, W3 one big file.
    for i in range(2000):
        with open(os.path.join(www, "w1-%04d.bin" % i), "wb") as f:
            f.write(bytes([i % 251]) * 16384)
    if "W2" in only:
        for i in range(64):
            deterministic(os.path.join(www, "w2-%02d.bin" % i), 4 << 20, 1000 + i)
    if only & {"W3", "W6"}:
        deterministic(os.path.join(www, "big.bin"), args.big, 7)
        big_sha = sha256(os.path.join(www, "big.bin"))

    nginx = Nginx(work, www)
    base = "http://127.0.0.1:%d" % nginx.port
    results = {"machine": {"cpus": os.cpu_count()}, "rounds": args.rounds, "workloads": {},
               "new_file_system_per_run": not args.same_fs and not args.callgrind}
    # Room for W3's file (or W8's) and what runs beside it.
    runfs = None if args.same_fs or args.callgrind else RunFileSystem(work, max(args.big, args.w8) + (1 << 30))

    def in_run_folder(d, state, prepare, body):
        """body(folder) in a new file system holding `d` (RunFileSystem.enter),
        or with --same-fs in `d` itself after `prepare(d)`. Either way each
        run starts with no dirty pages left by the one before: on ext4 an
        fsync's journal commit also writes other files' new data."""
        if not runfs:
            prepare(d)
            os.sync()
            return body(d)
        folder = runfs.enter(d, state)
        try:
            os.sync()
            return body(folder)
        finally:
            runfs.leave()

    def manifest(path, entries, extra="", limits="limits: {parallel: 8, per_host: 8}\n"):
        with open(path, "w") as f:
            f.write("version: 1\nname: b\nroot: dest\njournal: journal\n%s%sfiles:\n" % (limits, extra))
            for e in entries:
                f.write("  - " + e + "\n")

    def lists(d, names):
        peer_lists(d, base, names)

    def spec_floor():
        """Benchmarks/spec-floor.c built once: the SPEC's steps in C and nothing else
        (W1 and W7 fetch, W4 revalidates), the row that shows what any client on our
        stack pays for what the SPEC asks."""
        path = os.path.join(work, "spec-floor")
        if not os.path.exists(path):
            subprocess.run([shutil.which("cc") or "clang", "-O2", "-o", path,
                            os.path.join(ROOT, "Benchmarks", "spec-floor.c"), "-lcurl", "-lyaml", "-lz",
                            "-lcrypto", "-lpthread"], check=True)
        return path

    def many_files(folder, names):
        """A workload folder: the manifest and the peers' URL lists for these files."""
        d = os.path.join(work, folder)
        os.makedirs(d)
        manifest(os.path.join(d, "m.yaml"),
                 ["{id: f%04d, url: '%s/%s', destination: %s}" % (i, base, n, n) for i, n in enumerate(names)])
        lists(d, names)
        return d

    def fresh(d):
        for x in ["dest", "journal", "journal.lock"]:
            p = os.path.join(d, x)
            if os.path.isdir(p):
                shutil.rmtree(p)
            elif os.path.exists(p):
                os.unlink(p)
        os.makedirs(os.path.join(d, "dest"))

    def aside(d):
        """As fresh, but the last run's files are moved aside, not deleted
        (W1 and W7, unless --delete-between). This machine's ext4 has no
        journal, and without one ext4 skips inodes freed in the last 60 s
        (300 s while their inode table block is dirty) when it allocates
        (`recently_deleted` in fs/ext4/ialloc.c): with a deletion before
        each run every tool's rounds grew from the first to the last (W1:
        0.35 to 1.87 s) and the medians measured that. What is moved aside
        stays until the end of the benchmark."""
        p = os.path.join(d, "dest")
        if os.path.isdir(p):
            os.makedirs(os.path.join(d, "aside"), exist_ok=True)
            os.rename(p, os.path.join(d, "aside", "%d" % len(os.listdir(os.path.join(d, "aside")))))
        fresh(d)

    def applies_m_yaml(argv):
        """A row that runs `syncfiles apply ... m.yaml` (its phases can be asked for)."""
        argv = argv[0] if isinstance(argv, tuple) else argv
        return len(argv) > 2 and argv[1] == "apply" and argv[-1] == "m.yaml"

    def phases(argv, d, prepare, runs=3, state=False):
        """Medians of the steps `apply --format json` reports, from extra runs
        after the timed ones (the JSON costs a little: the timed runs stay
        --quiet). `outside` is the wall time less the apply's own: the
        process's start (loader, runtime, argument parsing), and after the
        run the JSON's rendering (2,000 tasks: a few ms the timed runs do
        not spend) and the exit."""
        cwd = d
        if isinstance(argv, tuple):
            argv, cwd = argv
        argv = [a for a in argv if a != "m.yaml"] + ["--format", "json", "m.yaml"]
        seen = {}
        def timed(folder):
            start = time.monotonic()
            p = subprocess.run(argv, cwd=folder, capture_output=True, text=True)
            return p, time.monotonic() - start

        for _ in range(runs):
            p, wall = in_run_folder(cwd, state, prepare, timed)
            try:
                report = json.loads(p.stdout)
            except ValueError:
                return {}
            if "phases" not in report:
                return {}  # a build from before phases: its elapsed time began with the transfers
            for k, v in report["phases"].items():
                seen.setdefault(k, []).append(v)
            seen.setdefault("outside", []).append(wall - report.get("elapsed_seconds", 0))
        return {k: statistics.median(v) for k, v in seen.items()}

    def count_instructions(name, d, tools, prepare):
        """--callgrind: one untimed run, then each tool once under callgrind."""
        first, cwd = next(iter(tools.values())), d
        if isinstance(first, tuple):
            first, cwd = first
        prepare(cwd)
        run(first, cwd=cwd)
        figures = {}
        for tool, argv in tools.items():
            cwd = d
            if isinstance(argv, tuple):
                argv, cwd = argv
            prepare(cwd)
            os.sync()
            total, parts = instruction_parts(callgrind(argv, cwd, os.path.join(work, "callgrind")))
            figures[tool] = {"instructions": total, "parts": parts}
        ref = figures.get("syncfiles", {}).get("instructions")
        results.setdefault("callgrind", {})[name] = figures
        print("\n%s (user-space instructions, callgrind)" % name)
        for tool, f in figures.items():
            print("  %-30s %9.1f M %6.2f x syncfiles" % (tool, f["instructions"] / 1e6,
                                                      f["instructions"] / ref if ref else 0))
            for part, n in f["parts"].items():
                print("      %-46s %8.1f M" % (part, n / 1e6))
        sys.stdout.flush()

    def bench(name, d, tools, prepare=fresh, server=None, expect=None, state=False):
        """server: the Nginx the tools fetch from; its workers' CPU per run is a column.
        expect: {name: size} every run must leave in its dest/; a run that does not
        counts as failed (a tool that skipped files would otherwise look fast).
        Each run in a new file system (see RunFileSystem); with --same-fs,
        `prepare` readies the folder before each run instead. state: each run
        starts from all its folder holds (W4), not from its lists alone."""
        rows = {t: [] for t in tools}

        def complete(cwd):
            def whole(n, size):
                try:
                    return os.stat(os.path.join(cwd, "dest", n)).st_size == size
                except OSError:
                    return False
            return sum(1 for n, size in expect.items() if whole(n, size))

        def measured(argv, folder):
            before = server.cpu_seconds() if server else None
            r = run(argv, cwd=folder)
            after = server.settled_cpu_seconds() if server else None
            if expect and r[3] == 0:
                whole = complete(folder)
                if whole != len(expect):
                    sys.stderr.write("  ! %s left %d of %d files whole\n" % (argv[0], whole, len(expect)))
                    r = r[:3] + (-1,)
            return r + ((after - before) if before is not None and after is not None else None,)

        def once(argv):
            cwd = d
            if isinstance(argv, tuple):  # (argv, folder of its own)
                argv, cwd = argv
            return in_run_folder(cwd, state, prepare, lambda folder: measured(argv, folder))

        if args.callgrind:
            return count_instructions(name, d, tools, prepare)
        # One untimed run first. The first run after the workload before pays
        # for what that one left (W3 after W2: 3.4-3.7 s against 1.5-1.8 s,
        # for whichever tool ran first), and tools go in a fixed order, so
        # round 1 would charge it to the first tool every time.
        once(next(iter(tools.values())))
        for r in range(args.rounds):
            for tool, argv in tools.items():
                rows[tool].append(once(argv))
        figures = {}
        steps = {t: phases(argv, d, prepare, state=state) for t, argv in tools.items()
                 if t.startswith("syncfiles") and applies_m_yaml(argv)}
        for tool, rs in rows.items():
            figures[tool] = {
                "wall_median_s": statistics.median(x[0] for x in rs),
                "wall_all_s": [round(x[0], 3) for x in rs],
                "cpu_median_s": statistics.median(x[1] for x in rs),
                "peak_rss_mib": max(x[2] for x in rs),
                "failures": sum(1 for x in rs if x[3] != 0),
            }
            if all(x[4] is not None for x in rs):
                figures[tool]["server_cpu_median_s"] = statistics.median(x[4] for x in rs)
            if steps.get(tool):
                figures[tool]["phases_median_s"] = steps[tool]
        ref = figures.get("syncfiles", {}).get("wall_median_s")
        for f in figures.values():
            f["ratio_to_syncfiles"] = (f["wall_median_s"] / ref) if ref else None
        results["workloads"][name] = figures
        print("\n%s" % name)
        print("  %-22s %9s %9s %9s %9s %5s %11s" % (
            "tool", "median s", "x sf", "cpu s", "peak MiB", "fail", "nginx cpu s"))
        for tool, f in figures.items():
            served = f.get("server_cpu_median_s")
            print("  %-22s %9.3f %9.2f %9.3f %9.1f %5d %11s" % (
                tool, f["wall_median_s"], f["ratio_to_syncfiles"] or 0, f["cpu_median_s"], f["peak_rss_mib"],
                f["failures"], "%.3f" % served if served is not None else "-"))
            if "phases_median_s" in f:
                print("    %s" % "  ".join("%s %.3f" % kv for kv in f["phases_median_s"].items()))
        sys.stdout.flush()

    def peers(d, conditional=False):
        curl = ["curl", "-s", "--no-progress-meter", "--parallel", "--parallel-max", "8", "--create-dirs", "-K",
                "curl.cfg"]
        aria = ["aria2c", "-q", "-j", "8", "-x", "1", "-d", "dest", "-i", "aria2.txt", "--allow-overwrite=true",
                "--auto-file-renaming=false", "--file-allocation=none"]
        wget = ["wget2", "-q", "--max-threads=8", "-P", "dest", "-nd", "-i", "wget2.txt", "--no-robots"]
        durable = {}
        if not conditional:
            # syncfiles makes every file durable before it reports; this row pays the same.
            durable = {"curl --parallel && sync": ["sh", "-c", " ".join(curl) + " && sync"]}
        if conditional:
            # Each keeps the server's Last-Modified as its file's time (-R,
            # --remote-time; wget2 -N does so itself): nginx answers 304 only to
            # that exact date, and a copy timed at its download is fetched again.
            aria += ["--conditional-get=true", "--remote-time=true"]
            wget.append("-N")
            curl = ["sh", "-c", "exec curl -s --no-progress-meter --parallel --parallel-max 8 -K curl-z.cfg"]
        return {"curl --parallel": curl, **durable, "aria2c -i": aria, "wget2 -i": wget}

    if only & {"W1", "W4"}:
        names = ["w1-%04d.bin" % i for i in range(2000)]
        d = many_files("w1", names)
        if "W1" in only:
            tools = applies()
            tools.update(peers(d))
            tools["the SPEC's steps in C (spec-floor.c)"] = [spec_floor(), "m.yaml"]
            bench("W1 2,000 x 16 KiB, 8 at a time, fresh destination", d, tools,
                  prepare=fresh if args.delete_between else aside, server=nginx,
                  expect={n: 16384 for n in names})
        if "W4" in only:
            # Each tool revalidates its own copy (fetched by itself first): a
            # shared folder would let one tool's rewrite look like a change to another.
            tools = {}
            revalidate = applies()
            revalidate.update(peers(d, conditional=True))
            for k, tool in enumerate(revalidate):
                td = os.path.join(work, "w4-%d" % k)
                os.makedirs(td)
                for f in ["m.yaml", "curl.cfg", "aria2.txt", "wget2.txt"]:
                    shutil.copy(os.path.join(d, f), td)
                with open(os.path.join(td, "curl-z.cfg"), "w") as f:
                    f.write(curl_z_config(base, names))
                # Fetched by the same command: with no copy yet, each downloads.
                # With a file system per run, fetched where each run runs and
                # copied back: each task's fingerprint in syncfiles' journal
                # covers its destination's full path, and a copy elsewhere
                # would plan every file as a changed entry.
                def fetch(folder, argv=revalidate[tool], td=td):
                    run(argv, cwd=folder)
                    if folder != td:
                        subprocess.run(["cp", "-a", folder + "/.", td], check=True)
                in_run_folder(td, False, fresh, fetch)
                tools[tool] = (revalidate[tool], td)
            # Our stack's floor: libcurl alone, 8 at a time, each request with
            # the If-Modified-Since nginx answers 304 to (Benchmarks/curl-floor.c).
            floor = os.path.join(work, "curl-floor")
            subprocess.run([shutil.which("cc") or "clang", "-O2", "-o", floor,
                            os.path.join(ROOT, "Benchmarks", "curl-floor.c"), "-lcurl"], check=True)
            with open(os.path.join(d, "floor.txt"), "w") as f:
                for n in names:
                    mtime = os.stat(os.path.join(www, n)).st_mtime
                    f.write("%s/%s\t%s\n" % (base, n, email.utils.formatdate(mtime, usegmt=True)))
            tools["libcurl alone (curl-floor.c)"] = [floor, "floor.txt", "8", "pipewait"]
            # The SPEC's steps in C and nothing else (Benchmarks/spec-floor.c): the
            # manifest, the journal, an lstat per destination, the request lines
            # syncfiles sends, a record per task. It reads and writes syncfiles'
            # journal, so it starts from a copy of syncfiles' own folder (times kept).
            sd = os.path.join(work, "w4-spec")
            shutil.copytree(tools["syncfiles"][1], sd, copy_function=shutil.copy2)
            tools["the SPEC's steps in C (spec-floor.c)"] = ([spec_floor(), "m.yaml"], sd)
            if args.callgrind:
                # The manifest's parse alone, events counted (Benchmarks/yaml-events.c): what any
                # reading of W4's manifest costs before the first request.
                events = os.path.join(work, "yaml-events")
                subprocess.run([shutil.which("cc") or "clang", "-O2", "-o", events,
                                os.path.join(ROOT, "Benchmarks", "yaml-events.c"), "-lyaml"], check=True)
                tools["libyaml parse of m.yaml alone (yaml-events.c)"] = [events, "m.yaml"]
            mark = nginx.log_mark()
            bench("W4 revalidate W1, nothing changed (304s)", d, tools, prepare=lambda _: None, server=nginx,
                  state=True)
            if not args.callgrind:
                sent = nginx.bytes_sent_since(mark)
                results["workloads"]["W4 revalidate W1, nothing changed (304s)"]["_body_bytes_sent"] = sent
                # Every tool revalidates: a body sent means one of them fetched again.
                print("  body bytes nginx sent during W4's runs: %d%s" % (sent, "" if sent else " (all 304s)"))

    if "W2" in only:
        names = ["w2-%02d.bin" % i for i in range(64)]
        d = many_files("w2", names)
        tools = applies()
        tools.update(peers(d))
        bench("W2 64 x 4 MiB", d, tools, server=nginx, expect={n: 4 << 20 for n in names})

    if "W3" in only:
        d = os.path.join(work, "w3")
        os.makedirs(d)
        manifest(os.path.join(d, "m.yaml"),
                 ["{id: big, url: '%s/big.bin', destination: big.bin, sha256: %s}" % (base, big_sha)])
        tools = {
            **applies(),
            "curl -o && sync": ["sh", "-c", "curl -s -o dest/big.bin %s/big.bin && sync" % base],
            "aria2c": ["aria2c", "-q", "-d", "dest", "--allow-overwrite=true", "--file-allocation=none",
                       "--checksum=sha-256=%s" % big_sha, "%s/big.bin" % base],
            "wget2": ["wget2", "-q", "-O", "dest/big.bin", "%s/big.bin" % base],
        }
        bench("W3 one %d MiB file, sha256 verified" % (args.big >> 20), d, tools, server=nginx,
              expect={"big.bin": args.big})

    if "W5" in only:
        d = os.path.join(work, "w5")
        os.makedirs(d)
        # The floor: libyaml parsing the same file and counting events (Benchmarks/yaml-events.c).
        floor = os.path.join(work, "yaml-events")
        subprocess.run([shutil.which("cc") or "clang", "-O2", "-o", floor, os.path.join(ROOT, "Benchmarks", "yaml-events.c"), "-lyaml"],
                       check=True)
        for n in [10000, 100000]:
            m = os.path.join(d, "m%d.yaml" % n)
            manifest(m, ["{id: f%06d, url: 'https://data.example.org/f%06d.bin', destination: d%03d/f%06d.bin, "
                         "expected_bytes: 4KiB, not_before: '2999-01-01T00:00:00Z'}" % (i, i, i % 500, i)
                         for i in range(n)])
            bench("W5 %d entries" % n, d, {
                "syncfiles plan": [sf, "plan", os.path.basename(m)],
                "syncfiles apply (no-op)": [sf, "apply", "--quiet", os.path.basename(m)],
                "libyaml events only": [floor, os.path.basename(m)],
            }, prepare=lambda _: None)

    if "W6" in only:
        d = os.path.join(work, "w6")
        os.makedirs(d)
        manifest(os.path.join(d, "m.yaml"),
                 ["{id: big, url: '%s/big.bin', destination: big.bin, sha256: %s}" % (base, big_sha)])
        size = args.big
        cases = {
            "syncfiles": ([sf, "apply", "--quiet", "m.yaml"], "dest/.big.bin.syncfiles-partial"),
            "curl -C -": (["curl", "-s", "-C", "-", "-o", "dest/big.bin", "%s/big.bin" % base], "dest/big.bin"),
            "aria2c -c": (["aria2c", "-q", "-c", "-d", "dest", "--file-allocation=none", "%s/big.bin" % base],
                          "dest/big.bin"),
            "wget2 -c": (["wget2", "-q", "-c", "-O", "dest/big.bin", "%s/big.bin" % base], "dest/big.bin"),
        }
        figures = {}
        print("\nW6 resume: kill at ~50 %% of a %d MiB file, re-run, bytes transferred again" % (size >> 20))
        for tool, (argv, partial) in cases.items():
            fresh(d)
            p = subprocess.Popen(argv, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            path = os.path.join(d, partial)

            def held_now():
                # syncfiles may size its partial ahead of the bytes: what it holds is what its journal says.
                if tool == "syncfiles":
                    return journal_offset(os.path.join(d, "journal"))
                return os.path.getsize(path) if os.path.exists(path) else 0
            while p.poll() is None and held_now() < size // 2:
                time.sleep(0.002)
            p.kill()
            p.wait()
            held = held_now()
            # nginx logs the cut request when it notices the close: let it, so the mark comes after.
            time.sleep(0.5)
            mark = nginx.log_mark()
            wall, cpu, rss, status = run(argv, cwd=d)
            again = nginx.bytes_sent_since(mark)
            # What the re-run asked for and got, request by request: URI, status,
            # body bytes sent, end time, seconds taken, Range asked (nginx's log).
            with open(os.path.join(nginx.dir, "access.log")) as f:
                f.seek(mark)
                rerun_requests = [line.strip() for line in f if line.strip()]
            final = os.path.join(d, "dest", "big.bin")
            ok = os.path.exists(final) and os.path.getsize(final) == size
            figures[tool] = {"held_at_kill": held, "retransferred_bytes": again, "rerun_requests": rerun_requests,
                             "retransferred_pct": 100.0 * again / size, "complete": ok, "rerun_wall_s": wall}
            print("  %-12s held %5.1f %%  re-transferred %5.1f %%  complete %s" % (
                tool, 100.0 * held / size, 100.0 * again / size, ok))
        results["workloads"]["W6 resume"] = figures

    def tls_workload(key, http2):
        """W7: 500 x 16 KiB over TLS and HTTP/2, every tool trusting the same CA.
        W7h1: the same over HTTP/1.1 only, the server closing each connection
        after 100 requests (Apache's MaxKeepAliveRequests default): 8
        connections at a time, each a TLS handshake, full or resumed. After
        the timed rounds each tool runs once more to count them."""
        tls = make_ca(os.path.join(work, "ca-" + key))
        secure = Nginx(work, www, tls=tls, http2=http2, keepalive_requests=100000 if http2 else 100)
        sbase = "https://127.0.0.1:%d" % secure.port
        names = ["w1-%04d.bin" % i for i in range(500)]
        d = os.path.join(work, key.lower())
        os.makedirs(d)
        manifest(os.path.join(d, "m.yaml"),
                 ["{id: f%04d, url: '%s/%s', destination: %s}" % (i, sbase, n, n) for i, n in enumerate(names)],
                 extra="defaults: {tls: {ca_file: '%s'}}\n" % tls["ca"])
        with open(os.path.join(d, "curl.cfg"), "w") as f:
            for n in names:
                f.write('url = "%s/%s"\noutput = "dest/%s"\n' % (sbase, n, n))
        version = "--http2" if http2 else "--http1.1"
        curl = ["curl", "-s", "--no-progress-meter", version, "--parallel", "--parallel-max", "8", "--cacert",
                tls["ca"], "--create-dirs", "-K", "curl.cfg"]
        tools = {
            **applies(),
            "curl %s --parallel" % version: curl,
            # syncfiles makes every file durable before it reports; this row pays the same.
            "curl %s && sync" % version: ["sh", "-c", " ".join(curl) + " && sync"],
        }
        if http2:
            tools["the SPEC's steps in C (spec-floor.c)"] = [spec_floor(), "m.yaml"]
        title = ("W7 500 x 16 KiB over TLS + HTTP/2, fresh destination" if http2 else
                 "W7h1 500 x 16 KiB over TLS, HTTP/1.1, 100 requests a connection, fresh destination")
        bench(title, d, tools, prepare=fresh if args.delete_between else aside, server=secure,
              expect={n: 16384 for n in names})
        if not http2 and not args.callgrind:
            print("  TLS handshakes of one more run each (full / resumed):")
            for tool, argv in tools.items():
                mark = secure.tls_mark()
                in_run_folder(d, False, aside, lambda folder: run(argv, cwd=folder))
                full, resumed = secure.handshakes_since(mark)
                results["workloads"][title][tool]["tls_handshakes"] = {"full": full, "resumed": resumed}
                print("  %-22s %d / %d" % (tool, full, resumed))
        secure.stop()

    if "W7" in only:
        tls_workload("W7", http2=True)

    if "W3h2" in only:
        # One large file with its sha256 over TLS + HTTP/2, where libcurl hands the
        # body over 16 KiB at a time (--w8 bytes, 256 MiB by default).
        deterministic(os.path.join(www, "h2.bin"), args.w8, 32)
        h2_sha = sha256(os.path.join(www, "h2.bin"))
        tls = make_ca(os.path.join(work, "ca-W3h2"))
        secure = Nginx(work, www, tls=tls)
        url = "https://127.0.0.1:%d/h2.bin" % secure.port
        d = os.path.join(work, "w3h2")
        os.makedirs(d)
        manifest(os.path.join(d, "m.yaml"), ["{id: big, url: '%s', destination: h2.bin, sha256: %s}" % (url, h2_sha)],
                 extra="defaults: {tls: {ca_file: '%s'}}\n" % tls["ca"])
        curl = "curl -s --http2 --cacert %s -o dest/h2.bin %s" % (tls["ca"], url)
        tools = {**applies(), "curl --http2 && sync": ["sh", "-c", curl + " && sync"]}
        bench("W3h2 one %d MiB file over TLS + HTTP/2, sha256 verified" % (args.w8 >> 20), d, tools,
              server=secure, expect={"h2.bin": args.w8})
        secure.stop()

    if "W7h1" in only:
        tls_workload("W7h1", http2=False)

    if "W8" in only:
        w8(args, work, www, sf, manifest, fresh, bench, results, also)

    if "W9" in only:
        w9(work, www, sf, manifest, bench)

    nginx.stop()
    with open(args.json, "w") as f:
        json.dump(results, f, indent=1)
    print("\nfigures written to %s" % args.json)
    shutil.rmtree(work, ignore_errors=True)


def peer_lists(d, base, names):
    """url lists for the peers: curl config, aria2c input, wget2 input."""
    with open(os.path.join(d, "curl.cfg"), "w") as f:
        for n in names:
            f.write('url = "%s/%s"\noutput = "dest/%s"\n' % (base, n, n))
    with open(os.path.join(d, "aria2.txt"), "w") as f:
        for n in names:
            f.write("%s/%s\n  out=%s\n" % (base, n, n))
    with open(os.path.join(d, "wget2.txt"), "w") as f:
        for n in names:
            f.write("%s/%s\n" % (base, n))


def journal_offset(path):
    """The bytes the last journal record says a partial holds (0 when none)."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return 0
    for line in reversed(lines):
        body = line.split(" ", 2)[-1]
        try:
            record = json.loads(body)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("t") != "task":
            continue
        partial = record.get("partial")
        return partial.get("offset", 0) if partial else 0
    return 0


def w8(args, work, www, sf, manifest, fresh, bench, results, also=()):
    """W8: one file from nginx capping each connection at 16 MB/s, fetched in
    8 ranges (aria2c -x8 -s8 -k1M beside it); then W6 with segments: kill at
    ~50 %, re-run, bytes sent again."""
    size = args.w8
    deterministic(os.path.join(www, "w8.bin"), size, 8)
    w8_sha = sha256(os.path.join(www, "w8.bin"))
    limited = Nginx(work, www, limit_rate="16m")
    url = "http://127.0.0.1:%d/w8.bin" % limited.port
    d = os.path.join(work, "w8")
    os.makedirs(d)
    manifest(os.path.join(d, "m.yaml"),
             ["{id: big, url: '%s', destination: w8.bin, segments: 8, sha256: %s}" % (url, w8_sha)])
    manifest(os.path.join(d, "one.yaml"),
             ["{id: big, url: '%s', destination: w8.bin, segments: 1, sha256: %s}" % (url, w8_sha)])
    # As a user who read only the segments key writes it: per_host left at its default (6).
    manifest(os.path.join(d, "default.yaml"),
             ["{id: big, url: '%s', destination: w8.bin, segments: 8, sha256: %s}" % (url, w8_sha)], limits="")
    tools = {
        "syncfiles": [sf, "apply", "--quiet", "m.yaml"],
        "syncfiles per_host default": [sf, "apply", "--quiet", "default.yaml"],
        **{"syncfiles " + name: [path, "apply", "--quiet", "m.yaml"] for name, path in also},
        "aria2c -x8 -s8 -k1M": ["aria2c", "-q", "-x", "8", "-s", "8", "-k", "1M", "-d", "dest",
                                "--allow-overwrite=true", "--file-allocation=none",
                                "--checksum=sha-256=%s" % w8_sha, url],
        "syncfiles segments 1": [sf, "apply", "--quiet", "one.yaml"],
    }
    bench("W8 one %d MiB file, limit_rate 16m per connection, 8 ranges, sha256" % (size >> 20), d, tools,
          server=limited)

    fresh(d)
    p = subprocess.Popen([sf, "apply", "--quiet", "m.yaml"], cwd=d, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    while p.poll() is None and journal_offset(os.path.join(d, "journal")) < size // 2:
        time.sleep(0.01)
    p.kill()
    p.wait()
    held = journal_offset(os.path.join(d, "journal"))
    mark = limited.log_mark()
    wall, _, rss, status = run([sf, "apply", "--quiet", "m.yaml"], cwd=d)
    again = limited.bytes_sent_since(mark)
    final = os.path.join(d, "dest", "w8.bin")
    ok = status == 0 and os.path.exists(final) and sha256(final) == w8_sha
    results["workloads"]["W6 resume, segments 8"] = {
        "held_at_kill": held, "retransferred_bytes": again, "retransferred_pct": 100.0 * again / size,
        "complete": ok, "rerun_wall_s": wall, "peak_rss_mib": rss}
    print("\nW6 with segments 8: kill at ~50 %%, re-run: held %.1f %%, re-transferred %.1f %%, complete %s" % (
        100.0 * held / size, 100.0 * again / size, ok))
    limited.stop()


def w9(work, www, sf, manifest, bench):
    """W9: mixed sizes on one host: four 32 MiB files from nginx capping each
    connection at 16 MB/s, beside 400 files of 16 KiB, 8 at a time. A tool
    that holds small files behind the large ones, or cannot fetch the large
    ones side by side, shows here."""
    names = ["w9-big-%d.bin" % i for i in range(4)] + ["w9-small-%03d.bin" % i for i in range(400)]
    for i in range(4):
        deterministic(os.path.join(www, names[i]), 32 << 20, 90 + i)
    for i in range(400):
        with open(os.path.join(www, names[4 + i]), "wb") as f:
            f.write(bytes([(i * 7) % 251]) * 16384)
    limited = Nginx(work, www, limit_rate="16m")
    base = "http://127.0.0.1:%d" % limited.port
    d = os.path.join(work, "w9")
    os.makedirs(d)
    manifest(os.path.join(d, "m.yaml"),
             ["{id: f%d, url: '%s/%s', destination: %s}" % (i, base, n, n) for i, n in enumerate(names)])
    peer_lists(d, base, names)
    tools = {
        "syncfiles": [sf, "apply", "--quiet", "m.yaml"],
        "curl --parallel --parallel-immediate": ["curl", "-s", "--parallel", "--parallel-immediate",
                                                 "--parallel-max", "8", "-K", "curl.cfg"],
        "wget2 --max-threads=8": ["wget2", "-q", "--max-threads=8", "-P", "dest", "-i", "wget2.txt"],
        "aria2c -j8": ["aria2c", "-q", "-j", "8", "-d", "dest", "--allow-overwrite=true",
                       "--file-allocation=none", "-i", "aria2.txt"],
    }
    expect = {n: (32 << 20) if n.startswith("w9-big") else 16384 for n in names}
    bench("W9 mixed sizes on one host: 4 x 32 MiB at 16 MB/s a connection + 400 x 16 KiB, 8 at a time", d,
          tools, server=limited, expect=expect)
    limited.stop()


if __name__ == "__main__":
    main()
