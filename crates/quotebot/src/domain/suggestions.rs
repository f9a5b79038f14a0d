//! Suggested quotes (`SuggestionQuote`): anyone suggests (Pending); the
//! owner approves (the quote becomes a `MotivationQuote`, in the same
//! transaction) or rejects, with `reviewedBy`/`reviewedAt` recorded. Only
//! a Pending suggestion can be reviewed.

use chrono::Utc;
use keel_platform::db::Db;
use keel_platform::sea_orm::{
    ConnectionTrait, DbBackend, DbErr, Statement, TransactionTrait, Value,
};

use super::guilds::naive;

pub const QUOTE_MAX: usize = 500;
pub const AUTHOR_MAX: usize = 100;

#[derive(Debug, Clone)]
pub struct Suggestion {
    pub id: String,
    pub quote: String,
    pub author: String,
    pub added_by: String,
}

fn stmt(sql: &str, values: impl IntoIterator<Item = Value>) -> Statement {
    Statement::from_sql_and_values(DbBackend::Postgres, sql, values)
}

pub async fn suggest(db: &Db, quote: &str, author: &str, by: u64) -> Result<String, DbErr> {
    let row = db
        .write()
        .query_one_raw(stmt(
            r#"INSERT INTO "SuggestionQuote" ("quote", "author", "addedBy", "updatedAt")
               VALUES ($1, $2, $3, $4) RETURNING "id"::text AS "id""#,
            [
                Value::from(quote),
                Value::from(author),
                Value::from(by.to_string()),
                Value::from(naive(Utc::now())),
            ],
        ))
        .await?
        .ok_or_else(|| DbErr::RecordNotFound("SuggestionQuote".to_owned()))?;
    row.try_get("", "id")
}

pub async fn pending(db: &Db, limit: u64) -> Result<Vec<Suggestion>, DbErr> {
    let rows = db
        .read()
        .query_all_raw(stmt(
            r#"SELECT "id"::text AS "id", "quote", "author", "addedBy" FROM "SuggestionQuote"
               WHERE "status" = 'Pending' ORDER BY "createdAt" LIMIT $1"#,
            [Value::from(i64::try_from(limit).unwrap_or(10))],
        ))
        .await?;
    rows.iter()
        .map(|r| {
            Ok(Suggestion {
                id: r.try_get("", "id")?,
                quote: r.try_get("", "quote")?,
                author: r.try_get("", "author")?,
                added_by: r.try_get("", "addedBy")?,
            })
        })
        .collect()
}

#[derive(Debug, PartialEq, Eq)]
pub enum Review {
    Done,
    /// No suggestion has that id.
    Unknown,
    /// Reviewed already.
    NotPending,
}

/// Approves (`approve`) or rejects suggestion `id` as `by`.
pub async fn review(db: &Db, id: &str, approve: bool, by: u64) -> Result<Review, DbErr> {
    if uuid_like(id).is_none() {
        return Ok(Review::Unknown);
    }
    let txn = db.write().begin().await?;
    let status = if approve { "Approved" } else { "Rejected" };
    let now = naive(Utc::now());
    let row = txn
        .query_one_raw(stmt(
            r#"UPDATE "SuggestionQuote"
               SET "status" = $2::"SuggestionStatus", "reviewedBy" = $3, "reviewedAt" = $4, "updatedAt" = $4
               WHERE "id"::text = $1 AND "status" = 'Pending'
               RETURNING "quote", "author", "addedBy""#,
            [Value::from(id), Value::from(status), Value::from(by.to_string()), Value::from(now)],
        ))
        .await?;
    let Some(row) = row else {
        let exists = txn
            .query_one_raw(stmt(
                r#"SELECT 1 AS one FROM "SuggestionQuote" WHERE "id"::text = $1"#,
                [Value::from(id)],
            ))
            .await?
            .is_some();
        txn.rollback().await?;
        return Ok(if exists {
            Review::NotPending
        } else {
            Review::Unknown
        });
    };
    if approve {
        let quote: String = row.try_get("", "quote")?;
        let author: String = row.try_get("", "author")?;
        let added_by: String = row.try_get("", "addedBy")?;
        txn.execute_raw(stmt(
            r#"INSERT INTO "MotivationQuote" ("quote", "author", "addedBy") VALUES ($1, $2, $3)"#,
            [
                Value::from(quote),
                Value::from(author),
                Value::from(added_by),
            ],
        ))
        .await?;
    }
    txn.commit().await?;
    Ok(Review::Done)
}

/// `id` if it has the shape of a uuid (so a typo is "unknown", not an
/// error).
fn uuid_like(id: &str) -> Option<&str> {
    let ok = id.len() == 36
        && id.chars().enumerate().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    ok.then_some(id)
}
