"""GET /history?offset=0 straight at SQLite: the first page of 50 of one
user's events, rows serialized to JSON, in a loop on one connection.
Prints pages per second.

    sqlite_history_floor.py DB SECONDS USER_ID
"""
import json
import sqlite3
import sys
import time

path, seconds, user = sys.argv[1], float(sys.argv[2]), sys.argv[3]
db = sqlite3.connect(path, isolation_level=None)
db.row_factory = sqlite3.Row
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA busy_timeout=5000")
PAGE = (
    "SELECT id, user_id, session_id, timestamp, model, input_tokens, output_tokens,"
    " cache_read_tokens, cache_write_tokens, cost_usd, created_at"
    " FROM ua_events WHERE user_id = ? ORDER BY seq DESC LIMIT 50 OFFSET 0"
)
n = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    rows = db.execute(PAGE, (user,)).fetchall()
    body = json.dumps({"events": [dict(r) for r in rows], "limit": 50, "offset": 0})
    n += 1
print(f"{n / seconds:.0f}")
