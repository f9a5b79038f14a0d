//! A fresh database per test: a temporary SQLite file by default; with
//! `KEEL_TEST_DATABASE_URL=postgres://...`, a fresh schema in that database,
//! dropped when the test ends.

use std::path::Path;

use keel_platform::sea_orm::{ConnectionTrait, Database};

pub const TEST_DATABASE_VAR: &str = "KEEL_TEST_DATABASE_URL";

/// The database a test runs against.
pub struct TestDb {
    /// The `DATABASE_URL` the app is given.
    pub url: String,
    postgres: Option<PgSchema>,
}

struct PgSchema {
    admin_url: String,
    schema: String,
}

/// Whether this run targets PostgreSQL.
pub fn postgres_url() -> Option<String> {
    std::env::var(TEST_DATABASE_VAR)
        .ok()
        .filter(|u| u.starts_with("postgres"))
}

/// PostgreSQL for what runs only on PostgreSQL (quotebot): the run's
/// database, else `KEEL_TEST_PG_URL`, else the local server.
pub fn postgres_always_url() -> String {
    postgres_url()
        .or_else(|| std::env::var("KEEL_TEST_PG_URL").ok())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable".to_owned())
}

impl TestDb {
    pub async fn create(data_dir: &Path) -> Self {
        crate::init();
        match postgres_url() {
            None => Self {
                url: format!("sqlite://{}", data_dir.join("keel.db").display()),
                postgres: None,
            },
            Some(admin_url) => Self::schema_in(admin_url).await,
        }
    }

    /// A fresh schema on PostgreSQL whatever this run's database is.
    pub async fn postgres() -> Self {
        crate::init();
        Self::schema_in(postgres_always_url()).await
    }

    /// The URL of the database holding the schema, without the schema
    /// (for a second, administrative connection in a test).
    pub fn admin_url(&self) -> Option<&str> {
        self.postgres.as_ref().map(|p| p.admin_url.as_str())
    }

    /// The schema's name, on PostgreSQL.
    pub fn schema(&self) -> Option<&str> {
        self.postgres.as_ref().map(|p| p.schema.as_str())
    }

    /// Takes the schema's migration lock (PostgreSQL's advisory lock, as
    /// keel's migrator takes it) on a connection of its own; held until the
    /// returned transaction is dropped or ended.
    pub async fn hold_migration_lock(&self) -> keel_platform::sea_orm::DatabaseTransaction {
        use keel_platform::sea_orm::TransactionTrait;
        let schema = self.schema().expect("the migration lock is PostgreSQL's");
        let key = keel_platform::migrate::advisory_lock_key(schema);
        let holder = Database::connect(&self.url)
            .await
            .expect("connect to the test PostgreSQL");
        let txn = holder.begin().await.expect("begin");
        txn.execute_unprepared(&format!("SELECT pg_advisory_xact_lock({key})"))
            .await
            .expect("take the migration lock");
        txn
    }

    async fn schema_in(admin_url: String) -> Self {
        let schema = format!("t_{}", uuid::Uuid::new_v4().simple());
        let admin = Database::connect(&admin_url)
            .await
            .expect("connect to the test PostgreSQL");
        admin
            .execute_unprepared(&format!("CREATE SCHEMA {schema}"))
            .await
            .expect("create a test schema");
        let _ = admin.close().await;
        Self {
            url: with_search_path(&admin_url, &schema),
            postgres: Some(PgSchema { admin_url, schema }),
        }
    }

    pub fn is_postgres(&self) -> bool {
        self.postgres.is_some()
    }
}

/// The app's URL: the schema first on its search path, and the schema as
/// its connections' application name (so the drop can find them; the
/// short-read connections are named after it with " short reads").
fn with_search_path(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}&application_name={schema}")
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Some(pg) = self.postgres.take() else {
            return;
        };
        // Drop runs outside any runtime we may block: use a thread of our own.
        let joined = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if let Ok(admin) = Database::connect(&pg.admin_url).await {
                    // The app's connections may sit in a transaction this
                    // thread's caller will never finish (its runtime is the
                    // one blocked here): end them, or the drop waits forever.
                    let end = format!(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                         WHERE application_name IN ('{0}', '{0} short reads') \
                         AND pid <> pg_backend_pid()",
                        pg.schema
                    );
                    if let Err(e) = admin.execute_unprepared(&end).await {
                        eprintln!("testkit: could not end the test's connections: {e}");
                    }
                    let sql = format!("DROP SCHEMA IF EXISTS {} CASCADE", pg.schema);
                    if let Err(e) = admin.execute_unprepared(&sql).await {
                        eprintln!("testkit: could not drop schema {}: {e}", pg.schema);
                    }
                    let _ = admin.close().await;
                }
            });
        })
        .join();
        if joined.is_err() {
            eprintln!("testkit: dropping the test schema panicked");
        }
    }
}

/// A database of its own on the test PostgreSQL server (a release's dump
/// is loaded into one, its schema `public`); drop it with
/// [`PgDatabase::drop_it`].
pub struct PgDatabase {
    /// Its `DATABASE_URL`.
    pub url: String,
    server: String,
    name: String,
}

impl PgDatabase {
    /// Creates database `name` on the server `base` (a `postgres://` URL) names.
    pub async fn create(base: &str, name: &str) -> Self {
        let conn = Database::connect(base)
            .await
            .expect("connect to PostgreSQL");
        conn.execute_unprepared(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create a database");
        let (server, query) = base.split_once('?').unwrap_or((base, ""));
        let server = server
            .rsplit_once('/')
            .map_or(server, |(s, _)| s)
            .to_owned();
        let query = if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        };
        Self {
            url: format!("{server}/{name}{query}"),
            server: base.to_owned(),
            name: name.to_owned(),
        }
    }

    pub async fn drop_it(self) {
        let conn = Database::connect(&self.server)
            .await
            .expect("connect to PostgreSQL");
        conn.execute_unprepared(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ))
        .await
        .expect("drop the database");
    }
}
