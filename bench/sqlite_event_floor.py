"""The insert-and-aggregate transaction of POST /event, straight at SQLite,
in a loop on one connection (SQLite has one writer), with keel's settings
(WAL, synchronous=NORMAL). Prints transactions per second."""
import sqlite3
import sys
import time
import uuid

path, seconds = sys.argv[1], float(sys.argv[2])
db = sqlite3.connect(path, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=NORMAL")
db.execute("PRAGMA busy_timeout=5000")
day = time.strftime("%Y-%m-%d", time.gmtime())
n = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    user, session = f"floor-user-{n % 200}", f"s{n % 7}"
    now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    db.execute("BEGIN IMMEDIATE")
    db.execute(
        "INSERT INTO ua_events (id, user_id, session_id, timestamp, model, input_tokens, output_tokens,"
        " cache_read_tokens, cache_write_tokens, cost_usd, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (str(uuid.uuid4()), user, session, "2026-11-22T10:00:00Z", "claude", 120, 80, 10, 5, 0.0021, now),
    )
    db.execute(
        "INSERT INTO ua_day_sessions (user_id, day, session_id) VALUES (?,?,?) ON CONFLICT DO NOTHING",
        (user, day, session),
    )
    db.execute(
        "INSERT INTO ua_daily_totals (user_id, day, cost_usd, tokens, sessions, events) VALUES (?,?,?,?,0,1)"
        " ON CONFLICT (user_id, day) DO UPDATE SET cost_usd = cost_usd + excluded.cost_usd,"
        " tokens = tokens + excluded.tokens, events = events + 1 RETURNING cost_usd",
        (user, day, 0.0021, 215),
    ).fetchall()
    db.execute("SELECT thresholds FROM ua_preferences WHERE user_id = ?", (user,)).fetchall()
    db.execute("COMMIT")
    n += 1
print(f"{n / seconds:.0f}")
