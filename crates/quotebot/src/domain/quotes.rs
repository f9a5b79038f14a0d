//! Approved quotes (`MotivationQuote`): a random one, not the one a guild
//! got last when there is a choice (the last one per guild is kept in
//! Redis, shared by every shard).

use std::time::Duration;

use keel_platform::cache::Cache;
use keel_platform::db::Db;
use keel_platform::sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement, Value};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    pub id: String,
    pub quote: String,
    pub author: String,
}

impl Quote {
    /// As the bot posts it.
    pub fn message(&self) -> String {
        let text: String = self.quote.chars().take(1800).collect();
        format!(
            "> {text}\n— **{}**",
            self.author.chars().take(100).collect::<String>()
        )
    }
}

const LAST_KEPT: Duration = Duration::from_secs(60 * 60 * 24 * 62);

/// A random quote other than the last one `scope` got; `None` when there
/// is no quote at all.
pub async fn pick(db: &Db, cache: &Cache, scope: &str) -> Result<Option<Quote>, DbErr> {
    let key = format!("last-quote:{scope}");
    let last = match cache.get(&key).await {
        Ok(v) => v
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default(),
        Err(e) => {
            tracing::warn!(error = %e, "Redis: the last quote is unknown; it may repeat");
            String::new()
        }
    };
    let row = db
        .read()
        .query_one_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            r#"SELECT "id"::text AS "id", "quote", "author" FROM "MotivationQuote"
               ORDER BY ("id"::text = $1), random() LIMIT 1"#,
            [Value::from(last)],
        ))
        .await?;
    let Some(r) = row else { return Ok(None) };
    let q = Quote {
        id: r.try_get("", "id")?,
        quote: r.try_get("", "quote")?,
        author: r.try_get("", "author")?,
    };
    if let Err(e) = cache.set(&key, q.id.as_bytes(), LAST_KEPT).await {
        tracing::warn!(error = %e, "Redis: could not keep the last quote");
    }
    Ok(Some(q))
}
