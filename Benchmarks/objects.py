#!/usr/bin/env python3
"""W10: a prefix of object storage, syncfiles beside `aws s3 sync` and `rclone copy`.
("syncfiles s1" is syncfiles with `segments: 1`.)

One moto_server (signatures checked) on loopback holds a prefix of COUNT
objects of SIZE bytes and one object of BIG bytes. Each round runs every
tool, in an order that turns with the round: a cold copy into an empty
folder, then the same command again over what it left (unchanged). Prints
the median of each, the ratio of syncfiles to the faster of the others,
and the store's requests per run (from its log).

    objects.py --syncfiles PATH [--rounds 3] [--count 1000] [--size 65536] [--big 134217728]
    (--big 0: no large object; --count 10000 --size 100 --big 0 --rounds 1 counts a large listing's requests)
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SUPPORT = os.path.join(HERE, "..", "Tests", "SyncFilesTests", "Support")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit("moto_server did not start")


def fixture(endpoint, *args):
    out = subprocess.run([sys.executable, os.path.join(SUPPORT, "s3fixture.py"), endpoint, *args],
                         check=True, capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1] if out.strip() else ""


def count_files(folder):
    return sum(len(files) for _, _, files in os.walk(folder) if ".syncfiles" not in _)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--syncfiles", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--size", type=int, default=64 * 1024)
    ap.add_argument("--big", type=int, default=128 << 20)
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="syncfiles-w10-")
    port = free_port()
    endpoint = "http://127.0.0.1:%d" % port
    log = os.path.join(work, "moto.log")
    env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="3")
    server = subprocess.Popen([sys.executable, os.path.join(SUPPORT, "moto_s3_server.py"), "-H", "127.0.0.1",
                               "-p", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=open(log, "w"),
                              start_new_session=True)
    try:
        wait_for(port)
        ak, sk = fixture(endpoint, "keys").split()
        print("W10: putting %d x %d B and one of %d B into moto ..." % (a.count, a.size, a.big), file=sys.stderr)
        fixture(endpoint, "putmany", ak, sk, "bench", "w10/", str(a.count), str(a.size))
        if a.big > 0:
            big = os.path.join(work, "big.bin")
            with open(big, "wb") as f:
                f.write(os.urandom(a.big))
            fixture(endpoint, "put", ak, sk, "bench", "w10/big.bin", big)
        run_tools(a, work, endpoint, ak, sk, log)
    finally:
        os.killpg(server.pid, 15)
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


def run_tools(a, work, endpoint, ak, sk, log):
    base = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    aws_env = dict(base, AWS_ACCESS_KEY_ID=ak, AWS_SECRET_ACCESS_KEY=sk, AWS_REGION="us-east-1",
                   AWS_ENDPOINT_URL=endpoint, HOME=work)
    rclone_env = dict(base, RCLONE_CONFIG_MOTO_TYPE="s3", RCLONE_CONFIG_MOTO_PROVIDER="Other",
                      RCLONE_CONFIG_MOTO_ENDPOINT=endpoint, RCLONE_CONFIG_MOTO_ACCESS_KEY_ID=ak,
                      RCLONE_CONFIG_MOTO_SECRET_ACCESS_KEY=sk, RCLONE_CONFIG_MOTO_REGION="us-east-1", HOME=work)
    def syncfiles(name, extra):
        manifest = os.path.join(work, name + ".yaml")
        with open(manifest, "w") as f:
            f.write("version: 1\nname: w10\nroot: %s/%s\njournal: %s/%s.journal\nfiles:\n"
                    "  - {id: w10, url: 's3://bench/w10/', destination: w10%s}\n" % (work, name, work, name, extra))
        return ([a.syncfiles, "apply", "--quiet", manifest], aws_env, os.path.join(work, name, "w10"),
                [os.path.join(work, name), os.path.join(work, name + ".journal")])
    # segments: 1 beside the default: moto reads and copies the whole object
    # for every GET, a range included, so ranges cost it more than they save.
    tools = {
        "syncfiles": syncfiles("syncfiles", ""),
        "syncfiles s1": syncfiles("single", ", segments: 1"),
        "aws s3 sync": (["aws", "s3", "sync", "--only-show-errors", "s3://bench/w10/", os.path.join(work, "aws")],
                        aws_env, os.path.join(work, "aws"), [os.path.join(work, "aws")]),
        "rclone copy": (["rclone", "copy", "moto:bench/w10", os.path.join(work, "rclone")], rclone_env,
                        os.path.join(work, "rclone"), [os.path.join(work, "rclone")]),
    }
    names = list(tools)
    times = {n: {"cold": [], "unchanged": []} for n in names}
    asked = {n: {"cold": 0, "unchanged": 0} for n in names}
    for r in range(a.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            argv, env, dest, clean = tools[n]
            for c in clean:
                shutil.rmtree(c, ignore_errors=True) if os.path.isdir(c) else (os.path.exists(c) and os.remove(c))
            for shape in ("cold", "unchanged"):
                before = sum(1 for _ in open(log))
                t = time.monotonic()
                p = subprocess.run(argv, env=env, capture_output=True, text=True)
                times[n][shape].append(time.monotonic() - t)
                asked[n][shape] = sum(1 for line in open(log) if '"' in line) - sum(
                    1 for line in open(log).readlines()[:before] if '"' in line)
                if p.returncode != 0:
                    sys.exit("%s %s failed (exit %d): %s%s" % (n, shape, p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
            got = count_files(dest)
            want = a.count + (1 if a.big > 0 else 0)
            if got != want:
                sys.exit("%s left %d files, not %d" % (n, got, want))
    print("W10: prefix of %d x %s + one of %s from moto_server on loopback; %d rounds, medians"
          % (a.count, human(a.size), human(a.big), a.rounds))
    print("%-12s %10s %11s %14s %19s" % ("tool", "cold s", "unchanged s", "cold requests", "unchanged requests"))
    med = {n: {s: statistics.median(v) for s, v in times[n].items()} for n in names}
    for n in names:
        print("%-12s %10.2f %11.2f %14d %19d" % (n, med[n]["cold"], med[n]["unchanged"], asked[n]["cold"],
                                                 asked[n]["unchanged"]))
    for shape in ("cold", "unchanged"):
        best = min((n for n in names if not n.startswith("syncfiles")), key=lambda n: med[n][shape])
        for n in ("syncfiles", "syncfiles s1"):
            print("%s %s: %.2fx the faster other (%s)" % (n, shape, med[n][shape] / med[best][shape], best))


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return "%d %s" % (n, unit) if unit == "B" else "%g %s" % (n, unit)
        n /= 1024


if __name__ == "__main__":
    main()
