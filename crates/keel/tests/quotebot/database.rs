//! The database contract at start-up: migration log lines, the guard
//! against a schema without history, the table-lock timeout, the
//! migration lock, baseline and seed.

use std::time::Duration;

use keel_platform::sea_orm::{ConnectionTrait, Database, TransactionTrait};

use crate::harness::Quotebot;

const TABLES: &str = "SELECT count(*) FROM information_schema.tables \
    WHERE table_schema = current_schema() \
    AND table_name IN ('Guild', 'MotivationQuote', 'SuggestionQuote', 'PlatformActivity')";

#[tokio::test]
async fn migrate_logs_its_start_and_end_and_creates_the_seed_tables() {
    let q = Quotebot::new().await;
    let (code, out) = q.run(&["migrate"]).await;
    assert_eq!(code, 0, "{out}");
    let running = out.find("Running database migrations...").expect(&out);
    let complete = out.find("Migrations complete.").expect(&out);
    assert!(running < complete, "{out}");
    assert_eq!(q.scalar(TABLES).await, 4);
    // The enums in their documented order.
    let order = q
        .scalar(
            "SELECT CASE WHEN enum_range(NULL::\"ActivityType\")::text = '{Custom,Listening,Streaming,Playing}' \
             AND enum_range(NULL::\"MotivationFrequency\")::text = '{Daily,Weekly,Monthly}' \
             AND enum_range(NULL::\"SuggestionStatus\")::text = '{Pending,Approved,Rejected}' \
             THEN 1 ELSE 0 END::bigint",
        )
        .await;
    assert_eq!(order, 1);
    let indexes = q
        .scalar(
            "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname IN \
             ('suggestion_status_idx', 'guild_motivation_channel_idx', 'Guild_guildId_key')",
        )
        .await;
    assert_eq!(indexes, 3);
    // Ids come from the database.
    q.exec(
        r#"INSERT INTO "MotivationQuote" ("quote", "author", "addedBy") VALUES ('q', 'a', '1')"#,
    )
    .await;
    let uuid = q
        .scalar(r#"SELECT count(*) FROM "MotivationQuote" WHERE "id"::text ~ '^[0-9a-f-]{36}$'"#)
        .await;
    assert_eq!(uuid, 1);
    // A second run has nothing to do.
    let (code, out) = q.run(&["migrate"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing to migrate"), "{out}");
}

#[tokio::test]
async fn tables_without_migration_history_abort_the_start_until_baselined() {
    let q = Quotebot::new().await;
    assert_eq!(q.run(&["migrate"]).await.0, 0);
    q.exec("DELETE FROM keel_migrations").await;
    for args in [&["migrate"][..], &[][..]] {
        let (code, out) = q.run(args).await;
        assert_ne!(code, 0, "{out}");
        assert!(
            out.contains(
                "Migration aborted: Existing schema without migration history: baseline required"
            ),
            "{out}"
        );
    }
    assert_eq!(q.discord.lookups(), 0, "the bot went on after the abort");
    let (code, out) = q.run(&["db", "baseline"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("recorded 0000 as applied"), "{out}");
    assert_eq!(
        q.scalar(
            "SELECT count(*) FROM keel_migrations WHERE component = 'quotebot' AND version = 0"
        )
        .await,
        1
    );
    let (code, out) = q.run(&["migrate"]).await;
    assert_eq!(code, 0, "{out}");
    // Once recorded, baseline has nothing to do.
    let (code, out) = q.run(&["db", "baseline"]).await;
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("already has quotebot migration history"),
        "{out}"
    );
}

#[tokio::test]
async fn baseline_refuses_a_schema_that_differs_and_lists_the_differences() {
    let q = Quotebot::new().await;
    assert_eq!(q.run(&["migrate"]).await.0, 0);
    q.exec("DELETE FROM keel_migrations").await;
    q.exec(r#"DROP INDEX suggestion_status_idx"#).await;
    q.exec(r#"ALTER TABLE "Guild" ALTER COLUMN "motivationTime" DROP NOT NULL"#)
        .await;
    q.exec(r#"ALTER TABLE "MotivationQuote" ADD COLUMN "extra" text"#)
        .await;
    let (code, out) = q.run(&["db", "baseline"]).await;
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("baseline refused"), "{out}");
    for needle in ["suggestion_status_idx", "motivationTime", "extra"] {
        assert!(out.contains(needle), "{needle} not listed: {out}");
    }
    assert_eq!(q.scalar("SELECT count(*) FROM keel_migrations").await, 0);
}

#[tokio::test]
async fn a_statement_that_cannot_lock_a_table_fails_with_55p03_and_rolls_back() {
    let mut q = Quotebot::new().await;
    q.set("KEEL_MIGRATION_TABLE_LOCK_TIMEOUT_SECS", "1");
    // An earlier keel installation made the history table; someone holds
    // it exclusively.
    q.exec(
        "CREATE TABLE keel_migrations (component varchar(64) NOT NULL, version bigint NOT NULL, \
         name varchar(200) NOT NULL, applied_at timestamptz NOT NULL, PRIMARY KEY (component, version))",
    )
    .await;
    let holder = Database::connect(&q.db.url).await.unwrap();
    let txn = holder.begin().await.unwrap();
    txn.execute_unprepared("LOCK TABLE keel_migrations IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let (code, out) = q.run(&["migrate"]).await;
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("55P03"), "{out}");
    assert!(started.elapsed() < Duration::from_secs(30), "{out}");
    txn.rollback().await.unwrap();
    assert_eq!(
        q.scalar(TABLES).await,
        0,
        "the migration was not rolled back"
    );
}

#[tokio::test]
async fn a_second_migrator_waits_naming_the_holder_then_gives_up() {
    let mut q = Quotebot::new().await;
    q.set("KEEL_MIGRATION_LOCK_WAIT_SECS", "2");
    let txn = q.db.hold_migration_lock().await;
    let pid = {
        let row = txn
            .query_one_raw(keel_platform::sea_orm::Statement::from_string(
                txn.get_database_backend(),
                "SELECT pg_backend_pid()::bigint",
            ))
            .await
            .unwrap()
            .unwrap();
        row.try_get_by_index::<i64>(0).unwrap()
    };
    let (code, out) = q.run(&["migrate"]).await;
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "Waiting for the migration lock held by backend pid {pid}..."
        )),
        "{out}"
    );
    txn.rollback().await.unwrap();
    assert_eq!(q.scalar(TABLES).await, 0);
    // Once the holder is gone, the next start migrates.
    assert_eq!(q.run(&["migrate"]).await.0, 0);
    assert_eq!(q.scalar(TABLES).await, 4);
}

#[tokio::test]
async fn seeding_needs_only_the_database_and_owner_and_is_safe_to_repeat() {
    let mut q = Quotebot::new().await;
    assert_eq!(q.run(&["migrate"]).await.0, 0);
    for var in ["REDIS_URL", "CHAT_APPLICATION_BOT_TOKEN", "MAIN_CHANNEL_ID"] {
        q.unset(var);
    }
    let (code, out) = q.run(&["db", "seed"]).await;
    assert_eq!(code, 0, "{out}");
    let n = q.scalar(r#"SELECT count(*) FROM "MotivationQuote""#).await;
    assert!(n >= 50, "{n} starter quotes");
    let authors = q
        .scalar(r#"SELECT count(*) FROM "MotivationQuote" WHERE "author" = '' OR "addedBy" <> '4000000000000000001'"#)
        .await;
    assert_eq!(authors, 0);
    let (code, out) = q.run(&["db", "seed"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("seeded 0 quotes"), "{out}");
    assert_eq!(
        q.scalar(r#"SELECT count(*) FROM "MotivationQuote""#).await,
        n
    );
    // Not seeded automatically: a fresh database has no quotes.
    let fresh = Quotebot::new().await;
    assert_eq!(fresh.run(&["migrate"]).await.0, 0);
    assert_eq!(
        fresh
            .scalar(r#"SELECT count(*) FROM "MotivationQuote""#)
            .await,
        0
    );
}
