//! Short reads on PostgreSQL, served on connections outside the pool, read
//! what the pool reads; what they cannot do is read through the pool.

use chrono::{DateTime, Utc};
use keel_platform::db::inline::Miss;
use keel_platform::sea_orm::entity::prelude::*;
use keel_platform::sea_orm::{ConnectionTrait, JoinType, QuerySelect, RelationDef, Statement};
use keel_testkit::TestPlatform;

use crate::inline::{create_things, selects, thing, with_json};

async fn postgres_with_things(env: &[(&str, &str)]) -> Option<(TestPlatform, DateTime<Utc>)> {
    let p = TestPlatform::start(env).await;
    if !p.platform.db.is_postgres() {
        return None;
    }
    let base = create_things(&p).await;
    Some((p, base))
}

#[tokio::test]
async fn a_short_read_on_postgresql_gives_the_models_the_pool_gives() {
    let Some((p, base)) = postgres_with_things(&[]).await else {
        return;
    };
    let db = &p.platform.db;
    for select in selects(base) {
        let short = db.try_short_pg(&select).await.expect("read short");
        let pooled = select.clone().all(db.read()).await.unwrap();
        assert_eq!(short, pooled);
        assert_eq!(db.all_short(select.clone()).await.unwrap(), pooled);
        assert_eq!(
            db.one_short(select.clone()).await.unwrap(),
            select.one(db.read()).await.unwrap()
        );
    }
    // JSON columns too (SeaORM decodes them; nothing here to miss).
    db.write()
        .execute_unprepared(r#"INSERT INTO inline_json (id, doc) VALUES ('j', '{"a": [1, 2]}')"#)
        .await
        .unwrap();
    let json = with_json::Entity::find();
    assert_eq!(
        db.try_short_pg(&json).await.unwrap(),
        json.all(db.read()).await.unwrap()
    );
}

#[tokio::test]
async fn a_short_read_of_a_row_and_its_related_row_gives_what_the_pool_gives() {
    let Some((p, _)) = postgres_with_things(&[]).await else {
        return;
    };
    let db = &p.platform.db;
    db.write()
        .execute_unprepared(r#"INSERT INTO inline_json (id, doc) VALUES ('t07', '{"n": 7}')"#)
        .await
        .unwrap();
    let related: RelationDef = thing::Entity::belongs_to(with_json::Entity)
        .from(thing::Column::Id)
        .to(with_json::Column::Id)
        .into();
    let pair = |id: &str| {
        thing::Entity::find_by_id(id.to_owned())
            .select_also(with_json::Entity)
            .join(JoinType::LeftJoin, related.clone())
    };
    // With its related row, without one, and no row at all.
    for id in ["t07", "t08", "none"] {
        let short = db.one_short_pair(pair(id)).await.unwrap();
        assert_eq!(short, pair(id).one(db.read()).await.unwrap(), "{id}");
        assert_eq!(short.is_some(), id != "none");
        assert_eq!(short.and_then(|(_, j)| j).is_some(), id == "t07");
    }
}

#[tokio::test]
async fn a_short_read_that_fails_is_the_pools_to_report_and_its_connection_is_not_reused() {
    let Some((p, _)) = postgres_with_things(&[]).await else {
        return;
    };
    let db = &p.platform.db;
    // Another shape than the entity's: the decode fails, the pool reports.
    let cols = thing::Entity::find()
        .select_only()
        .column(thing::Column::Id);
    assert!(matches!(
        db.try_short_pg(&cols).await,
        Err(Miss::Decode { .. })
    ));
    assert!(db.all_short(cols).await.is_err());
    // The server ended every short-read connection of this test's app (the
    // pool's name and " short reads"; other tests share the database),
    // waiting until they are gone: the next read misses
    // once, is served by the pool, and the one after on a new connection.
    let one = thing::Entity::find_by_id("t07");
    assert!(db.try_short_pg(&one).await.is_ok());
    let ended = db
        .read()
        .query_all_raw(Statement::from_string(
            db.backend(),
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity \
             WHERE application_name = current_setting('application_name') || ' short reads' \
             AND datname = current_database()",
        ))
        .await
        .unwrap();
    assert!(!ended.is_empty(), "the short-read connection was open");
    let expected = one.clone().one(db.read()).await.unwrap();
    assert!(expected.is_some());
    assert_eq!(db.one_short(one.clone()).await.unwrap(), expected);
    assert_eq!(db.one_short(one.clone()).await.unwrap(), expected);
    assert!(db.try_short_pg(&one).await.is_ok());
}

#[tokio::test]
async fn short_reads_on_postgresql_can_be_turned_off() {
    let Some((p, _)) = postgres_with_things(&[("KEEL_PG_SHORT_READS", "false")]).await else {
        return;
    };
    let db = &p.platform.db;
    let one = thing::Entity::find_by_id("t07");
    assert!(matches!(db.try_short_pg(&one).await, Err(Miss::Off)));
    assert!(db.one_short(one).await.unwrap().is_some());
}

#[tokio::test]
async fn postgresql_connections_carry_the_statement_and_idle_transaction_limits() {
    let p = TestPlatform::start(&[("KEEL_DB_STATEMENT_TIMEOUT_SECS", "2")]).await;
    if !p.platform.db.is_postgres() {
        return;
    }
    let db = &p.platform.db;
    let show = |what: &'static str| async move {
        let row = db
            .read()
            .query_one_raw(Statement::from_string(
                db.read().get_database_backend(),
                format!("SHOW {what}"),
            ))
            .await
            .unwrap()
            .unwrap();
        row.try_get_by_index::<String>(0).unwrap()
    };
    assert_eq!(show("statement_timeout").await, "2s");
    assert_eq!(show("idle_in_transaction_session_timeout").await, "1min");
    let started = std::time::Instant::now();
    let slow = db.read().execute_unprepared("SELECT pg_sleep(30)").await;
    assert!(slow.is_err(), "cancelled by the server");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}
