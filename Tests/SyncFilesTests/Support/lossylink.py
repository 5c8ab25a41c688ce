#!/usr/bin/env python3
"""A slow, lossy Ethernet link in user space, for tests (the kernel has no netem).

    lossylink.py IF_A IF_B --delay-ms 50 --loss 0.02 [--seed 1]

Bridges every frame between two interfaces (run it in a network namespace
that holds both), each one delayed by --delay-ms and dropped with
probability --loss, independently in each direction. SIGUSR1 starts an
outage (every frame dropped) and SIGUSR2 ends it. Prints "ready" once both
sockets are bound. Offloads (TSO, GSO, GRO, checksum) must be off on the
interfaces, so that frames fit the MTU and carry their own checksums.
"""
import argparse
import heapq
import random
import signal
import socket
import sys
import threading
import time

ETH_P_ALL = 0x0003

parser = argparse.ArgumentParser()
parser.add_argument("a")
parser.add_argument("b")
parser.add_argument("--delay-ms", type=float, default=50.0)
parser.add_argument("--loss", type=float, default=0.0)
parser.add_argument("--seed", type=int, default=1)
args = parser.parse_args()

outage = threading.Event()
# The test runner may start us with these blocked (a thread's mask is inherited).
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2})
signal.signal(signal.SIGUSR1, lambda *_: outage.set())
signal.signal(signal.SIGUSR2, lambda *_: outage.clear())


def bound(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    return s


class Direction:
    """Frames read from `src`, written to `dst` after the delay, unless lost."""

    def __init__(self, src, dst, seed):
        self.src, self.dst = src, dst
        self.rng = random.Random(seed)
        self.queue = []  # (due, sequence, frame)
        self.sequence = 0
        self.ready = threading.Condition()

    def receive(self):
        while True:
            frame, address = self.src.recvfrom(65535)
            if address[2] == socket.PACKET_OUTGOING:
                continue  # what we wrote ourselves, or the host's own sends on this side
            if outage.is_set() or self.rng.random() < args.loss:
                continue
            with self.ready:
                self.sequence += 1
                heapq.heappush(self.queue, (time.monotonic() + args.delay_ms / 1000.0, self.sequence, frame))
                self.ready.notify()

    def send(self):
        while True:
            with self.ready:
                while not self.queue:
                    self.ready.wait()
                due, _, frame = self.queue[0]
                wait = due - time.monotonic()
                if wait > 0:
                    self.ready.wait(wait)
                    continue
                heapq.heappop(self.queue)
            try:
                self.dst.send(frame)
            except OSError:
                pass  # a frame the interface refuses is a lost frame


a, b = bound(args.a), bound(args.b)
for d in (Direction(a, b, args.seed), Direction(b, a, args.seed + 1)):
    threading.Thread(target=d.receive, daemon=True).start()
    threading.Thread(target=d.send, daemon=True).start()
print("ready", flush=True)
while True:
    signal.pause()
