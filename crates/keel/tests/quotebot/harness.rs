//! A quotebot under test: a fresh PostgreSQL schema, the shared Redis,
//! a fake Discord, and every timing knob shortened.

use std::time::Duration;

use keel_platform::sea_orm::{ConnectionTrait, Database, DatabaseConnection, Statement};
use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use keel_testkit::{FakeDiscordBot, eventually};

pub const KEEL: &str = env!("CARGO_BIN_EXE_keel");
pub const TOKEN: &str = "MTIz.fake-bot-token.for-tests";
pub const OWNER: u64 = 4_000_000_000_000_000_001;
pub const MAIN_CHANNEL: u64 = 4_000_000_000_000_000_002;

pub struct Quotebot {
    pub db: TestDb,
    pub discord: FakeDiscordBot,
    pub dir: tempfile::TempDir,
    pub env: Vec<(&'static str, String)>,
}

/// A random snowflake-sized id (guilds, users, channels), so tests sharing
/// Redis never share keys.
pub fn id() -> u64 {
    let n = u64::from_le_bytes(uuid::Uuid::new_v4().as_bytes()[..8].try_into().unwrap());
    (1u64 << 60) | (n >> 4)
}

impl Quotebot {
    pub async fn new() -> Self {
        let db = TestDb::postgres().await;
        let discord = FakeDiscordBot::start(TOKEN).await;
        let dir = tempfile::tempdir().unwrap();
        let env = vec![
            ("DATABASE_URL", db.url.clone()),
            ("REDIS_URL", keel_testkit::redis_url()),
            ("CHAT_APPLICATION_BOT_TOKEN", TOKEN.to_owned()),
            ("OWNER_ID", OWNER.to_string()),
            ("MAIN_CHANNEL_ID", MAIN_CHANNEL.to_string()),
            ("PORT", "0".to_owned()),
            ("HOST", "127.0.0.1".to_owned()),
            ("KEEL_DISCORD_API_URL", discord.api_url()),
            ("KEEL_QUOTEBOT_SPAWN_DELAY_MS", "50".to_owned()),
            ("KEEL_QUOTEBOT_READY_TIMEOUT_MS", "20000".to_owned()),
            ("KEEL_QUOTEBOT_FATAL_WAIT_MS", "300".to_owned()),
            ("KEEL_QUOTEBOT_SHARD_WATCHDOG_MS", "2000".to_owned()),
            ("KEEL_QUOTEBOT_KILL_TIMEOUT_MS", "2500".to_owned()),
            ("KEEL_QUOTEBOT_PARENT_WATCHDOG_MS", "4000".to_owned()),
            ("KEEL_QUOTEBOT_LOOKUP_BACKOFF_MS", "50".to_owned()),
            ("KEEL_QUOTEBOT_SCHEDULE_EVERY_MS", "200".to_owned()),
            ("KEEL_QUOTEBOT_PRESENCE_EVERY_MS", "300".to_owned()),
        ];
        Self {
            db,
            discord,
            dir,
            env,
        }
    }

    pub fn set(&mut self, key: &'static str, value: impl Into<String>) {
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.into()));
    }

    pub fn unset(&mut self, key: &'static str) {
        self.env.retain(|(k, _)| *k != key);
    }

    pub fn spawn(&self, args: &[&str]) -> KeelProcess {
        let mut a = vec!["quotebot"];
        a.extend_from_slice(args);
        KeelProcess::spawn(command(KEEL, self.dir.path(), &self.env, &a))
    }

    /// Runs `keel quotebot <args>` to its end: (exit code, stdout + stderr).
    pub async fn run(&self, args: &[&str]) -> (i32, String) {
        let mut p = self.spawn(args);
        let status = p.wait(Duration::from_secs(60)).await;
        (
            status.code().unwrap_or(-1),
            format!("{}{}", p.stdout(), p.stderr()),
        )
    }

    /// Starts the bot and waits for its health line and `shards` ready
    /// sessions at the fake gateway.
    pub async fn start(&self, shards: usize) -> Running {
        let p = self.spawn(&[]);
        let health = eventually(Duration::from_secs(60), || {
            p.stdout()
                .lines()
                .find_map(|l| l.strip_prefix("health"))
                .map(|u| u.trim().to_owned())
        })
        .await
        .unwrap_or_else(|| panic!("no health line; stderr:\n{}", p.stderr()));
        let discord = self.discord.clone();
        eventually(Duration::from_secs(60), || {
            (discord.sessions().len() >= shards).then_some(())
        })
        .await
        .unwrap_or_else(|| panic!("shards not ready; stderr:\n{}", p.stderr()));
        Running { p, health }
    }

    pub async fn sql(&self) -> DatabaseConnection {
        Database::connect(&self.db.url).await.unwrap()
    }

    pub async fn scalar(&self, sql: &str) -> i64 {
        let conn = self.sql().await;
        let row = conn
            .query_one_raw(Statement::from_string(conn.get_database_backend(), sql))
            .await
            .unwrap()
            .unwrap();
        row.try_get_by_index::<i64>(0).unwrap()
    }

    pub async fn exec(&self, sql: &str) {
        self.sql().await.execute_unprepared(sql).await.unwrap();
    }
}

pub struct Running {
    pub p: KeelProcess,
    pub health: String,
}

impl Running {
    /// SIGTERM, and waits for a clean exit.
    pub async fn stop(mut self) {
        self.p.signal(nix::sys::signal::Signal::SIGTERM);
        let status = self.p.wait(Duration::from_secs(30)).await;
        assert!(status.success(), "{}", self.output());
    }

    pub fn output(&self) -> String {
        format!("{}{}", self.p.stdout(), self.p.stderr())
    }

    /// The shard processes (children of the manager).
    pub fn shard_pids(&self) -> Vec<i32> {
        children(self.p.pid())
    }
}

/// The child processes of `pid`.
pub fn children(pid: i32) -> Vec<i32> {
    // A child is listed under the thread that spawned it.
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|s| s.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}
