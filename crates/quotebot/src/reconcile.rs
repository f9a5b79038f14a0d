//! `keel quotebot db reconcile [--confirm]` (work in progress).

use keel_platform::db::Db;

pub async fn run(_db: &Db, _confirm: bool) -> anyhow::Result<String> {
    anyhow::bail!("reconcile is not available yet")
}
