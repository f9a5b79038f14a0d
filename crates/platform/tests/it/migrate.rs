use std::time::Duration;

use keel_platform::config::MigrationConfig;
use keel_platform::migrate::{self, MigrateError, Migration, MigrationSet, build_all};
use keel_platform::sea_orm::sea_query::{ColumnDef, Table};
use keel_platform::sea_orm::{ConnectionTrait, DbBackend, Statement, TransactionTrait};
use keel_testkit::TestPlatform;

fn create(name: &'static str) -> keel_platform::sea_orm::sea_query::TableCreateStatement {
    Table::create()
        .table(name)
        .col(ColumnDef::new("id").integer().not_null().primary_key())
        .to_owned()
}

fn half_then_broken(b: DbBackend) -> Vec<Statement> {
    vec![
        Statement::from_string(b, "CREATE TABLE t_c (id INTEGER)"),
        Statement::from_string(b, "THIS IS NOT SQL"),
    ]
}

static GOOD: MigrationSet = MigrationSet {
    component: "test",
    migrations: &[
        Migration {
            version: 0,
            name: "a",
            up: |b| build_all(b, &[&create("t_a")]),
        },
        Migration {
            version: 1,
            name: "b",
            up: |b| build_all(b, &[&create("t_b")]),
        },
    ],
    tables: keel_platform::migrate::no_tables,
};

static GOOD_THEN_BAD: MigrationSet = MigrationSet {
    component: "test",
    migrations: &[
        Migration {
            version: 0,
            name: "a",
            up: |b| build_all(b, &[&create("t_a")]),
        },
        Migration {
            version: 1,
            name: "broken",
            up: half_then_broken,
        },
        Migration {
            version: 2,
            name: "never",
            up: |b| build_all(b, &[&create("t_x")]),
        },
    ],
    tables: keel_platform::migrate::no_tables,
};

fn cfg(wait: Duration) -> MigrationConfig {
    MigrationConfig {
        skip: false,
        lock_wait: wait,
        table_lock_timeout: Duration::from_secs(60),
    }
}

async fn exists(tp: &TestPlatform, table: &str) -> bool {
    tp.platform
        .db
        .read()
        .execute_unprepared(&format!("SELECT 1 FROM {table}"))
        .await
        .is_ok()
}

#[tokio::test]
async fn migrations_apply_in_order_are_recorded_and_apply_only_once() {
    let tp = TestPlatform::start(&[]).await;
    let applied = migrate::run(&tp.platform.db, &cfg(Duration::from_secs(5)), &[&GOOD])
        .await
        .unwrap();
    let versions: Vec<_> = applied
        .iter()
        .map(|a| (a.component.as_str(), a.version))
        .collect();
    assert_eq!(versions, [("test", 0), ("test", 1)]);
    assert!(exists(&tp, "t_a").await && exists(&tp, "t_b").await);
    let again = migrate::run(&tp.platform.db, &cfg(Duration::from_secs(5)), &[&GOOD])
        .await
        .unwrap();
    assert!(again.is_empty());
    let rows = tp
        .platform
        .db
        .read()
        .query_all_raw(Statement::from_string(
            tp.platform.db.backend(),
            "SELECT version FROM keel_migrations WHERE component = 'test' ORDER BY version",
        ))
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
}

#[tokio::test]
async fn a_failed_migration_rolls_back_whole_and_keeps_the_ones_before_it() {
    let tp = TestPlatform::start(&[]).await;
    let err = migrate::run(
        &tp.platform.db,
        &cfg(Duration::from_secs(5)),
        &[&GOOD_THEN_BAD],
    )
    .await
    .unwrap_err();
    match &err {
        MigrateError::Failed {
            component,
            version,
            name,
            ..
        } => {
            assert_eq!((*component, *version, *name), ("test", 1, "broken"));
        }
        other => panic!("unexpected {other}"),
    }
    assert!(err.to_string().contains("test 0001 (broken)"), "{err}");
    assert!(exists(&tp, "t_a").await, "the migration before it stays");
    assert!(
        !exists(&tp, "t_c").await,
        "nothing of the failed migration remains"
    );
    assert!(!exists(&tp, "t_x").await, "nothing after it runs");
}

#[tokio::test]
async fn two_migrators_at_once_apply_each_migration_exactly_once() {
    let tp = TestPlatform::start(&[]).await;
    let other = tp.another().await;
    let c = cfg(Duration::from_secs(30));
    let sets: &[&MigrationSet] = &[&GOOD];
    let (a, b) = tokio::join!(
        migrate::run(&tp.platform.db, &c, sets),
        migrate::run(&other.db, &c, sets),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.len() + b.len(), 2, "{a:?} {b:?}");
    assert!(
        a.is_empty() || b.is_empty(),
        "one migrator did all the work"
    );
}

#[tokio::test]
async fn a_migrator_waits_for_the_lock_and_gives_up_after_the_bound() {
    let tp = TestPlatform::start(&[("KEEL_SQLITE_BUSY_TIMEOUT_MS", "100")]).await;
    let holder = tp.another().await;
    let txn = holder.db.write().begin().await.unwrap();
    if holder.db.is_postgres() {
        let schema: String = txn
            .query_one_raw(Statement::from_string(
                DbBackend::Postgres,
                "SELECT current_schema() AS s",
            ))
            .await
            .unwrap()
            .unwrap()
            .try_get("", "s")
            .unwrap();
        let key = migrate::advisory_lock_key(&schema);
        txn.execute_unprepared(&format!("SELECT pg_advisory_xact_lock({key})"))
            .await
            .unwrap();
    } else {
        // Hold SQLite's write lock, as a migrator in another process would.
        txn.execute_unprepared("CREATE TABLE lock_holder (id INTEGER)")
            .await
            .unwrap();
    }
    let started = std::time::Instant::now();
    let err = migrate::run(&tp.platform.db, &cfg(Duration::from_millis(800)), &[&GOOD])
        .await
        .unwrap_err();
    assert!(matches!(err, MigrateError::LockTimeout(_)), "{err}");
    assert!(started.elapsed() >= Duration::from_millis(800));
    assert!(!exists(&tp, "t_a").await);

    txn.rollback().await.unwrap();
    let applied = migrate::run(&tp.platform.db, &cfg(Duration::from_secs(5)), &[&GOOD])
        .await
        .unwrap();
    assert_eq!(applied.len(), 2);
}
