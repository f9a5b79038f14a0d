//! The device list the console pages through: every device, or those whose
//! push token or label contains a text, a page at a time, in push token
//! order (the primary key's: no sort of the whole table).

use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::{Expr, ExprTrait, Func, LikeExpr};
use keel_platform::sea_orm::{
    Condition, DbErr, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};

use crate::entity::push_device;

/// `%text%` for LIKE, with `%`, `_` and the escape itself taken literally,
/// lower-cased (the columns are compared lower-cased: the search ignores
/// case the same way on both backends).
fn contains(text: &str) -> LikeExpr {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    LikeExpr::new(pattern).escape('\\')
}

fn matching(search: Option<&str>) -> Condition {
    let Some(text) = search else {
        return Condition::all();
    };
    let lower = |col: push_device::Column| Expr::expr(Func::lower(Expr::col(col)));
    Condition::any()
        .add(lower(push_device::Column::PushToken).like(contains(text)))
        .add(lower(push_device::Column::UserLabel).like(contains(text)))
}

/// One page of the devices matching `search` (none: all), and how many
/// match.
pub async fn page(
    db: &Db,
    search: Option<&str>,
    page: u64,
    per_page: u64,
) -> Result<(Vec<push_device::Model>, u64), DbErr> {
    let total = push_device::Entity::find()
        .filter(matching(search))
        .count(db.read())
        .await?;
    let rows = push_device::Entity::find()
        .filter(matching(search))
        .order_by_asc(push_device::Column::PushToken)
        .offset((page - 1) * per_page)
        .limit(per_page)
        .all(db.read())
        .await?;
    Ok((rows, total))
}

#[cfg(test)]
mod tests {
    use super::contains;
    use keel_platform::sea_orm::sea_query::{Expr, ExprTrait, Query, SqliteQueryBuilder};

    #[test]
    fn wildcards_in_the_search_are_taken_literally() {
        let sql = Query::select()
            .expr(Expr::val("x").like(contains("50%_A\\b")))
            .to_string(SqliteQueryBuilder);
        assert!(sql.contains(r"'%50\%\_a\\b%' ESCAPE '\'"), "{sql}");
    }
}
