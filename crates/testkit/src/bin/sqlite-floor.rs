//! The SQLite floors of keel's benchmarked endpoints: the same statements
//! straight at the database file, with keel's settings (WAL,
//! synchronous=NORMAL), every result's rows serialized to JSON (an object
//! of column to value per row, as a client would). Reads loop on one
//! connection per thread, one thread per core unless told; writes on one
//! connection (SQLite has one writer), one transaction per operation.
//! Prints operations a second.
//!
//!   sqlite-floor DB SECONDS SCENARIO [ARG] [THREADS]
//!
//! With `SQLITE_FLOOR_RATE=R` it runs at a fixed rate instead, on one
//! connection (an operation every 1/R s, each timed from when it was due,
//! so a stall counts for every operation it delays, as oha's latency
//! correction does) and prints "achieved p50 p99 p99.9 100.0 0"
//! (operations a second, then milliseconds; the last two fields keep the
//! latency scenario's row shape).
//!
//! Reads (keel's statements for the endpoint):
//!   history USER_ID   GET /history?offset=0: the user's 50 newest events
//!   account           GET /account, uncached: a live session of 200, its user
//!   goals             GET /goals/weekly: the goals of one of 200 users
//!   preferences       GET /preferences: the thresholds of one of 200 users
//!   register-status   GET /register/status: a device by its push token
//! Writes:
//!   event             POST /event: the event, the day's session and totals,
//!                     the user's thresholds
//!   goal              POST /goals/weekly: the 1000th-goal check, the insert,
//!                     the row
//!   submit            POST /submit: the token's audit row and the
//!                     submission, returning its id
//!   register          POST /register: the device upserted by its token
//!
//! Rust, not a Python loop: a Python loop spends most of its time in the
//! interpreter, which made the old floors weaker than keel itself.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::time::{Duration, Instant};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, params_from_iter};
use serde_json::{Map, Value};

type Params = Box<dyn Fn(u64) -> Vec<Value> + Send + Sync>;

struct Scenario {
    /// Statements run in turn for one operation, with their parameters.
    steps: Vec<(&'static str, Params)>,
    /// One writer, and a transaction around each operation.
    write: bool,
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false)
}

fn text(s: impl Into<String>) -> Value {
    Value::String(s.into())
}

/// Values of a column of the database, for the operations to take in turn.
fn column(conn: &Connection, name: &str, sql: &str) -> Vec<String> {
    let mut st = conn.prepare(sql).expect("prepare");
    let rows = st
        .query_map([], |r| r.get::<_, String>(0))
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("rows");
    assert!(!rows.is_empty(), "nothing to read for {name}: {sql}");
    rows
}

fn in_turn(values: Vec<String>) -> Params {
    Box::new(move |n| {
        let i = usize::try_from(n).unwrap_or(0) % values.len();
        vec![text(values[i].clone())]
    })
}

fn read(sql: &'static str, params: Params) -> Scenario {
    Scenario {
        steps: vec![(sql, params)],
        write: false,
    }
}

const SESSION: &str = "SELECT u.* FROM accounts_sessions s JOIN accounts_users u ON u.id = s.user_id \
     WHERE s.id = ?1 AND s.user_id = ?2 AND s.revoked_at IS NULL AND s.expire_at > ?3";

fn scenario(conn: &Connection, name: &str, arg: Option<&str>) -> Scenario {
    let users = |sql| column(conn, name, sql);
    match name {
        "history" => {
            let user = arg.expect("history needs a user id").to_owned();
            read(
                "SELECT seq, id, user_id, session_id, timestamp, model, input_tokens, \
                 output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at \
                 FROM ua_events WHERE user_id = ?1 ORDER BY seq DESC LIMIT 50 OFFSET 0",
                Box::new(move |_| vec![text(user.clone())]),
            )
        }
        "account" => {
            let sessions = users("SELECT id || ' ' || user_id FROM accounts_sessions LIMIT 200");
            read(
                SESSION,
                Box::new(move |n| {
                    let i = usize::try_from(n).unwrap_or(0) % sessions.len();
                    let (sid, uid) = sessions[i].split_once(' ').unwrap_or_default();
                    vec![text(sid), text(uid), text(now())]
                }),
            )
        }
        "goals" => read(
            "SELECT * FROM accounts_weekly_goals WHERE user_id = ?1 \
             ORDER BY created_at DESC, id DESC",
            in_turn(users(
                "SELECT DISTINCT user_id FROM accounts_weekly_goals LIMIT 200",
            )),
        ),
        "preferences" => read(
            "SELECT * FROM ua_preferences WHERE user_id = ?1 LIMIT 1",
            in_turn(users("SELECT user_id FROM ua_preferences LIMIT 200")),
        ),
        "register-status" => read(
            "SELECT * FROM svc_push_devices WHERE push_token = ?1 LIMIT 1",
            in_turn(users(
                "SELECT push_token FROM svc_push_devices ORDER BY random() LIMIT 1000",
            )),
        ),
        "event" => event(),
        "goal" => {
            let owners = users("SELECT user_id FROM accounts_sessions LIMIT 200");
            let owner =
                move |n: u64| owners[usize::try_from(n).unwrap_or(0) % owners.len()].clone();
            let owner2 = owner.clone();
            let id = |n: u64| text(format!("{:024x}", n ^ 0x5eed_0000_0000));
            Scenario {
                steps: vec![
                    (
                        "SELECT id FROM accounts_weekly_goals WHERE user_id = ?1 LIMIT 1 OFFSET 999",
                        Box::new(move |n| vec![text(owner(n))]),
                    ),
                    (
                        "INSERT INTO accounts_weekly_goals (id, user_id, title, is_completed, \
                         revision, created_at, updated_at) VALUES (?1, ?2, 'bench', 0, 0, ?3, ?3)",
                        Box::new(move |n| vec![id(n), text(owner2(n)), text(now())]),
                    ),
                    (
                        "SELECT * FROM accounts_weekly_goals WHERE id = ?1",
                        Box::new(move |n| vec![id(n)]),
                    ),
                ],
                write: true,
            }
        }
        "submit" => Scenario {
            steps: vec![
                (
                    "INSERT INTO svc_audit (event, app_id, form_id, token_hash, created_at) \
                     VALUES ('svc_forms_appcheck_verified', '1:123456:ios:bench', '1', ?1, ?2)",
                    Box::new(|_| {
                        vec![
                            text(
                                "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                            ),
                            text(now()),
                        ]
                    }),
                ),
                (
                    "INSERT INTO svc_submissions (form_id, field_values, app_id, created_at) \
                     VALUES ('1', ?1, '1:123456:ios:bench', ?2) RETURNING id",
                    Box::new(|_| {
                        vec![
                            text(r#"{"name":"Ada","email":"ada@example.com"}"#),
                            text(now()),
                        ]
                    }),
                ),
            ],
            write: true,
        },
        "register" => Scenario {
            steps: vec![(
                "INSERT INTO svc_push_devices (push_token, device_type, device_model, os_version, \
                 app_version, locale, timezone, user_label, active, inactive_reason, app_id, \
                 registered_at, updated_at) VALUES (?1, 'ios', NULL, NULL, '2.0.0', 'en-US', \
                 'Europe/Berlin', NULL, 1, NULL, '1:123456:ios:bench', ?2, ?2) \
                 ON CONFLICT (push_token) DO UPDATE SET device_type = excluded.device_type, \
                 device_model = excluded.device_model, os_version = excluded.os_version, \
                 app_version = excluded.app_version, locale = excluded.locale, \
                 timezone = excluded.timezone, user_label = excluded.user_label, \
                 active = excluded.active, inactive_reason = excluded.inactive_reason, \
                 updated_at = excluded.updated_at, app_id = excluded.app_id",
                Box::new(|n| vec![text(format!("ExponentPushToken[floor-{n}]")), text(now())]),
            )],
            write: true,
        },
        other => panic!("no scenario {other:?}"),
    }
}

fn event() -> Scenario {
    let user = |n: u64| text(format!("floor-user-{}", n % 200));
    let day = || text(chrono::Utc::now().format("%Y-%m-%d").to_string());
    Scenario {
        steps: vec![
            (
                "INSERT INTO ua_events (id, user_id, session_id, timestamp, model, input_tokens, \
                 output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at) \
                 VALUES (?1, ?2, ?3, '2026-11-22T10:00:00Z', 'claude', 120, 80, 10, 5, 0.0021, ?4)",
                Box::new(move |n| {
                    vec![
                        text(format!("{:032x}", u128::from(n) ^ 0xf100_0000_0000_0000)),
                        user(n),
                        text(format!("s{}", n % 7)),
                        text(now()),
                    ]
                }),
            ),
            (
                "INSERT INTO ua_day_sessions (user_id, day, session_id) VALUES (?1, ?2, ?3) \
                 ON CONFLICT DO NOTHING",
                Box::new(move |n| vec![user(n), day(), text(format!("s{}", n % 7))]),
            ),
            (
                "INSERT INTO ua_daily_totals (user_id, day, cost_usd, tokens, sessions, events) \
                 VALUES (?1, ?2, 0.0021, 215, 0, 1) ON CONFLICT (user_id, day) DO UPDATE SET \
                 cost_usd = cost_usd + excluded.cost_usd, tokens = tokens + excluded.tokens, \
                 events = events + 1 RETURNING cost_usd",
                Box::new(move |n| vec![user(n), day()]),
            ),
            (
                "SELECT thresholds FROM ua_preferences WHERE user_id = ?1",
                Box::new(move |n| vec![user(n)]),
            ),
        ],
        write: true,
    }
}

fn open(path: &str) -> Connection {
    let conn = Connection::open(path).expect("open the database");
    conn.busy_timeout(Duration::from_secs(5))
        .expect("busy timeout");
    conn.pragma_update(None, "synchronous", "NORMAL")
        .expect("synchronous");
    conn
}

fn sql_value(v: &Value) -> rusqlite::types::Value {
    match v {
        Value::String(s) => rusqlite::types::Value::Text(s.clone()),
        Value::Number(n) => n.as_i64().map_or(
            rusqlite::types::Value::Null,
            rusqlite::types::Value::Integer,
        ),
        _ => rusqlite::types::Value::Null,
    }
}

/// Runs a statement; its rows as a JSON array of objects.
fn rows_json(st: &mut rusqlite::CachedStatement<'_>, params: &[Value]) -> String {
    let names: Vec<String> = st.column_names().into_iter().map(str::to_owned).collect();
    let mut rows = st
        .query(params_from_iter(params.iter().map(sql_value)))
        .expect("query");
    let mut out = Vec::new();
    while let Some(row) = rows.next().expect("row") {
        let mut obj = Map::new();
        for (i, name) in names.iter().enumerate() {
            let v = match row.get_ref(i).expect("value") {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(n) => Value::from(n),
                ValueRef::Real(f) => Value::from(f),
                ValueRef::Text(t) => Value::from(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Value::from(b.to_vec()),
            };
            obj.insert(name.clone(), v);
        }
        out.push(Value::Object(obj));
    }
    serde_json::to_string(&out).expect("json")
}

/// One operation: its statements, in a transaction when it writes.
fn operation(conn: &Connection, s: &Scenario, n: u64) {
    if s.write {
        conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
    }
    for (sql, params) in &s.steps {
        let mut st = conn.prepare_cached(sql).expect("prepare");
        std::hint::black_box(rows_json(&mut st, &params(n)));
    }
    if s.write {
        conn.execute_batch("COMMIT").expect("commit");
    }
}

/// Operations done by one thread until `end`.
fn run(path: &str, s: &Scenario, first: u64, end: Instant) -> u64 {
    let conn = open(path);
    let mut done = 0_u64;
    let mut n = first;
    while Instant::now() < end {
        operation(&conn, s, n);
        n += 1;
        done += 1;
    }
    done
}

/// `rate` operations a second for `seconds`, each timed from when it was
/// due: "achieved p50 p99 p99.9 100.0 0".
fn run_at_rate(path: &str, s: &Scenario, first: u64, rate: f64, seconds: f64) -> String {
    let conn = open(path);
    let every = Duration::from_secs_f64(1.0 / rate);
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(seconds);
    let mut latencies = Vec::new();
    let mut due = start;
    let mut n = first;
    while due < end {
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        operation(&conn, s, n);
        latencies.push(due.elapsed());
        due += every;
        n += 1;
    }
    latencies.sort_unstable();
    let at = |q: f64| {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let i = ((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1));
        latencies.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    #[allow(clippy::cast_precision_loss)]
    let achieved = latencies.len() as f64 / start.elapsed().as_secs_f64();
    format!(
        "{achieved:.0} {:.2} {:.2} {:.2} 100.0 0",
        at(0.50),
        at(0.99),
        at(0.999)
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, seconds, name, rest @ ..] = args.as_slice() else {
        eprintln!("usage: sqlite-floor DB SECONDS SCENARIO [ARG] [THREADS]");
        std::process::exit(2);
    };
    let seconds: f64 = seconds.parse().expect("seconds");
    let (arg, threads) = match rest {
        [arg, threads] => (Some(arg.as_str()), threads.parse().ok()),
        [one] if name != "history" => (None, one.parse().ok()),
        [arg] => (Some(arg.as_str()), None),
        _ => (None, None),
    };
    let s = scenario(&open(path), name, arg);
    let threads: usize = if s.write {
        1
    } else {
        threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(2, std::num::NonZero::get)
        })
    };
    // Writes start from a clock-based number so repeated runs insert new rows.
    let base = u64::try_from(chrono::Utc::now().timestamp_micros()).unwrap_or(0) << 8;
    if let Some(rate) = std::env::var("SQLITE_FLOOR_RATE")
        .ok()
        .and_then(|r| r.parse::<f64>().ok())
        .filter(|r| *r > 0.0)
    {
        println!("{}", run_at_rate(path, &s, base, rate, seconds));
        return;
    }
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    let ops: u64 = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let s = &s;
                scope.spawn(move || run(path, s, base + t as u64 * 1_000_000_007, end))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("thread")).sum()
    });
    #[allow(clippy::cast_precision_loss)]
    let rate = ops as f64 / seconds;
    println!("{rate:.0}");
}
