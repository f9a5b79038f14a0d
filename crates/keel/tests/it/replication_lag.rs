//! The replica's lag, as an operator sees it: on /metrics and in /readyz,
//! small while the replica takes writes, growing once it cannot.

use std::time::Duration;

use keel_testkit::process::{KeelProcess, command};
use serde_json::Value;

use crate::KEEL;
use crate::replica_kit::{env, s3, write};

/// A gauge's value on `/metrics`, if it is there.
fn gauge(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

async fn metrics(keel: &KeelProcess) -> String {
    let text = reqwest::get(keel.url("metrics")).await.unwrap();
    text.text().await.unwrap()
}

#[tokio::test]
async fn the_replicas_lag_is_on_metrics_and_readyz_and_grows_while_the_bucket_is_away() {
    if keel_testkit::db::postgres_url().is_some() {
        return;
    }
    let (mut moto, endpoint) = s3().await;
    let replica =
        format!("s3://keel-replica/lag?endpoint={endpoint}&region=us-east-1&force-path-style=true");
    let dir = tempfile::tempdir().unwrap();
    // The data directory as the quick start has it: relative (Litestream
    // lists the database by its absolute path).
    let mut env = env(dir.path(), &replica);
    env.push(("KEEL_DATA_DIR", "./data".to_owned()));
    let keel =
        KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "usage-alerts"])).await;
    let base = keel.url("usage-alerts").to_owned();
    write(&base, (0..5).map(|n| format!("lag-{n}"))).await;
    let synced = keel_testkit::eventually_async(Duration::from_secs(30), || async {
        let text = metrics(&keel).await;
        let at = gauge(&text, "keel_replica_last_sync_timestamp_seconds")?;
        let lag = gauge(&text, "keel_replica_lag_seconds")?;
        (lag < 5.0).then_some((at, lag))
    })
    .await;
    let (at, lag) = synced.expect("/metrics says when the replica last synced, and a small lag");
    println!("synced at {at}, lag {lag:.2} s");
    assert_eq!(
        gauge(&metrics(&keel).await, "keel_replica_sync_interval_seconds"),
        Some(1.0)
    );
    let ready: Value = reqwest::get(format!("{base}/readyz"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ready["checks"]["replica"], "ok", "{ready}");
    assert_eq!(ready["status"], "ok", "{ready}");

    // The bucket goes away: syncs fail, the lag grows past what a working
    // replica ever shows, and keel keeps serving.
    moto.kill().await.unwrap();
    write(&base, ["after the bucket left".to_owned()]).await;
    let grown = keel_testkit::eventually_async(Duration::from_secs(30), || async {
        gauge(&metrics(&keel).await, "keel_replica_lag_seconds").filter(|lag| *lag >= 5.0)
    })
    .await;
    assert!(grown.is_some(), "the lag grows while the bucket is away");
    let r = reqwest::get(format!("{base}/readyz")).await.unwrap();
    assert_eq!(r.status(), 200, "still serving");
}
