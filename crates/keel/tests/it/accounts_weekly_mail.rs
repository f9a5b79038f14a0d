//! The weekly goals mail is sent exactly once per user per week, however
//! many nodes run it and even when a node is killed in the middle of a run.

use std::collections::HashMap;
use std::time::Duration;

use chrono::Utc;
use keel_accounts::entity::user;
use keel_platform::sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, Set};
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use nix::sys::signal::Signal;

use crate::KEEL;
use crate::process::platform_on;

const USERS: usize = 3000;

fn env_for(db: &TestDb, dir: &std::path::Path) -> Vec<(&'static str, String)> {
    vec![
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()),
        (
            "KEEL_ACCOUNTS_JWT_SECRET",
            "weekly-mail-test-secret-0123456789abcdef".to_owned(),
        ),
        (
            "KEEL_SECRET_KEY",
            "d2Vla2x5LW1haWwtdGVzdC1zZWNyZXQta2V5LTMyYiE=".to_owned(),
        ),
        // A run every second: each is the same week, so only the first mails.
        ("KEEL_ACCOUNTS_WEEKLY_MAIL_CRON", "* * * * * *".to_owned()),
        (
            "KEEL_ACCOUNTS_PUBLIC_URL",
            "https://accounts.example".to_owned(),
        ),
        ("KEEL_JOB_POLL_MS", "50".to_owned()),
        ("KEEL_JOB_RETRY_BASE_MS", "100".to_owned()),
        // Claims of the killed process expire quickly.
        ("KEEL_JOB_LEASE_SECS", "2".to_owned()),
    ]
}

fn subscriber(i: usize) -> user::ActiveModel {
    let now = Utc::now();
    user::ActiveModel {
        id: Set(format!("{i:024x}")),
        username: Set(format!("u{i}")),
        username_key: Set(format!("u{i}")),
        email: Set(format!("u{i}@example.com")),
        email_key: Set(format!("u{i}@example.com")),
        slug: Set(format!("u{i}")),
        role: Set("user".to_owned()),
        password_hash: Set("not a hash: nobody signs in".to_owned()),
        two_factor: Set(false),
        totp_secret: Set(None),
        totp_pending: Set(None),
        totp_last_step: Set(0),
        email_verified: Set(true),
        is_banned: Set(false),
        banned_until: Set(None),
        streamer_mode: Set(false),
        // Every tenth opted out.
        notify_weekly_goals: Set(!i.is_multiple_of(10)),
        weekly_mail_week: Set(None),
        revision: Set(0),
        created_at: Set(now),
        updated_at: Set(now),
    }
}

/// Weekly goals mails delivered, per recipient.
fn delivered(dir: &std::path::Path) -> HashMap<String, usize> {
    let mut per = HashMap::new();
    for m in keel_testkit::mail_files(&dir.join("mail")) {
        if m.subject.starts_with("Your week") {
            *per.entry(m.to).or_default() += 1;
        }
    }
    per
}

fn serve(dir: &std::path::Path, env: &[(&str, String)]) -> tokio::process::Command {
    command(KEEL, dir, env, &["serve", "accounts"])
}

#[tokio::test]
async fn each_subscriber_gets_one_mail_a_week_across_nodes_and_a_sigkill_mid_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let env = env_for(&db, dir.path());
    let mut migrate = KeelProcess::spawn(command(KEEL, dir.path(), &env, &["migrate"]));
    assert!(migrate.wait(Duration::from_secs(60)).await.success());
    let platform = platform_on(&db, dir.path()).await;
    let users: Vec<_> = (1..=USERS).map(subscriber).collect();
    for chunk in users.chunks(500) {
        user::Entity::insert_many(chunk.to_vec())
            .exec(platform.db.write())
            .await
            .unwrap();
    }
    let subscribers = (1..=USERS).filter(|i| !i.is_multiple_of(10)).count();

    let mut first = KeelProcess::serve(serve(dir.path(), &env)).await;
    let started = keel_testkit::eventually(Duration::from_secs(30), || {
        let n: usize = delivered(dir.path()).values().sum();
        (n > 0).then_some(n)
    })
    .await;
    assert!(started.is_some(), "no mail; stderr:\n{}", first.stderr());
    first.signal(Signal::SIGKILL);
    first.wait(Duration::from_secs(10)).await;
    let marked = user::Entity::find()
        .filter(user::Column::WeeklyMailWeek.is_not_null())
        .count(platform.db.read())
        .await
        .unwrap();
    println!("killed with {marked} of {subscribers} subscribers marked");
    assert!(
        usize::try_from(marked).unwrap() < subscribers,
        "the kill came mid-run"
    );

    // Two nodes on PostgreSQL (SQLite is one node's database: one again).
    let second = KeelProcess::serve(serve(dir.path(), &env)).await;
    let third = if platform.db.is_postgres() {
        Some(KeelProcess::serve(serve(dir.path(), &env)).await)
    } else {
        None
    };
    let all = keel_testkit::eventually(Duration::from_secs(120), || {
        let d = delivered(dir.path());
        (d.len() == subscribers).then_some(d)
    })
    .await;
    if all.is_none() {
        panic!(
            "{} of {subscribers} mailed; stderr:\n{}",
            delivered(dir.path()).len(),
            second.stderr()
        );
    }
    // Let more runs of the week go by: they must mail nobody.
    let ticks = || async {
        use keel_platform::sea_orm::{ConnectionTrait, Statement};
        let conn = platform.db.read();
        let row = conn
            .query_one_raw(Statement::from_string(
                conn.get_database_backend(),
                "SELECT COUNT(*) AS n FROM keel_cron_ticks WHERE name = 'accounts.weekly_mail'",
            ))
            .await
            .unwrap()
            .unwrap();
        row.try_get::<i64>("", "n").unwrap()
    };
    let seen = ticks().await;
    let later = keel_testkit::eventually_async(Duration::from_secs(10), || async {
        (ticks().await >= seen + 2
            && keel_platform::jobs::queued(&platform.db).await.unwrap_or(1) == 0)
            .then_some(())
    })
    .await;
    assert!(
        later.is_some(),
        "the schedule kept ticking and the queue drained"
    );
    let per = delivered(dir.path());
    assert_eq!(per.len(), subscribers, "every subscriber, no one else");
    let twice: Vec<_> = per.iter().filter(|(_, n)| **n != 1).take(5).collect();
    assert!(twice.is_empty(), "mailed more than once: {twice:?}");
    assert!(
        per.keys().all(|to| {
            let i: usize = to
                .trim_start_matches('u')
                .trim_end_matches("@example.com")
                .parse()
                .unwrap();
            !i.is_multiple_of(10)
        }),
        "an opted-out user was mailed"
    );
    drop((second, third));
}
