//! Every service's `GET /docs`: Swagger UI on its own document, rendered by
//! the browser with nothing but the service (no host but 127.0.0.1 resolves
//! in the browser), and linked from the service's root.

use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};

use crate::harness::{Browser, KEEL, Site};

async fn renders(b: &Browser, base: &str, title: &str, operation: &str) {
    b.goto(&format!("{base}/")).await;
    b.wait_text("a[href='/docs']", "API reference").await;
    b.goto(&format!("{base}/docs")).await;
    b.wait_text(".swagger-ui .title", title).await;
    b.wait_js(
        &format!(
            "return [...document.querySelectorAll('.swagger-ui .opblock-summary-path')].some(e => e.innerText.trim() === {})",
            serde_json::json!(operation)
        ),
        &format!("{title}: {operation} is listed"),
    )
    .await;
}

#[tokio::test]
async fn each_services_api_reference_renders_its_operations_offline() {
    let site = Site::start().await;
    let b = Browser::start(1280, 900).await;
    let api = site.keel.url("channel-api").to_owned();
    renders(&b, &api, "keel channel-api", "/api/trpc/stream.isLive").await;
    b.screenshot("api-docs-channel-api").await;

    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let mut env = keel_testkit::offline_env();
    env.extend([
        ("KEEL_DATA_DIR", dir.path().display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_ACCOUNTS_ADDR", "127.0.0.1:0".to_owned()),
    ]);
    let accounts =
        KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "accounts"])).await;
    renders(
        &b,
        accounts.url("accounts"),
        "keel accounts",
        "/goals/weekly",
    )
    .await;
    b.screenshot("api-docs-accounts").await;
    b.close().await;
}
