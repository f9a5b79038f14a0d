//! `keel quotebot db baseline`: records that migration 0000 is applied,
//! without running it, and only when the live schema is exactly what 0000
//! makes; otherwise it refuses and lists the differences (reconcile such a
//! schema instead).

use keel_platform::db::Db;
use keel_platform::migrate;

use crate::schema::{self, guard, shape};

pub async fn run(db: &Db) -> anyhow::Result<String> {
    if guard::recorded(db).await? > 0 {
        anyhow::bail!("the database already has quotebot migration history: nothing to baseline");
    }
    let schema_name = shape::current_schema(db.read()).await?;
    let live = shape::of(db.read(), &schema_name).await?;
    if live.is_empty() {
        anyhow::bail!(
            "schema \"{schema_name}\" has none of the quotebot tables: nothing to baseline (start the bot, which migrates)"
        );
    }
    let expected = shape::expected(db).await?;
    let differences = shape::diff(&live, &expected);
    if !differences.is_empty() {
        anyhow::bail!(
            "baseline refused: schema \"{schema_name}\" is not exactly migration 0000 ({} differences); reconcile it instead (keel quotebot db reconcile):\n{}",
            differences.len(),
            differences.join("\n")
        );
    }
    migrate::mark_applied(db, &schema::MIGRATIONS, 0).await?;
    Ok(format!(
        "baselined: schema \"{schema_name}\" matches migration 0000; recorded 0000 as applied"
    ))
}
