#!/usr/bin/env python3
"""Two or more builds (or tools) side by side on W1, W4 or W7, each run on a new file system.

    python3 Benchmarks/ab.py --workload W7 --rounds 25 \\
        base=/tmp/syncfiles-before new=.build/x86_64-unknown-linux-gnu/release/syncfiles

For changes too small for Benchmarks/run.sh to resolve. Each run gets a
new 512 MiB ext4 (no journal, inode tables written at mkfs) on a loop
device (direct I/O), so no run pays for the inodes an earlier run freed (see the
README's "recently deleted inodes"), and the order of the rows is reversed
every other round. Prints each row's median and fastest wall time and its
median user and system CPU (wait4), and from nginx's log (`$msec`) how
long the run took to its first request, from its first request to its
last, and from its last to its exit. A NAME=PATH whose file is a syncfiles
build runs `PATH apply --quiet m.yaml` (as run.sh does); `floor`, `curl` and `wget2` name the
peers of run.sh's table. Needs root (mount), nginx and, for W7, openssl.

W4 (W1's files revalidated, 2,000 answers 304): each row first fetches W1
once into a new file system, and every timed run starts from a copy of
what that left (destinations with their times, the row's journal), so each
run revalidates the same state and none pays for a compaction another
run's records brought on. There `curl` is `curl -z` (each file's
If-Modified-Since from its copy, `--remote-time`) and `wget2` is
`wget2 -N`, as in run.sh's table; a run that fetches a body fails.
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
import compare  # noqa: E402  (its nginx, CA and data helpers)

MOUNT = "/mnt/syncfiles-ab"


def workload(kind, base, ca):
    """The manifest and the peers' lists of W1 and W4 (http) or W7 (https, HTTP/2), as {name: text}."""
    count = 500 if kind == "W7" else 2000
    names = ["w1-%04d.bin" % i for i in range(count)]
    extra = "defaults: {tls: {ca_file: '%s'}}\n" % ca if ca else ""
    manifest = ("version: 1\nname: b\nroot: dest\njournal: journal\nlimits: {parallel: 8, per_host: 8}\n%sfiles:\n"
                % extra + "".join("  - {id: f%04d, url: '%s/%s', destination: %s}\n" % (i, base, n, n)
                                  for i, n in enumerate(names)))
    curl = "".join('url = "%s/%s"\noutput = "dest/%s"\n' % (base, n, n) for n in names)
    wget = "".join("%s/%s\n" % (base, n) for n in names)
    files = {"m.yaml": manifest, "curl.cfg": curl, "wget2.txt": wget}
    if kind == "W4":
        files["curl-z.cfg"] = compare.curl_z_config(base, names)
    return files


def argv_for(name, path, ca, floor, kind):
    if name == "floor":
        return [floor, "m.yaml"]
    if name == "curl":
        tls = ["--http2", "--cacert", ca] if ca else []
        cfg = "curl-z.cfg" if kind == "W4" else "curl.cfg"
        return ["curl", "-s", "--parallel", "--parallel-max", "8", "--create-dirs", "-K", cfg] + tls
    if name == "wget2":
        return (["wget2", "-q", "--max-threads", "8", "-P", "dest", "-i", "wget2.txt"] + (["-N"] if kind == "W4" else [])
                + (["--ca-certificate", ca] if ca else []))
    # As run.sh's rows run it: without --quiet, each installed file's line
    # on stderr is made (and thrown away here), which its table never pays.
    return [path, "apply", "--quiet", "m.yaml"]


def requests_since(nginx, mark):
    """(status, $msec) of each request nginx logged since `mark`."""
    time.sleep(0.05)  # nginx logs a request after its response is sent: the client may be gone first
    with open(os.path.join(nginx.dir, "access.log")) as f:
        f.seek(mark)
        return [(line.split()[1], float(line.split()[3])) for line in f if line.strip()]


def fill(d, files, template):
    """A workload folder `d` in a new file system: the lists, and a W4 row's state."""
    os.makedirs(d)
    if template:
        subprocess.run(["cp", "-a", template + "/.", d], check=True)
    for f, text in files.items():
        with open(os.path.join(d, f), "w") as out:
            out.write(text)
    os.sync()
    time.sleep(0.2)


def make_templates(rows, work, files, ca, floor, fs):
    """W4: each row fetches W1 once; what it left (destinations, journal) is each timed run's start."""
    templates = {}
    for name, path in rows:
        d = fs.fresh()
        fill(d, files, None)
        p = subprocess.run(argv_for(name, path, ca, floor, "W4"), cwd=d, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if p.returncode != 0 or len(os.listdir(os.path.join(d, "dest"))) != 2000:
            raise SystemExit("%s failed to fetch W4's files (status %d)" % (name, p.returncode))
        templates[name] = os.path.join(work, "template-" + name)
        subprocess.run(["cp", "-a", d, templates[name]], check=True)
        for f in files:
            os.remove(os.path.join(templates[name], f))
    return templates


def timed_run(name, path, d, files, kind, ca, floor, nginx):
    """One run in `d`: its wall time, rusage and the requests nginx logged for it; exits on a failed run."""
    mark = nginx.log_mark()
    start_wall = time.time()
    start = time.perf_counter()
    p = subprocess.Popen(argv_for(name, path, ca, floor, kind), cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    end_wall = time.time()
    reqs = requests_since(nginx, mark)
    want = len(files["wget2.txt"].splitlines())
    ok = status == 0 and len(reqs) >= want
    if kind == "W4":
        ok = ok and len(reqs) == want and all(code == "304" for code, _ in reqs)
    else:
        ok = ok and len(os.listdir(os.path.join(d, "dest"))) == want
    if not ok:
        raise SystemExit("%s failed (status %d, %d requests)" % (name, status, len(reqs)))
    times = [t for _, t in reqs]
    # nginx's $msec is the end of each request, to the millisecond.
    return {"wall": wall * 1000, "user": usage.ru_utime * 1000, "sys": usage.ru_stime * 1000,
            "first": (min(times) - start_wall) * 1000, "requests": (max(times) - min(times)) * 1000,
            "exit": (end_wall - max(times)) * 1000}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", choices=["W1", "W4", "W7"], default="W7")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("rows", nargs="+", help="NAME=PATH of a syncfiles build, or floor, curl, wget2")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("ab.py mounts a loop file system for each run: run it as root")
    # Builds run in each new file system's folder: their paths are made absolute here.
    rows = [(r.split("=", 1)[0], os.path.abspath(r.split("=", 1)[1]) if "=" in r else "") for r in args.rows]
    work = tempfile.mkdtemp(prefix="syncfiles-ab-", dir="/var/tmp")
    os.chmod(work, 0o755)  # nginx workers run as nobody
    fs = compare.RunFileSystem(work, 512 << 20, mount=MOUNT)
    www = os.path.join(work, "www")
    os.makedirs(www)
    for i in range(500 if args.workload == "W7" else 2000):
        compare.deterministic(os.path.join(www, "w1-%04d.bin" % i), 16 << 10, i)
    tls = compare.make_ca(os.path.join(work, "ca")) if args.workload == "W7" else None
    nginx = compare.Nginx(work, www, tls=tls)
    floor = os.path.join(work, "spec-floor")
    if any(n == "floor" for n, _ in rows):
        subprocess.run([shutil.which("cc") or "clang", "-O2", "-o", floor,
                        os.path.join(compare.ROOT, "Benchmarks", "spec-floor.c"),
                        "-lcurl", "-lyaml", "-lz", "-lcrypto", "-lpthread"], check=True)
    ca = tls["ca"] if tls else None
    files = workload(args.workload, "%s://127.0.0.1:%d" % ("https" if tls else "http", nginx.port), ca)
    figures = {n: [] for n, _ in rows}
    try:
        templates = make_templates(rows, work, files, ca, floor, fs) if args.workload == "W4" else {}
        for r in range(args.rounds + 1):  # round 0 warms the caches and is not counted
            for name, path in (rows if r % 2 == 0 else rows[::-1]):
                d = fs.fresh()
                fill(d, files, templates.get(name))
                run = timed_run(name, path, d, files, args.workload, ca, floor, nginx)
                if r > 0:
                    figures[name].append(run)
    finally:
        fs.leave()
        nginx.stop()
        shutil.rmtree(work, ignore_errors=True)
    report(args, rows, figures)


def report(args, rows, figures):
    def med(name, key):
        return statistics.median(f[key] for f in figures[name])

    first = med(rows[0][0], "wall")
    print("%s, %d rounds, a new file system per run (ms; medians)" % (args.workload, args.rounds))
    for name, _ in rows:
        print("  %-10s wall %7.1f (fastest %7.1f, %.2f x %s)  user %6.1f  sys %6.1f" % (
            name, med(name, "wall"), min(f["wall"] for f in figures[name]), med(name, "wall") / first,
            rows[0][0], med(name, "user"), med(name, "sys")))
        print("  %-10s to the first request %6.1f, first to last %6.1f, last to exit %5.1f" % (
            "", med(name, "first"), med(name, "requests"), med(name, "exit")))


if __name__ == "__main__":
    main()
