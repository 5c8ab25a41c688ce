#!/usr/bin/env python3
"""Parses a Prometheus text file with prometheus_client's own parser and
prints every sample as JSON: {"name{k=v,...}": value}, plus "types" and
"helps" per family. Exits 1 with the parser's message on a malformed file.

    python3 promparse.py FILE
"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

try:
    text = open(sys.argv[1]).read()
    samples, types, helps = {}, {}, {}
    for family in text_string_to_metric_families(text):
        types[family.name] = family.type
        helps[family.name] = family.documentation
        for s in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            samples[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
    print(json.dumps({"samples": samples, "types": types, "helps": helps}))
except Exception as e:  # the parser raises ValueError and others on bad input
    print(f"parse error: {e}", file=sys.stderr)
    sys.exit(1)
