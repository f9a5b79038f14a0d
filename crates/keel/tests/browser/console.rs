//! The operator console in Chromium, end to end: operators made with
//! `keel operator add` sign in with a password and a TOTP code; one finds
//! a user among 10,000 by a prefix of the email, bans them until tomorrow
//! (their next request is refused), lifts the ban, ends their sessions and
//! removes their lost second factor (they then sign in with the password
//! alone); a mail job that failed while the mail server refused is seen
//! with its error and retried once it answers; the health page shows Redis
//! away; an operator without the users role is refused there; the audit
//! log has every step. axe-core finds nothing serious on any page, at
//! desktop and phone width; screenshots are saved.

use std::time::Duration;

use keel_platform::totp;
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, add_operator, command};
use keel_testkit::{FakeSmtp, TcpProxy};
use serde_json::Value;

use crate::chromium::{Browser, Screen};
use crate::harness::KEEL;

/// An operator as `keel operator add` printed it.
struct Op {
    name: &'static str,
    password: String,
    secret: Vec<u8>,
}

impl Op {
    fn code(&self) -> String {
        let now = u64::try_from(chrono::Utc::now().timestamp()).unwrap();
        totp::code_at(&self.secret, now).unwrap()
    }
}

struct Keel {
    p: KeelProcess,
    smtp: FakeSmtp,
    redis: TcpProxy,
    env: Vec<(&'static str, String)>,
    _db: TestDb,
    dir: tempfile::TempDir,
}

impl Keel {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = TestDb::create(dir.path()).await;
        let smtp = FakeSmtp::start().await;
        let redis_addr = keel_testkit::redis_url()
            .trim_start_matches("redis://")
            .parse()
            .unwrap();
        let redis = TcpProxy::start(redis_addr).await;
        let mut env = keel_testkit::offline_env();
        env.extend([
            ("KEEL_DATA_DIR", dir.path().display().to_string()),
            ("DATABASE_URL", db.url.clone()),
            ("REDIS_URL", format!("redis://{}", redis.addr)),
            (
                "KEEL_REDIS_PREFIX",
                format!("keel-test:{}:", uuid::Uuid::new_v4().simple()),
            ),
            ("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()),
            ("KEEL_CONSOLE_ADDR", "127.0.0.1:0".to_owned()),
            ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
            ("KEEL_SMTP_URL", smtp.url()),
            ("KEEL_MAIL_FROM", "keel <no-reply@example.com>".to_owned()),
            ("KEEL_JOB_POLL_MS", "50".to_owned()),
            ("KEEL_JOB_RETRY_BASE_MS", "10".to_owned()),
        ]);
        let p = KeelProcess::serve(command(
            KEEL,
            dir.path(),
            &env,
            &["serve", "accounts", "console"],
        ))
        .await;
        Self {
            p,
            smtp,
            redis,
            env,
            _db: db,
            dir,
        }
    }

    fn console(&self) -> String {
        format!("{}/", self.p.url("console").trim_end_matches('/'))
    }

    fn accounts(&self, path: &str) -> String {
        format!("{}{path}", self.p.url("accounts"))
    }

    /// `keel operator add NAME --role ...`, as an operator of the machine runs it.
    async fn operator(&self, name: &'static str, roles: &[&str]) -> Op {
        let added = add_operator(KEEL, self.dir.path(), &self.env, name, roles).await;
        Op {
            name,
            password: added.password,
            secret: added.secret,
        }
    }
}

/// 10,000 users straight into the database (their passwords are never
/// used), so the search runs over a crowd.
async fn crowd(k: &Keel) {
    use keel_accounts::entity::user;
    use keel_platform::sea_orm::{EntityTrait, Set};
    let src = keel_platform::config::Source::from_pairs([
        ("KEEL_DATA_DIR", k.dir.path().display().to_string()),
        ("DATABASE_URL", k._db.url.clone()),
    ]);
    let platform = keel_platform::Platform::connect(
        keel_platform::config::PlatformConfig::from_source(&src).unwrap(),
    )
    .await
    .unwrap();
    let now = chrono::Utc::now();
    for chunk in (0..10_000).collect::<Vec<u32>>().chunks(500) {
        let rows = chunk.iter().map(|i| {
            let name = format!("member{i:05}");
            user::ActiveModel {
                id: Set(format!("{:024x}", 0x00c0_ffee_0000_u64 + u64::from(*i))),
                username: Set(name.clone()),
                username_key: Set(name.clone()),
                email: Set(format!("{name}@example.org")),
                email_key: Set(format!("{name}@example.org")),
                slug: Set(name),
                role: Set("user".to_owned()),
                password_hash: Set("not a hash".to_owned()),
                two_factor: Set(false),
                totp_secret: Set(None),
                totp_pending: Set(None),
                totp_last_step: Set(0),
                email_verified: Set(true),
                is_banned: Set(false),
                banned_until: Set(None),
                streamer_mode: Set(false),
                notify_weekly_goals: Set(false),
                weekly_mail_week: Set(None),
                revision: Set(0),
                created_at: Set(now),
                updated_at: Set(now),
            }
        });
        user::Entity::insert_many(rows)
            .exec_without_returning(platform.db.write())
            .await
            .unwrap();
    }
    platform.db.clone().close().await;
}

const PASSWORD: &str = "correct horse battery";

/// Zoe: registered through the API, with two-factor on. Her access token.
async fn zoe(k: &Keel) -> String {
    let http = reqwest::Client::new();
    let r: Value = http
        .post(k.accounts("/auth/register"))
        .form(&[
            ("username", "zoe"),
            ("email", "zoe.quinn@example.net"),
            ("password", PASSWORD),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = r["accessToken"].as_str().unwrap().to_owned();
    let r: Value = http
        .post(k.accounts("/account/two-factor"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let secret = totp::from_base32(r["twoFactorSecret"].as_str().unwrap()).unwrap();
    let now = u64::try_from(chrono::Utc::now().timestamp()).unwrap();
    let on = http
        .put(k.accounts("/account/two-factor"))
        .bearer_auth(&token)
        .form(&[("code", totp::code_at(&secret, now).unwrap())])
        .send()
        .await
        .unwrap();
    assert_eq!(on.status(), 200);
    token
}

async fn account_status(k: &Keel, token: &str) -> (u16, Value) {
    let r = reqwest::Client::new()
        .get(k.accounts("/account"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (
        status,
        r.json::<Value>().await.unwrap_or(Value::Null)["code"].clone(),
    )
}

async fn sign_in(b: &Browser, k: &Keel, op: &Op) {
    b.goto(&k.console()).await;
    b.wait_text("h1", "Sign in").await;
    b.fill("#name", op.name).await;
    b.fill("#password", &op.password).await;
    b.fill("#code", &op.code()).await;
    b.click("#sign-in button[type=submit]").await;
    b.wait_text("h1", "Health").await;
}

async fn clean(b: &Browser, page: &str) {
    let problems = b.accessibility_problems().await;
    assert!(problems.is_empty(), "{page}: {problems:#?}");
}

async fn reason(b: &Browser, form: &str, why: &str) {
    b.fill(&format!("#{form}-reason"), why).await;
    b.click(&format!("#{form} button[type=submit]")).await;
}

#[tokio::test]
async fn an_operator_finds_bans_lifts_ends_sessions_removes_a_factor_retries_a_job_and_sees_health()
{
    let k = Keel::start().await;
    // The mail server refuses every attempt of zoe's verification mail.
    k.smtp.fail_next(10);
    let ada = k.operator("ada", &["users", "jobs", "operators"]).await;
    let bo = k.operator("bo", &["jobs"]).await;
    crowd(&k).await;
    let token = zoe(&k).await;
    let b = Browser::on(Screen::Desktop(1280, 900)).await;

    sign_in(&b, &k, &ada).await;
    clean(&b, "health").await;
    b.screenshot("console-health").await;

    b.click("nav a[href='#/users']").await;
    b.wait_text("h1", "Users").await;
    b.fill("#q", "zoe.q").await;
    b.keys("\u{E007}").await;
    b.wait_text("[role=status]", "1 found").await;
    clean(&b, "users").await;
    b.screenshot("console-users-search").await;
    b.click("td a").await;
    b.wait_text("h1", "zoe").await;
    clean(&b, "user").await;
    b.screenshot("console-user").await;

    // Banned until tomorrow: her next request is refused.
    let tomorrow = (chrono::Local::now() + chrono::Duration::days(1)).format("%Y-%m-%dT%H:%M");
    b.js(&format!(
        "document.getElementById('ban-until').value = '{tomorrow}'; return true"
    ))
    .await;
    reason(&b, "ban", "abuse reported in ticket 4411").await;
    b.wait_text(".note", "Banned.").await;
    assert_eq!(
        account_status(&k, &token).await,
        (403, Value::from("ACCOUNT_BANNED"))
    );
    reason(&b, "unban", "appeal accepted").await;
    b.wait_text(".note", "Ban lifted.").await;
    assert_eq!(account_status(&k, &token).await.0, 200);
    reason(&b, "end-sessions", "stolen phone").await;
    b.wait_text(".note", "Sessions ended.").await;
    assert_eq!(account_status(&k, &token).await.0, 401);
    reason(&b, "remove-2fa", "lost phone; identity checked on a call").await;
    b.wait_text(".note", "Second factor removed.").await;
    let login = reqwest::Client::new()
        .post(k.accounts("/auth/login"))
        .form(&[("login", "zoe"), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 200, "the password alone lets her in");

    // The verification mail gave up while the server refused; it answers now.
    b.click("nav a[href='#/jobs']").await;
    b.wait_text("h1", "Jobs").await;
    b.wait_text("main", "451").await;
    clean(&b, "jobs").await;
    b.screenshot("console-jobs-failed").await;
    b.click("button[data-job]").await;
    b.wait_text("main", "No failed job.").await;
    let sent = keel_testkit::eventually(Duration::from_secs(30), || {
        k.smtp
            .messages()
            .iter()
            .any(|m| m.data.contains("zoe.quinn@example.net"))
            .then_some(())
    })
    .await;
    assert!(sent.is_some(), "the retried mail went out");

    // Redis away shows on the health page.
    k.redis.go_down();
    b.click("nav a[href='#/health']").await;
    b.wait_text("main", "degraded").await;
    b.screenshot("console-health-redis-away").await;
    k.redis.come_back();

    b.click("nav a[href='#/audit']").await;
    b.wait_text("h1", "Audit log").await;
    for action in [
        "accounts_user_banned",
        "accounts_user_unbanned",
        "accounts_sessions_ended",
        "accounts_two_factor_removed",
        "job_retried",
        "operator_signed_in",
    ] {
        b.wait_text("main", action).await;
    }
    clean(&b, "audit").await;
    b.screenshot("console-audit").await;

    // A new operator, added from the console: the secret is shown once.
    b.click("nav a[href='#/operators']").await;
    b.wait_text("h1", "Operators").await;
    b.fill("#new-operator", "cy").await;
    b.click("#new-jobs").await;
    b.click("#add-operator button[type=submit]").await;
    b.wait_text("#made", "not shown again").await;
    clean(&b, "operators").await;
    b.screenshot("console-operators").await;
    b.click("nav button").await;
    b.wait_text("h1", "Sign in").await;

    // bo has no users role: no Users in the navigation, refused there.
    sign_in(&b, &k, &bo).await;
    assert!(b.text("nav").await.find("Users").is_none());
    b.goto(&format!("{}#/users?q=zoe", k.console())).await;
    b.wait_text("main", "needs the users role").await;
    b.close().await;
}

#[tokio::test]
async fn at_phone_width_every_console_page_fits_and_axe_finds_nothing_serious() {
    let k = Keel::start().await;
    let ada = k.operator("ada", &["users", "jobs", "operators"]).await;
    zoe(&k).await;
    let b = Browser::on(Screen::Phone(390, 844)).await;
    sign_in(&b, &k, &ada).await;
    let fits = "return document.documentElement.scrollWidth <= window.innerWidth";
    for (page, title) in [
        ("#/health", "Health"),
        ("#/users?q=zoe", "Users"),
        ("#/jobs", "Jobs"),
        ("#/audit", "Audit log"),
        ("#/operators", "Operators"),
    ] {
        b.goto(&format!("{}{page}", k.console())).await;
        b.wait_text("h1", title).await;
        assert_eq!(b.js(fits).await, true, "{page} is wider than the phone");
        clean(&b, page).await;
        b.screenshot(&format!(
            "console-phone-{}",
            title.to_lowercase().replace(' ', "-")
        ))
        .await;
    }
    b.goto(&format!("{}#/users?q=zoe", k.console())).await;
    b.wait_text("[role=status]", "1 found").await;
    b.click("td a").await;
    b.wait_text("h1", "zoe").await;
    assert_eq!(
        b.js(fits).await,
        true,
        "the user's page is wider than the phone"
    );
    clean(&b, "user").await;
    b.screenshot("console-phone-user").await;
    b.close().await;
}

#[tokio::test]
async fn an_operator_signs_in_finds_a_user_and_ends_their_sessions_with_the_keyboard_alone() {
    use fantoccini::key::Key;
    let enter = char::from(Key::Enter).to_string();
    let k = Keel::start().await;
    let ada = k.operator("ada", &["users"]).await;
    let token = zoe(&k).await;
    let b = Browser::on(Screen::Desktop(1280, 900)).await;
    b.goto(&k.console()).await;
    b.wait_text("h1", "Sign in").await;
    b.tab_to("#name", false).await;
    b.keys(ada.name).await;
    b.tab_to("#password", false).await;
    b.keys(&ada.password).await;
    b.tab_to("#code", false).await;
    b.keys(&ada.code()).await;
    b.keys(&enter).await;
    b.wait_text("h1", "Health").await;

    b.tab_to("nav a[href='#/users']", true).await;
    b.keys(&enter).await;
    b.wait_text("h1", "Users").await;
    b.tab_to("#q", false).await;
    b.keys("zoe").await;
    b.keys(&enter).await;
    b.wait_text("[role=status]", "1 found").await;
    b.tab_to("td a", false).await;
    b.keys(&enter).await;
    b.wait_text("h1", "zoe").await;
    b.tab_to("#end-sessions-reason", false).await;
    b.keys("asked on the phone").await;
    b.keys(&enter).await;
    b.wait_text(".note", "Sessions ended.").await;
    assert_eq!(account_status(&k, &token).await.0, 401);
    b.close().await;
}
