//! The live notification to the chat community's Discord webhook.

use keel_testkit::discord::Refusal;
use serde_json::json;

use crate::helpers::Channel;

async fn wait_posts(ch: &Channel, n: usize) -> Vec<keel_testkit::discord::Posted> {
    keel_testkit::eventually(std::time::Duration::from_secs(15), || {
        let p = ch.discord.posted();
        (p.len() >= n).then_some(p)
    })
    .await
    .unwrap_or_else(|| panic!("expected {n} posts, got {:?}", ch.discord.posted()))
}

#[tokio::test]
async fn a_live_start_posts_one_message_with_the_channel_and_its_logo() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    ch.mutate("channel.update", json!({"description": "Rust, slowly"}))
        .await;
    crate::logo::upload_png(&ch).await;
    ch.event("call.live_started", json!({})).await;
    let posts = wait_posts(&ch, 1).await;
    let body = &posts[0].body;
    assert!(posts[0].wait, "?wait=true");
    let content = body["content"].as_str().unwrap();
    assert!(
        content.contains("Ada's channel") && content.contains("http://127.0.0.1:8083"),
        "{content}"
    );
    let embed = &body["embeds"][0];
    assert_eq!(embed["title"], "Ada's channel");
    assert_eq!(embed["url"], "http://127.0.0.1:8083");
    assert_eq!(embed["description"], "Rust, slowly");
    assert!(
        embed["thumbnail"]["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:8083/api/logo/")
    );
    ch.app.jobs_drained().await;
    assert_eq!(ch.discord.posted().len(), 1);
}

#[tokio::test]
async fn a_429_is_retried_after_its_retry_after_and_5xx_with_backoff() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    ch.discord
        .refuse_next(&[Refusal::RateLimited(1.5), Refusal::Status(502)]);
    ch.event("call.live_started", json!({})).await;
    let posts = wait_posts(&ch, 1).await;
    let refused = ch.discord.refused();
    assert_eq!(refused.iter().map(|r| r.1).collect::<Vec<_>>(), [429, 502]);
    assert!(
        refused[1].0.duration_since(refused[0].0) >= std::time::Duration::from_millis(1400),
        "waited out retry_after"
    );
    assert!(posts[0].at > refused[1].0);
    ch.app.jobs_drained().await;
    assert_eq!(ch.discord.posted().len(), 1);
}

#[tokio::test]
async fn an_absurd_retry_after_is_clamped_to_an_hour_not_a_panic() {
    use keel_platform::jobs::entity as job;
    use keel_platform::sea_orm::EntityTrait;
    let ch = Channel::start().await;
    ch.provisioned().await;
    ch.discord.refuse_next(&[Refusal::RateLimited(1e300)]);
    ch.event("call.live_started", json!({})).await;
    let db = ch.app.platform().db.clone();
    let retried = keel_testkit::eventually_async(std::time::Duration::from_secs(15), || async {
        job::Entity::find()
            .all(db.read())
            .await
            .unwrap()
            .into_iter()
            .find(|j| j.kind == "channel.live_notify" && j.attempts == 1 && j.locked_by.is_none())
    })
    .await
    .expect("the refused post is rescheduled");
    let wait = retried.run_at - chrono::Utc::now();
    assert!(
        wait > chrono::Duration::minutes(59) && wait <= chrono::Duration::minutes(60),
        "rescheduled {wait} ahead: {:?}",
        retried.last_error
    );
    assert!(ch.discord.posted().is_empty());
}

#[tokio::test]
async fn a_deleted_webhook_404_is_not_retried() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    ch.discord.refuse_next(&[Refusal::Status(404)]);
    ch.event("call.live_started", json!({})).await;
    ch.app.jobs_drained().await;
    assert_eq!(ch.discord.refused().len(), 1);
    assert!(ch.discord.posted().is_empty());
}

#[tokio::test]
async fn a_long_title_is_cut_to_discords_limits() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    let long = "x".repeat(120);
    ch.mutate("channel.update", json!({"title": long})).await;
    ch.event("call.live_started", json!({})).await;
    let posts = wait_posts(&ch, 1).await;
    assert!(posts[0].body["content"].as_str().unwrap().chars().count() <= 2000);
    assert!(
        posts[0].body["embeds"][0]["title"]
            .as_str()
            .unwrap()
            .chars()
            .count()
            <= 256
    );
}

#[tokio::test]
async fn with_a_skip_window_a_quick_restart_is_not_announced_again() {
    let ch = Channel::with(&[("KEEL_CHANNEL_LIVE_NOTIFY_SKIP_WITHIN_SECS", "3600".into())]).await;
    ch.provisioned().await;
    ch.event("call.live_started", json!({})).await;
    wait_posts(&ch, 1).await;
    ch.event("call.ended", json!({})).await;
    ch.until_live(false).await;
    ch.event("call.live_started", json!({})).await;
    ch.until_live(true).await;
    ch.app.jobs_drained().await;
    assert_eq!(
        ch.discord.posted().len(),
        1,
        "the second start is within the window"
    );
}

#[tokio::test]
async fn without_a_webhook_url_nothing_is_posted_and_nothing_fails() {
    let ch = Channel::with(&[("KEEL_CHANNEL_LIVE_WEBHOOK_URL", String::new())]).await;
    ch.provisioned().await;
    ch.event("call.live_started", json!({})).await;
    ch.app.jobs_drained().await;
    assert!(ch.discord.posted().is_empty());
    assert!(ch.discord.refused().is_empty());
}

/// discord.js (@discordjs/rest 2.6.3, pinned in
/// crates/keel/tests/provider-sdks) is the reference: keel's post and the
/// library's post of the same message reach the same versioned path with
/// the same query, content type and body, and both name their client as
/// Discord asks.
#[tokio::test]
async fn the_notification_is_posted_as_discord_js_posts_to_a_webhook() {
    let ch = Channel::start().await;
    ch.provisioned().await;
    ch.event("call.live_started", json!({})).await;
    let keel = wait_posts(&ch, 1).await.remove(0);

    let dir = keel_testkit::node::package("crates/keel/tests/provider-sdks");
    let body = keel.body.to_string();
    let out =
        keel_testkit::node::run_json(&dir, "discord.mjs", &[&ch.discord.webhook_url(), &body])
            .await;
    assert_eq!(out["answer"]["id"], "1", "{out}");
    let sdk = wait_posts(&ch, 2).await.remove(1);

    assert_eq!(keel.path, "/api/v10/webhooks/123456/token-abc");
    assert_eq!(keel.path, sdk.path);
    assert_eq!(keel.query, sdk.query);
    assert_eq!(keel.body, sdk.body);
    assert_eq!(keel.content_type, sdk.content_type);
    for ua in [&keel.user_agent, &sdk.user_agent] {
        let ua = ua.as_deref().unwrap_or_default();
        assert!(ua.starts_with("DiscordBot ("), "{ua}");
    }
}
