//! Tables in an order the target's foreign keys accept: every table after
//! the tables it refers to (read from the migrated target's catalog), the
//! components' own order otherwise.

use std::collections::{BTreeSet, HashMap};

use super::conn::Conn;
use super::{Component, CopyError, sql};
use crate::migrate::spec::TableSpec;

pub async fn parents_first(
    target: &mut Conn,
    components: &[Component],
) -> Result<Vec<TableSpec>, CopyError> {
    let tables: Vec<TableSpec> = components.iter().flat_map(|c| c.tables.clone()).collect();
    let mut refers: HashMap<String, BTreeSet<String>> = HashMap::new();
    for (child, parent) in foreign_keys(target, &tables).await? {
        if child != parent {
            refers.entry(child).or_default().insert(parent);
        }
    }
    let mut placed: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::with_capacity(tables.len());
    let mut left = tables;
    while !left.is_empty() {
        let ready = left.iter().position(|t| {
            refers.get(&t.name).is_none_or(|parents| {
                parents
                    .iter()
                    .all(|p| placed.contains(p) || !left.iter().any(|l| &l.name == p))
            })
        });
        // A cycle (none exists today) is copied in the given order.
        let next = left.remove(ready.unwrap_or(0));
        placed.insert(next.name.clone());
        out.push(next);
    }
    Ok(out)
}

/// `(table, the table it refers to)` for every foreign key.
async fn foreign_keys(
    target: &mut Conn,
    tables: &[TableSpec],
) -> Result<Vec<(String, String)>, CopyError> {
    if target.is_postgres() {
        return target
            .pairs(
                "SELECT cl.relname::text, ref.relname::text FROM pg_constraint c \
                 JOIN pg_class cl ON cl.oid = c.conrelid JOIN pg_class ref ON ref.oid = c.confrelid \
                 WHERE c.contype = 'f' AND cl.relnamespace = current_schema()::regnamespace",
            )
            .await
            .map_err(sql("reading the target's foreign keys"));
    }
    let mut all = Vec::new();
    for t in tables {
        let found = target
            .pairs(&format!(
                "SELECT '{0}', \"table\" FROM pragma_foreign_key_list('{0}')",
                t.name.replace('\'', "''")
            ))
            .await
            .map_err(sql("reading the target's foreign keys"))?;
        all.extend(found);
    }
    Ok(all)
}
