//! SQLite's write-ahead log reaches the database file through the
//! background checkpointer, not through a checkpoint inside a write: the
//! writer checkpoints only past 8,192 pages of log, and with the task
//! running, what was written is in the database file soon after.

use std::time::Duration;

use keel_platform::sea_orm::{ConnectionTrait, DbBackend, Statement};
use keel_testkit::TestPlatform;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn the_log_is_copied_into_the_database_file_off_the_write_path() {
    let p = TestPlatform::start(&[]).await;
    let db = &p.platform.db;
    if db.is_postgres() {
        println!("PostgreSQL has no write-ahead log of keel's to checkpoint");
        return;
    }
    let sql = |s: &str| Statement::from_string(DbBackend::Sqlite, s.to_owned());
    let row = db
        .write()
        .query_one_raw(sql("PRAGMA wal_autocheckpoint"))
        .await
        .unwrap()
        .unwrap();
    let pages: i64 = row.try_get_by_index(0).unwrap();
    assert_eq!(pages, 8192, "the writer leaves checkpoints to the task");

    let file = p.platform.config.data_dir.join("keel.db");
    let before = std::fs::metadata(&file).unwrap().len();
    db.write()
        .execute_raw(sql(
            "CREATE TABLE filler (id INTEGER PRIMARY KEY, pad BLOB)",
        ))
        .await
        .unwrap();
    // About 2 MB, in 500 commits: under 1,000 pages of log, so SQLite's
    // default would not have checkpointed either.
    for _ in 0..500 {
        db.write()
            .execute_raw(sql("INSERT INTO filler (pad) VALUES (zeroblob(4000))"))
            .await
            .unwrap();
    }
    assert!(
        std::fs::metadata(&file).unwrap().len() < before + 1_000_000,
        "nothing checkpointed yet"
    );
    let stop = CancellationToken::new();
    let task = tokio::spawn(db.clone().checkpoint_until(stop.clone()));
    let copied = keel_testkit::eventually(Duration::from_secs(10), || {
        let len = std::fs::metadata(&file).ok()?.len();
        (len > before + 1_900_000).then_some(len)
    })
    .await;
    stop.cancel();
    task.await.unwrap();
    assert!(
        copied.is_some(),
        "the database file never grew past {before}"
    );
}
