//! The operator console's health page shows quotebot's Discord gateway,
//! read from a running quotebot's health listener
//! (`KEEL_CONSOLE_QUOTEBOT_URL`): the two processes as they are deployed.

use std::time::Duration;

use keel_testkit::process::{KeelProcess, add_operator, command};
use keel_testkit::session;
use serde_json::Value;

use crate::harness::{KEEL, Quotebot};

#[tokio::test]
async fn the_consoles_health_page_shows_quotebots_gateway() {
    let q = Quotebot::new().await;
    let bot = q.start(1).await;
    let base = bot.health.trim_end_matches("/api/health").to_owned();

    let dir = tempfile::tempdir().unwrap();
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.path().display().to_string()),
        ("KEEL_CONSOLE_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_CONSOLE_QUOTEBOT_URL", base),
    ]);
    let ops = add_operator(KEEL, dir.path(), &env, "ops", &[]).await;
    let console = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "console"])).await;
    let http = reqwest::Client::new();
    let session = session::console(
        &http,
        console.url("console"),
        "ops",
        &ops.password,
        &ops.secret,
    )
    .await;
    let cookie = session.cookie;
    // The manager hears a shard is ready just after the gateway does.
    let health_url = format!("{}/console/v1/health", console.url("console"));
    let seen = keel_testkit::eventually_async(Duration::from_secs(30), || {
        let req = http.get(&health_url).header("cookie", &cookie);
        async move {
            let health: Value = req.send().await.ok()?.json().await.ok()?;
            (health["quotebot"]["ready"] == 1).then_some(health)
        }
    })
    .await;
    let health = seen.expect("the console shows the ready shard");
    let gateway = &health["quotebot"];
    assert_eq!(gateway["answered"], true, "{health}");
    assert_eq!(gateway["shards"], 1, "{gateway}");
    assert_eq!(gateway["what"], "1 of 1 shards ready");
    bot.stop().await;
}
