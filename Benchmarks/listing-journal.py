#!/usr/bin/env python3
"""What a prefix's runs write to the journal: a prefix of COUNT objects of
100 B on moto_server (signatures checked), applied three times unchanged,
then once after one object is added. Prints the journal's size, its records
and the size of each listing record after each run.

    python3 Benchmarks/listing-journal.py --syncfiles PATH [--count 10000]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import objects  # noqa: E402  (its moto fixtures)


def journal_figures(path):
    data = open(path, "rb").read()
    lines = [l for l in data.split(b"\n") if l]
    listings = [len(l) for l in lines if b'"t":"listing"' in l]
    return "journal %d B, %d records, listing records %s B" % (len(data), len(lines), listings)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--syncfiles", required=True)
    ap.add_argument("--count", type=int, default=10000)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="syncfiles-listing-")
    port = objects.free_port()
    endpoint = "http://127.0.0.1:%d" % port
    env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="3")
    server = subprocess.Popen([sys.executable, os.path.join(objects.SUPPORT, "moto_s3_server.py"), "-H",
                               "127.0.0.1", "-p", str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        objects.wait_for(port)
        ak, sk = objects.fixture(endpoint, "keys").split()
        objects.fixture(endpoint, "putmany", ak, sk, "bench", "p/", str(a.count), "100")
        base = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        run_env = dict(base, AWS_ACCESS_KEY_ID=ak, AWS_SECRET_ACCESS_KEY=sk, AWS_REGION="us-east-1",
                       AWS_ENDPOINT_URL=endpoint, HOME=work)
        manifest = os.path.join(work, "m.yaml")
        with open(manifest, "w") as f:
            f.write("version: 1\nname: lj\nroot: %s/out\njournal: %s/journal\nfiles:\n"
                    "  - {id: p, url: 's3://bench/p/', destination: p}\n" % (work, work))

        def apply(label):
            p = subprocess.run([a.syncfiles, "apply", "--quiet", manifest], env=run_env, capture_output=True,
                               text=True)
            if p.returncode != 0:
                sys.exit("apply failed (exit %d): %s" % (p.returncode, p.stdout[-2000:] + p.stderr[-2000:]))
            print("%-22s %s" % (label, journal_figures(os.path.join(work, "journal"))))

        for n in range(3):
            apply("run %d (%s)" % (n + 1, "cold" if n == 0 else "unchanged"))
        objects.fixture(endpoint, "putmany", ak, sk, "bench", "p/new-", "1", "100")
        apply("one object added")
    finally:
        os.killpg(server.pid, 15)
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
