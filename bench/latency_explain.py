"""Where an endpoint's slow requests went, from keel's slow-request log.

    python3 bench/latency_explain.py STDERR MARKS URL THRESHOLD_MS

STDERR is keel's log (JSON lines), MARKS a file of "start end" byte
offsets into it, one line per measured run (warm-ups excluded). Reads,
in those stretches, the `slow request` lines whose route template matches
URL's path and the `runtime lag` lines, and prints one summary: how many
requests were over the threshold, their total time's median and worst,
the share of their time each part took (running, ready for a thread,
waiting outside, writing the answer; database statements, and for a
group-committed write the batch before its own and its own batch, within
those), the `slow batch` lines (group commits over the threshold: how
many, their items and where their time went) and the runtime lags seen
meanwhile.
"""

import json
import re
import statistics
import sys
from urllib.parse import urlsplit


def lines_in(path, marks):
    with open(path, "rb") as log:
        for start, end in marks:
            log.seek(start)
            for raw in log.read(max(0, end - start)).splitlines():
                try:
                    yield json.loads(raw)
                except ValueError:
                    continue


def fields(line):
    f = line.get("fields") or {}
    return f, f.get("message") or line.get("message") or ""


def matches(template, path):
    """Whether a route template (`/send/{id}`) matches a request path."""
    parts = re.split(r"\{[^}/]*\}", template or "")
    return re.fullmatch("[^/]+".join(map(re.escape, parts)), path) is not None


def main():
    path, marks_path, url, limit = sys.argv[1:5]
    wanted = urlsplit(url).path
    with open(marks_path) as m:
        marks = [tuple(map(int, l.split())) for l in m if len(l.split()) == 2]
    slow, lags, batches = [], [], []
    for line in lines_in(path, marks):
        f, message = fields(line)
        if message == "slow request" and matches(f.get("route"), wanted):
            slow.append(f)
        elif message == "slow batch":
            batches.append(f)
        elif message.startswith("runtime lag"):
            lags.append(float(f.get("lag_ms") or 0))
    lag = f"runtime lags >= {limit} ms: {len(lags)}"
    if lags:
        lag += f" (worst {max(lags):.0f} ms)"
    print(f"{requests(slow, limit)}; {written(batches, limit)}{lag}")


def shares(lines):
    """The share of the lines' total time each field took, in %."""
    total = sum(float(s.get("total_ms") or 0) for s in lines) or 1.0
    return lambda k: 100 * sum(float(s.get(k) or 0) for s in lines) / total


def spread(lines):
    times = [float(s.get("total_ms") or 0) for s in lines]
    return f"median {statistics.median(times):.1f}, worst {max(times):.1f} ms"


def requests(slow, limit):
    if not slow:
        return f"no request over {limit} ms in keel"
    share = shares(slow)
    out = (
        f"{len(slow)} over {limit} ms in keel ({spread(slow)}): running "
        f"{share('run_ms'):.0f} %, ready for a thread {share('ready_ms'):.0f} %, "
        f"waiting outside {share('wait_ms'):.0f} %, writing the answer "
        f"{share('write_ms'):.0f} %; in database statements (within those) "
        f"{share('db_ms'):.0f} %"
    )
    if any(float(s.get("batch_ms") or 0) for s in slow):
        out += (
            f", for the batch before their own {share('queued_ms'):.0f} %, "
            f"in their own batch {share('batch_ms'):.0f} %"
        )
    return out


def written(batches, limit):
    """The group commits over the threshold, when there were any."""
    if not batches:
        return ""
    share = shares(batches)
    items = statistics.median(int(b.get("items") or 0) for b in batches)
    return (
        f"{len(batches)} batches over {limit} ms ({spread(batches)}, median "
        f"{items:.0f} items): running {share('run_ms'):.0f} %, ready for a "
        f"thread {share('ready_ms'):.0f} %, waiting outside "
        f"{share('wait_ms'):.0f} %; in statements {share('db_ms'):.0f} %; "
    )


if __name__ == "__main__":
    main()
