//! The platform alone (no services) on a fresh database, for tests of the
//! shared machinery: jobs, mail, migrations, cache.

use keel_platform::Platform;
use keel_platform::config::{PlatformConfig, Source};
use tempfile::TempDir;

use crate::db::TestDb;

pub struct TestPlatform {
    pub platform: Platform,
    pub source: Source,
    // Dropped after the platform: the database outlives its pool.
    pub db: TestDb,
    pub data_dir: TempDir,
}

impl TestPlatform {
    /// A migrated platform; `env` overrides the test defaults.
    pub async fn start(env: &[(&str, &str)]) -> Self {
        let (source, db, data_dir) = Self::prepare(env).await;
        let platform = Platform::connect(PlatformConfig::from_source(&source).expect("config"))
            .await
            .expect("connect the platform");
        platform.migrate(&[]).await.expect("migrate");
        Self {
            platform,
            source,
            db,
            data_dir,
        }
    }

    /// A source for a fresh database and data directory, not yet connected.
    pub async fn prepare(env: &[(&str, &str)]) -> (Source, TestDb, TempDir) {
        crate::init();
        let data_dir = tempfile::tempdir().expect("temporary data directory");
        let db = TestDb::create(data_dir.path()).await;
        let mut source = Source::from_pairs([
            ("KEEL_DATA_DIR", data_dir.path().display().to_string()),
            ("DATABASE_URL", db.url.clone()),
            ("KEEL_JOB_POLL_MS", "50".to_owned()),
            ("KEEL_JOB_RETRY_BASE_MS", "50".to_owned()),
        ]);
        for (k, v) in env {
            source.set(*k, *v);
        }
        (source, db, data_dir)
    }

    /// Another platform on the same database (another "process").
    pub async fn another(&self) -> Platform {
        Platform::connect(PlatformConfig::from_source(&self.source).expect("config"))
            .await
            .expect("connect the platform")
    }

    pub fn config(&self) -> &PlatformConfig {
        &self.platform.config
    }
}
