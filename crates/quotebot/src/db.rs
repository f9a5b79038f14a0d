//! The database: connecting, migrating (after the start-up guard), and the
//! starter quotes.

use keel_platform::db::Db;
use keel_platform::migrate::{self, Applied};
use keel_platform::sea_orm::{
    ConnectionTrait, DbBackend, DbErr, Statement, TransactionTrait, Value,
};

use crate::config::DbConfig;
use crate::schema::{self, guard};
use crate::starter_quotes::STARTER;

pub async fn connect(cfg: &DbConfig) -> anyhow::Result<Db> {
    Db::connect(&cfg.database)
        .await
        .map_err(|e| anyhow::anyhow!("cannot connect to DATABASE_URL: {e}"))
}

/// Applies quotebot's pending migrations, unless the schema has tables
/// without their history (then nothing is done and the error says why).
pub async fn migrate(db: &Db, cfg: &DbConfig) -> anyhow::Result<Vec<Applied>> {
    guard::check(db).await?;
    Ok(migrate::run(db, &cfg.migrations, &[&schema::MIGRATIONS]).await?)
}

/// Loads the starter quotes, skipping those present (same text): how many
/// were added.
pub async fn seed(db: &Db, owner_id: u64) -> Result<usize, DbErr> {
    let txn = db.write().begin().await?;
    // Two seeds at once must not both add a quote.
    txn.execute_unprepared(r#"LOCK TABLE "MotivationQuote" IN SHARE ROW EXCLUSIVE MODE"#)
        .await?;
    let mut added = 0;
    for (quote, author) in STARTER {
        let res = txn
            .execute_raw(Statement::from_sql_and_values(
                DbBackend::Postgres,
                r#"INSERT INTO "MotivationQuote" ("quote", "author", "addedBy")
                   SELECT $1, $2, $3
                   WHERE NOT EXISTS (SELECT 1 FROM "MotivationQuote" WHERE "quote" = $1)"#,
                [
                    Value::from(*quote),
                    Value::from(*author),
                    Value::from(owner_id.to_string()),
                ],
            ))
            .await?;
        added += usize::try_from(res.rows_affected()).unwrap_or(0);
    }
    txn.commit().await?;
    Ok(added)
}
