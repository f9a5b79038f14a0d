//! Grouped reads: concurrent lookups by key share a query on PostgreSQL,
//! and each gets the row a lookup of its own would get (on both backends).

use std::time::Duration;

use keel_platform::db::grouped::GroupedReads;
use keel_platform::sea_orm::entity::prelude::*;
use keel_platform::tasks::Tasks;
use keel_testkit::TestPlatform;

use crate::inline::{create_things, thing};

type Things = GroupedReads<thing::Entity, String>;

fn things(p: &TestPlatform, tasks: &Tasks, name: &'static str) -> Things {
    GroupedReads::start(
        &p.platform.db,
        tasks,
        name,
        thing::Column::Id,
        |t: &thing::Model| &t.id,
    )
}

/// The value of a counter labelled `read="name"`, as Prometheus shows it.
fn counted(metric: &str, name: &str) -> u64 {
    let text = keel_platform::telemetry::prometheus()
        .expect("the recorder")
        .render();
    let line = format!("{metric}{{read=\"{name}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&line))
        .map_or(0, |v| v.trim().parse().expect("a count"))
}

#[tokio::test]
async fn concurrent_lookups_each_get_the_row_of_their_key_or_none() {
    let p = TestPlatform::start(&[]).await;
    create_things(&p).await;
    keel_platform::telemetry::prometheus();
    let tasks = Tasks::new();
    let reads = things(&p, &tasks, "test lookups");
    // Every thing twice, and keys that match nothing, all at once.
    let keys: Vec<String> = (0..40)
        .chain(0..40)
        .map(|i| format!("t{i:02}"))
        .chain(["nope".to_owned(), "t99".to_owned(), String::new()])
        .collect();
    let lookups: Vec<_> = keys
        .iter()
        .map(|k| {
            let reads = reads.clone();
            let k = k.clone();
            tokio::spawn(async move { reads.get(k).await })
        })
        .collect();
    let db = &p.platform.db;
    for (key, lookup) in keys.iter().zip(lookups) {
        let got = lookup.await.unwrap().unwrap();
        let alone = thing::Entity::find_by_id(key.clone())
            .one(db.read())
            .await
            .unwrap();
        assert_eq!(got, alone, "the row of {key:?}");
    }
    if db.is_postgres() {
        // The lookups queued while the first query was out went together.
        let queries = counted("keel_db_grouped_read_queries_total", "test lookups");
        assert!(
            (1..=10).contains(&queries),
            "{} lookups took {queries} queries",
            keys.len()
        );
        // Each query asks for its distinct keys.
        let asked = counted("keel_db_grouped_reads_total", "test lookups");
        assert!((43..=83).contains(&asked), "{asked} keys asked");
    }
    tasks.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn after_shutdown_a_lookup_reads_alone() {
    let p = TestPlatform::start(&[]).await;
    create_things(&p).await;
    let tasks = Tasks::new();
    let reads = things(&p, &tasks, "test shutdown");
    assert!(reads.get("t01".to_owned()).await.unwrap().is_some());
    tasks.shutdown(Duration::from_secs(5)).await;
    assert!(tasks.health().is_ok(), "the reader stopped cleanly");
    let after = reads.get("t02".to_owned()).await.unwrap();
    assert_eq!(after.map(|t| t.id), Some("t02".to_owned()));
    assert_eq!(reads.get("nope".to_owned()).await.unwrap(), None);
}

#[tokio::test]
async fn a_failed_query_fails_its_lookups_and_the_reader_goes_on() {
    // No table behind the entity: every query fails.
    let p = TestPlatform::start(&[]).await;
    let tasks = Tasks::new();
    let reads = things(&p, &tasks, "test failure");
    assert!(reads.get("t01".to_owned()).await.is_err());
    create_things(&p).await;
    let found = reads.get("t01".to_owned()).await.unwrap();
    assert_eq!(found.map(|t| t.id), Some("t01".to_owned()));
    assert!(tasks.health().is_ok());
    tasks.shutdown(Duration::from_secs(5)).await;
}
