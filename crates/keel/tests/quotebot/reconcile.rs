//! `db reconcile` on real legacy shapes: enums and timestamps stored as
//! text, text ids, snake_case and missing columns, a missing table.

use crate::harness::Quotebot;

const LEGACY: &str = r#"
CREATE TABLE "Guild" (
    "id" text PRIMARY KEY,
    "guildId" text NOT NULL,
    "motivationChannelId" text,
    "motivationFrequency" text NOT NULL DEFAULT 'DAILY',
    "motivationTime" text,
    "lastMotivationSentAt" text,
    "joinedAt" text,
    "legacyFlag" boolean
);
INSERT INTO "Guild" VALUES
    ('clx1', '111', '222', 'weekly', '08:00', '2024-03-01T09:30:00Z', '2024-01-01 00:00:00', true),
    ('clx2', '333', NULL, 'DAILY', '09:00', NULL, '1704067200000', NULL);
CREATE TABLE "MotivationQuote" (
    "id" text PRIMARY KEY,
    "quote" text NOT NULL,
    "author" text NOT NULL,
    "added_by" text NOT NULL,
    "createdAt" text
);
INSERT INTO "MotivationQuote" VALUES
    ('6f9619ff-8b86-d011-b42d-00c04fc964ff', 'Know thyself.', 'Socrates', '42', '2023-05-05 05:05:05.5'),
    ('cm-2', 'Carpe diem.', 'Horace', '42', NULL);
CREATE TABLE "SuggestionQuote" (
    "id" serial PRIMARY KEY,
    "quote" text,
    "author" text,
    "addedBy" text,
    "status" text,
    "reviewedAt" text
);
INSERT INTO "SuggestionQuote" ("quote", "author", "addedBy", "status", "reviewedAt")
    VALUES ('Festina lente.', 'Augustus', '7', 'APPROVED', '2024-02-02 10:00');
"#;

async fn legacy() -> Quotebot {
    let q = Quotebot::new().await;
    q.exec(LEGACY).await;
    q
}

async fn guild_id_type(q: &Quotebot) -> i64 {
    q.scalar(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() \
         AND table_name = 'Guild' AND column_name = 'id' AND data_type = 'uuid'",
    )
    .await
}

#[tokio::test]
async fn without_confirm_it_prints_a_checklist_and_changes_nothing() {
    let q = legacy().await;
    let (code, out) = q.run(&["db", "reconcile"]).await;
    assert_eq!(code, 0, "{out}");
    for needle in [
        "Guild: 2 rows",
        "MotivationQuote: 2 rows",
        "SuggestionQuote: 1 rows",
        "PlatformActivity: missing; will be created empty",
        r#""motivationFrequency" (text) -> "motivationFrequency" ("MotivationFrequency")"#,
        r#""added_by" (text) -> "addedBy" (text)"#,
        r#""legacyFlag" (boolean): not in the current shape; dropped"#,
        r#""isPremium": missing; filled with its default"#,
        "take a backup",
        "stop the bot",
        "keel quotebot db reconcile --confirm",
        "Nothing was changed.",
    ] {
        assert!(out.contains(needle), "{needle:?} not in:\n{out}");
    }
    assert_eq!(guild_id_type(&q).await, 0, "the schema changed");
    assert_eq!(q.scalar(r#"SELECT count(*) FROM "Guild""#).await, 2);
}

#[tokio::test]
async fn with_confirm_it_rebuilds_every_table_keeping_every_row() {
    let q = legacy().await;
    let (code, out) = q.run(&["db", "reconcile", "--confirm"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "rows kept: Guild 2, MotivationQuote 2, SuggestionQuote 1, PlatformActivity 0"
        ),
        "{out}"
    );
    assert_eq!(guild_id_type(&q).await, 1);
    let converted = q
        .scalar(
            r#"SELECT count(*) FROM "Guild" WHERE "guildId" = '111' AND "motivationFrequency" = 'Weekly'
               AND "lastMotivationSentAt" = '2024-03-01 09:30:00' AND "joinedAt" = '2024-01-01 00:00:00'
               AND "isPremium" = false AND "timezone" = 'UTC' AND "motivationTime" = '08:00'"#,
        )
        .await;
    assert_eq!(converted, 1);
    let epoch = q
        .scalar(r#"SELECT count(*) FROM "Guild" WHERE "guildId" = '333' AND "joinedAt" = '2024-01-01 00:00:00' AND "motivationFrequency" = 'Daily'"#)
        .await;
    assert_eq!(epoch, 1);
    let kept_uuid = q
        .scalar(r#"SELECT count(*) FROM "MotivationQuote" WHERE "id" = '6f9619ff-8b86-d011-b42d-00c04fc964ff' AND "addedBy" = '42' AND "createdAt" = '2023-05-05 05:05:05.5'"#)
        .await;
    assert_eq!(kept_uuid, 1);
    assert_eq!(
        q.scalar(r#"SELECT count(*) FROM "MotivationQuote""#).await,
        2
    );
    let suggestion = q
        .scalar(r#"SELECT count(*) FROM "SuggestionQuote" WHERE "status" = 'Approved' AND "reviewedAt" = '2024-02-02 10:00:00'"#)
        .await;
    assert_eq!(suggestion, 1);
    // Now exactly migration 0000, recorded: the bot starts without a guard.
    let (code, out) = q.run(&["migrate"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing to migrate"), "{out}");
    let (code, out) = q.run(&["db", "reconcile"]).await;
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("migration history"), "{out}");
}

#[tokio::test]
async fn a_value_that_cannot_be_mapped_aborts_naming_table_row_and_column() {
    let q = legacy().await;
    q.exec(r#"UPDATE "Guild" SET "motivationFrequency" = 'Hourly' WHERE "id" = 'clx2'"#)
        .await;
    let (code, out) = q.run(&["db", "reconcile", "--confirm"]).await;
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains(r#"table "Guild", row 2 (id "clx2"), column "motivationFrequency""#),
        "{out}"
    );
    assert!(out.contains("nothing changed"), "{out}");
    assert_eq!(guild_id_type(&q).await, 0);
    assert_eq!(q.scalar(r#"SELECT count(*) FROM "Guild""#).await, 2);
}

#[tokio::test]
async fn a_duplicated_guild_id_aborts_naming_both_rows() {
    let q = legacy().await;
    q.exec(r#"INSERT INTO "Guild" ("id", "guildId") VALUES ('clx3', '111')"#)
        .await;
    let (code, out) = q.run(&["db", "reconcile", "--confirm"]).await;
    assert_ne!(code, 0, "{out}");
    assert!(out.contains(r#"table "Guild", rows 1 and 3"#), "{out}");
    assert!(
        out.contains(r#"column "guildId": duplicate value "111""#),
        "{out}"
    );
    assert_eq!(guild_id_type(&q).await, 0);
}

#[tokio::test]
async fn reconcile_refuses_migrated_databases_and_databases_without_guild() {
    let q = Quotebot::new().await;
    let (code, out) = q.run(&["db", "reconcile"]).await;
    assert_ne!(code, 0, "{out}");
    assert!(out.contains(r#"has no "Guild" table"#), "{out}");
    assert_eq!(q.run(&["migrate"]).await.0, 0);
    let (code, out) = q.run(&["db", "reconcile", "--confirm"]).await;
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("migration history"), "{out}");
}

#[tokio::test]
async fn a_row_a_running_bot_writes_during_reconcile_is_kept() {
    use keel_platform::sea_orm::{ConnectionTrait, TransactionTrait};
    let q = legacy().await;
    let writer = q.sql().await;
    let txn = writer.begin().await.unwrap();
    txn.execute_unprepared(r#"INSERT INTO "Guild" ("id", "guildId") VALUES ('clx9', '999')"#)
        .await
        .unwrap();
    let mut reconcile = q.spawn(&["db", "reconcile", "--confirm"]);
    let waiting = keel_testkit::eventually_async(std::time::Duration::from_secs(20), || async {
        let n = q
            .scalar(
                r#"SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                   WHERE NOT l.granted AND c.relname = 'Guild'
                     AND c.relnamespace = current_schema()::regnamespace"#,
            )
            .await;
        (n > 0).then_some(())
    })
    .await;
    assert!(waiting.is_some(), "reconcile never waited for the writer");
    txn.commit().await.unwrap();
    let status = reconcile.wait(std::time::Duration::from_secs(60)).await;
    assert!(
        status.success(),
        "{}{}",
        reconcile.stdout(),
        reconcile.stderr()
    );
    assert_eq!(
        q.scalar(r#"SELECT count(*) FROM "Guild" WHERE "guildId" = '999'"#)
            .await,
        1,
        "the row written meanwhile was lost"
    );
    assert_eq!(q.scalar(r#"SELECT count(*) FROM "Guild""#).await, 3);
}
