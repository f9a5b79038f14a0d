"""The soak's summary (JSON on stdin) as a row of the benchmark's table."""
import json
import sys


def main():
    s = json.load(sys.stdin)
    backend = sys.argv[1]
    reqs = sum(s["requests"].values())
    back = s.get("sockets_back_to_idle_after_s")
    fds = (f"descriptors {s['fds_idle']} idle, {s['fds_peak']} peak, {s['fds_after']} after; "
           f"sockets {s['sockets_idle']} idle, {s['sockets_peak']} peak, {s['sockets_after']} after"
           + (f" (idle again {back} s after the load)" if back is not None
              else f" (not back to idle: {', '.join(s.get('sockets_left_open') or []) or '?'})"))
    what = (f"soak {s['seconds']}s: {reqs} requests {s['requests']}, {s['users']} users; "
            f"RSS idle {s['rss_idle_mib']} MiB; the floor (least of a minute) "
            f"{s['rss_floor_mid_mib']} at the middle, {s['rss_floor_end_mib']} at the end "
            f"({s['rss_growth_last_half_pct']:+}% over the last half); {fds}")
    print(f"| {backend} | {what} | {reqs // s['seconds']} req/s | - | - | - | - | {s['rss_peak_mib']} MiB |")


if __name__ == "__main__":
    main()
