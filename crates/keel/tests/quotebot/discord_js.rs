//! discord.js's REST client (@discordjs/rest 2.6.3, pinned in
//! crates/keel/tests/provider-sdks) is the reference for the bot's message
//! posts: it posts the message the bot posted, and the fake's records of
//! the two must agree.

use std::time::Duration;

use keel_testkit::eventually;
use serde_json::json;

use crate::bot::{ask, member, migrated_with_quotes};
use crate::harness::{MAIN_CHANNEL, TOKEN, id};

#[tokio::test]
async fn the_bots_message_posts_are_discord_js_posts() {
    let q = migrated_with_quotes().await;
    let g = id();
    q.discord.add_guild(g);
    let _bot = q.start(1).await;
    let suggestion = json!([
        {"name": "quote", "type": 3, "value": "Well begun is half done."},
        {"name": "author", "type": 3, "value": "Aristotle"},
    ]);
    ask(&q.discord, &member(g, 0), "suggest", suggestion).await;
    let posted = |n: usize| {
        let d = q.discord.clone();
        async move {
            eventually(Duration::from_secs(10), || {
                let m: Vec<_> = d
                    .messages()
                    .into_iter()
                    .filter(|m| m.channel == MAIN_CHANNEL)
                    .collect();
                (m.len() >= n).then_some(m)
            })
            .await
            .expect("the owner's channel hears of it")
        }
    };
    let keel = posted(1).await.remove(0);

    let dir = keel_testkit::node::package("crates/keel/tests/provider-sdks");
    let api = format!("{}/api", q.discord.api_url());
    let out = keel_testkit::node::run_json(
        &dir,
        "discord-bot.mjs",
        &[
            &api,
            TOKEN,
            &MAIN_CHANNEL.to_string(),
            &keel.body.to_string(),
        ],
    )
    .await;
    assert!(out["answer"]["id"].is_string(), "{out}");
    let sdk = posted(2).await.remove(1);

    assert_eq!(keel.body, sdk.body);
    assert_eq!(keel.authorization, sdk.authorization);
    assert_eq!(
        keel.authorization.as_deref(),
        Some(&*format!("Bot {TOKEN}"))
    );
    assert_eq!(keel.content_type, sdk.content_type);
    for ua in [&keel.user_agent, &sdk.user_agent] {
        let ua = ua.as_deref().unwrap_or_default();
        assert!(ua.starts_with("DiscordBot ("), "{ua}");
    }
}
