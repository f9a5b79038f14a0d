//! The real `@trpc/client` from npm (pinned in tests/trpc-client) against
//! channel-api: `httpLink`, `httpBatchLink` and `httpBatchStreamLink`, each
//! with plain JSON and with superjson; queries, mutations, batches with
//! mixed outcomes, and every error code a client can cause arriving as a
//! `TRPCClientError` with its `data.code` and `data.httpStatus`.

use crate::helpers::{Channel, SETUP_CODE};

async fn with_the_real_client(transformer: &str) {
    let dir = keel_testkit::node::package("crates/channel/tests/trpc-client");
    let ch = Channel::with(&[
        ("KEEL_CHANNEL_TRPC_TRANSFORMER", transformer.to_owned()),
        ("KEEL_CHANNEL_VIEWER_TOKENS_PER_MINUTE", "5".to_owned()),
    ])
    .await;
    let out = tokio::process::Command::new("node")
        .arg("client.mjs")
        .arg(ch.url(""))
        .arg(transformer)
        .arg(SETUP_CODE)
        .current_dir(&dir)
        .output()
        .await
        .expect("run node");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains(r#""ok":true"#), "{text}");
}

#[tokio::test]
async fn the_real_trpc_client_works_over_every_link_with_plain_json() {
    with_the_real_client("json").await;
}

#[tokio::test]
async fn the_real_trpc_client_works_over_every_link_with_superjson() {
    with_the_real_client("superjson").await;
}
