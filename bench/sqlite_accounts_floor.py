"""GET /account or POST /goals/weekly, straight at SQLite, in a loop on one
connection with keel's settings (WAL, synchronous=NORMAL): the same
statements (session + user, and for a goal the 1000th-goal check and the
insert), rows serialized to JSON. Prints operations per second.

    sqlite_accounts_floor.py DB SECONDS account|goal [with-session]
"""
import json
import os
import sqlite3
import sys
import time

path, seconds, what = sys.argv[1], float(sys.argv[2]), sys.argv[3]
with_session = len(sys.argv) > 4 and sys.argv[4] == "with-session"
db = sqlite3.connect(path, isolation_level=None)
db.row_factory = sqlite3.Row
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=NORMAL")
db.execute("PRAGMA busy_timeout=5000")
sessions = [(r["id"], r["user_id"]) for r in db.execute("SELECT id, user_id FROM accounts_sessions LIMIT 200")]
if not sessions:
    sys.exit("no sessions to read")

SESSION = (
    "SELECT u.* FROM accounts_sessions s JOIN accounts_users u ON u.id = s.user_id"
    " WHERE s.id = ? AND s.user_id = ? AND s.revoked_at IS NULL AND s.expire_at > ?"
)
n = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    sid, uid = sessions[n % len(sessions)]
    now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    if what == "account" or with_session:
        row = db.execute(SESSION, (sid, uid, now)).fetchone()
        body = json.dumps({"user": dict(row)}) if row else ""
    if what == "goal":
        db.execute(
            "SELECT id FROM accounts_weekly_goals WHERE user_id = ? LIMIT 1 OFFSET 999", (uid,)
        ).fetchall()
        gid = os.urandom(12).hex()
        db.execute(
            "INSERT INTO accounts_weekly_goals (id, user_id, title, is_completed, revision, created_at, updated_at)"
            " VALUES (?,?,?,?,?,?,?)",
            (gid, uid, "bench", False, 0, now, now),
        )
        row = db.execute("SELECT * FROM accounts_weekly_goals WHERE id = ?", (gid,)).fetchone()
        body = json.dumps({"code": 200, "goal": dict(row), "message": "Weekly goal created"})
    n += 1
print(f"{n / seconds:.0f}")
