#!/usr/bin/env python3
"""The soak: steady mixed traffic on every service for a long time, with
data that grows as real use does (new users and their goals, events,
devices, form submissions, push sends to every device so far), a share of
requests answered with errors (bad bodies, unknown paths, missing tokens),
while the process is sampled every few seconds: resident memory, open file
descriptors, database and Redis connections.

  soak.py SECONDS PID BACKEND OUT_DIR

Base URLs from the environment: ACCOUNTS, USAGE_ALERTS, SVC (origin),
CHANNEL_API; APPCHECK (a token svc accepts), ADMIN_BASIC (svc's admin
`user:password`), PG_DB (the PostgreSQL database, to count its sessions),
REDIS_PREFIX. Writes OUT_DIR/soak.csv and prints a summary; bench/run
draws the curves. Standard library only.
"""

import base64
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

WORKERS = 8
# Requests a second all workers together aim at: steady use, not saturation.
RATE = float(os.environ.get("BENCH_SOAK_RATE", "300"))
SAMPLE_EVERY = 5.0
# The longest wait for the descriptors to come back once the load stops.
AFTER_AT_MOST = 240  # outbound keep-alive connections close 90-180 s after their last use


class Client:
    """Keep-alive connections, one per origin."""

    def __init__(self):
        self.conns = {}

    def request(self, method, url, body=None, headers=None):
        u = urllib.parse.urlsplit(url)
        key = u.netloc
        headers = dict(headers or {})
        data = None
        if isinstance(body, (dict, list)):
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        elif isinstance(body, str):
            data = body.encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        path = u.path + ("?" + u.query if u.query else "")
        for attempt in range(2):
            conn = self.conns.get(key)
            if conn is None:
                conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
                self.conns[key] = conn
            try:
                conn.request(method, path, body=data, headers=headers)
                r = conn.getresponse()
                payload = r.read()
                return r.status, payload
            except (http.client.HTTPException, OSError):
                conn.close()
                self.conns.pop(key, None)
                if attempt:
                    return 0, b""
        return 0, b""


class Traffic:
    def __init__(self):
        self.a = os.environ["ACCOUNTS"]
        self.u = os.environ["USAGE_ALERTS"]
        self.s = os.environ["SVC"] + "/svc/v1"
        self.c = os.environ["CHANNEL_API"]
        self.appcheck = {"X-Vendor-AppCheck": os.environ["APPCHECK"]}
        self.admin = {"Authorization": "Basic " + base64.b64encode(
            os.environ["ADMIN_BASIC"].encode()).decode()}
        self.lock = threading.Lock()
        self.tokens = []  # accounts' access tokens of the users so far
        self.n = 0
        self.statuses = {}
        self.last_send = 0.0

    def next_id(self):
        with self.lock:
            self.n += 1
            return self.n

    def count(self, status):
        with self.lock:
            bucket = f"{status // 100}xx" if status else "failed"
            self.statuses[bucket] = self.statuses.get(bucket, 0) + 1

    def register_user(self, http):
        i = self.next_id()
        status, body = http.request("POST", f"{self.a}/auth/register",
                                    body=f"username=soak{i}&email=soak{i}%40example.com&password=soak-Password-{i}-keel")
        if status == 200:
            with self.lock:
                self.tokens.append(json.loads(body)["accessToken"])
        return status

    def one(self, http):
        """One request, chosen as real use mixes them."""
        r = random.random()
        i = self.next_id()
        with self.lock:
            token = random.choice(self.tokens) if self.tokens else None
        user = {"Authorization": f"Bearer soak-user-{i % 500}"}
        if token is None or r < 0.02:
            return self.register_user(http)
        bearer = {"Authorization": f"Bearer {token}"}
        if r < 0.12:
            return http.request("GET", f"{self.a}/account", headers=bearer)[0]
        if r < 0.20:
            return http.request("POST", f"{self.a}/goals/weekly", body=f"title=goal+{i}", headers=bearer)[0]
        if r < 0.28:
            return http.request("GET", f"{self.a}/goals/weekly", headers=bearer)[0]
        if r < 0.42:
            return http.request("POST", f"{self.u}/event", headers=user, body={
                "sessionId": f"s{i % 50}", "timestamp": "2026-11-26T10:00:00Z", "model": "m",
                "inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 0, "cacheWriteTokens": 0,
                "costUSD": 0.0001})[0]
        if r < 0.52:
            return http.request("GET", f"{self.u}/history?limit=20", headers=user)[0]
        if r < 0.55:
            return http.request("POST", f"{self.u}/register", headers=user, body={
                "device_token": f"{i:064x}", "platform": "ios", "sandbox": True})[0]
        if r < 0.60:
            return http.request("POST", f"{self.s}/register", headers=self.appcheck, body={
                "push_token": f"ExponentPushToken[soak{i}]", "device_type": "android"})[0]
        if r < 0.66:
            return http.request("GET", f"{self.s}/register/status?push_token=ExponentPushToken%5Bsoak{i // 2}%5D")[0]
        if r < 0.72:
            return http.request("POST", f"{self.s}/submit/1", headers=self.appcheck,
                                body={"fields": {"name": f"n{i}", "email": "soak@example.com"}})[0]
        if r < 0.82:
            return http.request("GET", f"{self.c}/api/trpc/stream.isLive")[0]
        if r < 0.88:
            return http.request("GET", f"{self.c}/api/trpc/channel.getInfo")[0]
        # Errors, as clients make them.
        if r < 0.92:
            return http.request("POST", f"{self.u}/event", headers=user, body={"sessionId": "x"})[0]
        if r < 0.95:
            return http.request("GET", f"{self.a}/no/such/path{i}")[0]
        if r < 0.98:
            return http.request("GET", f"{self.a}/account", headers={"Authorization": "Bearer nope"})[0]
        return http.request("POST", f"{self.c}/api/trpc/stream.isLive")[0]

    def push(self, http):
        """A send to every device so far, once a minute."""
        now = time.time()
        with self.lock:
            if now - self.last_send < 60:
                return None
            self.last_send = now
        return http.request("POST", f"{self.s}/send", headers=self.admin,
                            body={"title": "Soak", "body": "A send to everyone"})[0]


def worker(t, stop):
    http = Client()
    gap = WORKERS / RATE
    while not stop.is_set():
        started = time.time()
        t.count(t.one(http))
        sent = t.push(http)
        if sent is not None:
            t.count(sent)
        time.sleep(max(0.0, gap - (time.time() - started)))


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def sample(pid, backend):
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:")) / 1024
    fds = sockets = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        fds += 1
        sockets += target.startswith("socket:")
    db = ""
    if backend == "postgres":
        db = run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-tAc",
                  f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{os.environ['PG_DB']}'"])
    redis = run(["redis-cli", "-h", "127.0.0.1", "info", "clients"])
    clients = next((l.split(":")[1] for l in redis.splitlines() if l.startswith("connected_clients:")), "")
    return rss, fds, db, clients, sockets


def tcp_sockets(pid):
    """keel's TCP sockets as `state local peer` (listeners included)."""
    lines = run(["ss", "-tanpH"]).splitlines()
    return sorted(" ".join(l.split()[i] for i in (0, 3, 4)) for l in lines if f"pid={pid}," in l)


def main():
    seconds, pid, backend, out_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    t = Traffic()
    rows = []
    started = time.time()
    baseline = sample(pid, backend)
    idle_sockets = set(tcp_sockets(pid))
    rows.append((0.0, *baseline, "idle"))
    stop = threading.Event()
    threads = [threading.Thread(target=worker, args=(t, stop), daemon=True) for _ in range(WORKERS)]
    for th in threads:
        th.start()
    while time.time() - started < seconds:
        time.sleep(SAMPLE_EVERY)
        rows.append((time.time() - started, *sample(pid, backend), "load"))
    stop.set()
    for th in threads:
        th.join()
    # After the load: what is left open once it stops, until the sockets
    # are back to where they were idle (the pool closes idle connections
    # after KEEL_DB_IDLE_SECS) or AFTER_AT_MOST has passed. Files are
    # counted apart: SQLite keeps the descriptor of a closed connection's
    # database file while another connection of the process holds a lock on
    # it (POSIX locks are per process) and hands it to the next connection
    # it opens, so those stay at the most ever open together.
    stopped = time.time()
    back_after = None
    while time.time() - stopped < AFTER_AT_MOST:
        time.sleep(SAMPLE_EVERY)
        rows.append((time.time() - started, *sample(pid, backend), "after"))
        if rows[-1][5] <= baseline[4]:
            back_after = round(time.time() - stopped)
            break
    with open(f"{out_dir}/soak.csv", "w") as f:
        f.write("seconds,rss_mib,fds,db_connections,redis_clients,sockets,phase\n")
        for r in rows:
            f.write(f"{r[0]:.1f},{r[1]:.1f},{r[2]},{r[3]},{r[4]},{r[5]},{r[6]}\n")
    load = [r for r in rows if r[6] == "load"]
    half = [r[1] for r in load if r[0] >= seconds / 2]
    mid = statistics.median([r[1] for r in load if seconds * 0.4 <= r[0] <= seconds * 0.6] or [0])
    end = statistics.median([r[1] for r in load if r[0] >= seconds * 0.9] or [0])
    # What stays resident: the least RSS of a minute, around the middle and
    # at the end. A registration's password hash takes 19 MiB for a moment
    # (argon2), so single samples jump by that and fall back; the floor
    # under them is what grows if anything is kept.
    floor_mid = min([r[1] for r in load if abs(r[0] - seconds / 2) <= 30] or [0])
    floor_end = min([r[1] for r in load if r[0] >= seconds - 60] or [0])
    growth = (floor_end - floor_mid) / floor_mid * 100 if floor_mid else 0.0
    after = [r for r in rows if r[6] == "after"]
    summary = {
        "seconds": seconds, "requests": dict(sorted(t.statuses.items())),
        "users": len(t.tokens), "rss_idle_mib": round(baseline[0], 1),
        "rss_mid_mib": round(mid, 1), "rss_end_mib": round(end, 1),
        "rss_floor_mid_mib": round(floor_mid, 1), "rss_floor_end_mib": round(floor_end, 1),
        "rss_peak_mib": round(max(r[1] for r in rows), 1),
        "rss_growth_last_half_pct": round(growth, 2),
        "rss_last_half_range_mib": [round(min(half or [0]), 1), round(max(half or [0]), 1)],
        "fds_idle": baseline[1], "fds_peak": max(r[2] for r in rows),
        "fds_after": after[-1][2] if after else None,
        "sockets_idle": baseline[4], "sockets_peak": max(r[5] for r in rows),
        "sockets_after": after[-1][5] if after else None,
        "sockets_back_to_idle_after_s": back_after,
        # What was open at the end and not while idle (when not back).
        "sockets_left_open": [] if back_after is not None
        else [x for x in tcp_sockets(pid) if x not in idle_sockets],
        "db_connections_peak": max((int(r[3]) for r in rows if str(r[3]).isdigit()), default=None),
        "redis_clients_peak": max((int(r[4]) for r in rows if str(r[4]).isdigit()), default=None),
    }
    with open(f"{out_dir}/soak.json", "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
