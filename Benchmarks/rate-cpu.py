#!/usr/bin/env python3
"""CPU time of a transfer held to a rate (SPEC §10.3: waiting costs no CPU).

One nginx serves a 50 MB file as fast as loopback allows, a second one
(limit_rate) at RATE per connection. Side by side, alternating, ROUNDS
times: syncfiles --rate RATE from the first, syncfiles uncapped from the
second, and curl --limit-rate RATE from the first. Prints the median wall
and CPU (user + system) seconds of each.

    python3 Benchmarks/rate-cpu.py --syncfiles "$(scripts/build-release)" [--rate 5m] [--rounds 3]
"""
import argparse, os, shutil, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import Nginx, deterministic, run  # noqa: E402


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--syncfiles", required=True)
    a.add_argument("--rate", default="5m", help="nginx's limit_rate form: 5m is 5 MiB/s")
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--size", type=int, default=50_000_000)
    args = a.parse_args()
    args.syncfiles = os.path.abspath(args.syncfiles)
    work = tempfile.mkdtemp(prefix="rate-cpu-")
    os.chmod(work, 0o755)  # nginx workers read the file
    www = os.path.join(work, "www")
    os.makedirs(www)
    deterministic(os.path.join(www, "big.bin"), args.size, 11)
    plain, limited = Nginx(work, www), Nginx(work, www, limit_rate=args.rate)
    curl_rate = args.rate.upper()  # curl's suffixes are 1024-based, as nginx's
    times = {}
    try:
        for _ in range(args.rounds):
            for name, server, extra in [("syncfiles --rate", plain, ["--rate", curl_rate]),
                                        ("syncfiles, limited server", limited, []),
                                        ("curl --limit-rate", plain, None)]:
                d = tempfile.mkdtemp(dir=work)
                url = "http://127.0.0.1:%d/big.bin" % server.port
                if extra is None:
                    argv = ["curl", "-sS", "-o", os.path.join(d, "big.bin"), "--limit-rate", curl_rate, url]
                else:
                    with open(os.path.join(d, "m.yaml"), "w") as f:
                        f.write("version: 1\nname: r\nroot: out\njournal: j\nfiles:\n"
                                "  - {id: big, url: '%s', destination: big.bin}\n" % url)
                    argv = [args.syncfiles, "apply", "--quiet"] + extra + ["m.yaml"]
                wall, cpu, _, status = run(argv, cwd=d)
                if status != 0:
                    raise SystemExit("%s failed" % name)
                times.setdefault(name, []).append((wall, cpu))
                shutil.rmtree(d)
    finally:
        plain.stop()
        limited.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("%d MB at %s/s, median of %d alternating runs" % (args.size // 1_000_000, args.rate, args.rounds))
    print("| run | wall s | CPU s (user + system) |\n| --- | --- | --- |")
    for name, rows in times.items():
        print("| %s | %.2f | %.3f |" % (name, statistics.median(r[0] for r in rows),
                                       statistics.median(r[1] for r in rows)))


if __name__ == "__main__":
    main()
