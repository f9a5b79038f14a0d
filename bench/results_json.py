#!/usr/bin/env python3
"""The benchmark's Markdown results as JSON, for a machine to read.

    bench/results_json.py bench/results/<run>.md > bench/results/<run>.json

Every table row of the file becomes an object named by the table's header
(backend, scenario, req/s, p50, ...); numbers stay as printed (units kept:
"2.31ms", "37.1 MiB"), with `req_s` also as a number where the cell is one.
The lines above the first table (the run's title and settings) are kept as
`about`.
"""
import json
import re
import sys


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def main(path):
    about, rows, header = [], [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("|"):
                if header is None and line.strip():
                    about.append(line.strip().lstrip("# "))
                header = None if line.strip() else header
                continue
            values = cells(line)
            if header is None:
                header = [re.sub(r"[^a-z0-9]+", "_", h.lower()).strip("_") for h in values]
                continue
            if all(set(v) <= set("-:") for v in values):
                continue
            row = dict(zip(header, values))
            rate = row.get("req_s", "")
            if re.fullmatch(r"[0-9]+(\.[0-9]+)?", rate):
                row["req_s_number"] = float(rate)
            rows.append(row)
    json.dump({"about": about, "rows": rows}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bench/results_json.py RESULTS.md")
    main(sys.argv[1])
