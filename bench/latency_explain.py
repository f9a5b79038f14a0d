"""Where an endpoint's slow requests went, from keel's slow-request log.

    python3 bench/latency_explain.py STDERR MARKS URL THRESHOLD_MS

STDERR is keel's log (JSON lines), MARKS a file of "start end" byte
offsets into it, one line per measured run (warm-ups excluded). Reads,
in those stretches, the `slow request` lines whose route template matches
URL's path and the `runtime lag` lines, and prints one summary: how many
requests were over the threshold, their total time's median and worst,
the share of their time each part took (running, ready for a thread,
waiting outside, writing the answer; database statements within those),
and the runtime lags seen meanwhile.
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
    slow, lags = [], []
    for line in lines_in(path, marks):
        f, message = fields(line)
        if message == "slow request" and matches(f.get("route"), wanted):
            slow.append(f)
        elif message.startswith("runtime lag"):
            lags.append(float(f.get("lag_ms") or 0))
    lag = f"runtime lags >= {limit} ms: {len(lags)}"
    if lags:
        lag += f" (worst {max(lags):.0f} ms)"
    if not slow:
        print(f"no request over {limit} ms in keel; {lag}")
        return
    total = sum(float(s.get("total_ms") or 0) for s in slow) or 1.0
    share = lambda k: 100 * sum(float(s.get(k) or 0) for s in slow) / total
    times = [float(s.get("total_ms") or 0) for s in slow]
    print(
        f"{len(slow)} over {limit} ms in keel (median {statistics.median(times):.1f}, "
        f"worst {max(times):.1f} ms): running {share('run_ms'):.0f} %, "
        f"ready for a thread {share('ready_ms'):.0f} %, waiting outside "
        f"{share('wait_ms'):.0f} %, writing the answer {share('write_ms'):.0f} %; "
        f"in database statements (within those) {share('db_ms'):.0f} %; {lag}"
    )


if __name__ == "__main__":
    main()
