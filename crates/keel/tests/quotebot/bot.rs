//! What the bot does for its users: slash commands, guild rows, the
//! scheduled quote exactly once per period, presence, shared cooldowns.

use std::time::Duration;

use keel_testkit::discord_bot::Invoker;
use keel_testkit::{FakeDiscordBot, eventually};
use serde_json::{Value, json};

use crate::harness::{MAIN_CHANNEL, OWNER, Quotebot, id};

const MANAGE_GUILD: u64 = 1 << 5;

/// Sends a command and waits for its answer: (content, ephemeral).
pub async fn ask(d: &FakeDiscordBot, who: &Invoker, name: &str, options: Value) -> (String, bool) {
    let iid = id();
    assert!(
        d.command(iid, who, name, options),
        "no shard for the command"
    );
    let body = eventually(Duration::from_secs(20), || {
        d.callbacks()
            .into_iter()
            .find(|(i, _)| *i == iid)
            .map(|(_, b)| b)
    })
    .await
    .expect("the interaction was answered");
    assert_eq!(body["type"], 4, "{body}");
    let flags = body["data"]["flags"].as_u64().unwrap_or(0);
    (
        body["data"]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        flags & (1 << 6) != 0,
    )
}

pub fn member(guild: u64, permissions: u64) -> Invoker {
    Invoker {
        user: id(),
        guild: Some(guild),
        channel: id(),
        permissions,
    }
}

pub async fn migrated_with_quotes() -> Quotebot {
    let q = Quotebot::new().await;
    assert_eq!(q.run(&["migrate"]).await.0, 0);
    assert_eq!(q.run(&["db", "seed"]).await.0, 0);
    q
}

#[tokio::test]
async fn commands_are_registered_and_guild_rows_follow_joins_and_removals() {
    let q = migrated_with_quotes().await;
    let (g1, g2) = (id(), id());
    q.discord.add_guild(g1);
    let _bot = q.start(1).await;
    let names = eventually(Duration::from_secs(20), || {
        let c = q.discord.commands();
        (!c.is_empty()).then(|| {
            let mut n: Vec<String> = c
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_owned())
                .collect();
            n.sort();
            n
        })
    })
    .await
    .expect("commands registered");
    assert_eq!(names, ["quote", "review", "setup", "suggest"]);
    let count = |g: u64| format!(r#"SELECT count(*) FROM "Guild" WHERE "guildId" = '{g}'"#);
    wait_for(&q, &count(g1), 1).await;
    assert!(q.discord.join(g2));
    wait_for(&q, &count(g2), 1).await;
    assert!(q.discord.remove(g1));
    wait_for(&q, &count(g1), 0).await;
    assert_eq!(q.scalar(&count(g2)).await, 1);
}

async fn wait_for(q: &Quotebot, sql: &str, want: i64) {
    let reached = keel_testkit::eventually_async(Duration::from_secs(10), || async {
        (q.scalar(sql).await == want).then_some(())
    })
    .await;
    assert!(reached.is_some(), "{sql} never became {want}");
}

fn setup_channel(channel: u64, frequency: &str, time: &str, day: Option<i64>, tz: &str) -> Value {
    let mut opts = vec![
        json!({"name": "channel", "type": 7, "value": channel.to_string()}),
        json!({"name": "frequency", "type": 3, "value": frequency}),
        json!({"name": "time", "type": 3, "value": time}),
        json!({"name": "timezone", "type": 3, "value": tz}),
    ];
    if let Some(d) = day {
        opts.push(json!({"name": "day", "type": 4, "value": d}));
    }
    json!([{"name": "channel", "type": 1, "options": opts}])
}

#[tokio::test]
async fn setup_is_for_managers_validates_and_shows_the_next_send() {
    let q = migrated_with_quotes().await;
    let g = id();
    q.discord.add_guild(g);
    let _bot = q.start(1).await;
    let channel = id();
    let (text, private) = ask(
        &q.discord,
        &member(g, 0),
        "setup",
        setup_channel(channel, "Daily", "08:30", None, "Europe/Berlin"),
    )
    .await;
    assert!(private);
    assert!(text.contains("Manage Server"), "{text}");
    let manager = member(g, MANAGE_GUILD);
    for (frequency, time, day, zone, refusal) in [
        ("Daily", "8.30", None, "UTC", "is not a time"),
        ("Daily", "08:30", None, "Mars/Olympus", "is not a time zone"),
        (
            "Weekly",
            "08:30",
            Some(9),
            "UTC",
            "0 (Sunday) to 6 (Saturday)",
        ),
    ] {
        let options = setup_channel(channel, frequency, time, day, zone);
        let (text, _) = ask(&q.discord, &manager, "setup", options).await;
        assert!(text.contains(refusal), "{text}");
    }
    let (text, private) = ask(
        &q.discord,
        &manager,
        "setup",
        setup_channel(channel, "Weekly", "08:30", Some(1), "Europe/Berlin"),
    )
    .await;
    assert!(private);
    assert!(text.starts_with("Saved."), "{text}");
    assert!(
        text.contains(&format!("<#{channel}>")) && text.contains("every Monday"),
        "{text}"
    );
    assert!(text.contains("Next: <t:"), "{text}");
    let row = q
        .scalar(&format!(
            r#"SELECT count(*) FROM "Guild" WHERE "guildId" = '{g}' AND "motivationChannelId" = '{channel}'
               AND "motivationFrequency" = 'Weekly' AND "motivationTime" = '08:30' AND "motivationDay" = 1
               AND "timezone" = 'Europe/Berlin'"#
        ))
        .await;
    assert_eq!(row, 1);
    let (text, _) = ask(
        &q.discord,
        &manager,
        "setup",
        json!([{"name": "show", "type": 1, "options": []}]),
    )
    .await;
    assert!(
        text.contains("every Monday at 08:30 (Europe/Berlin)"),
        "{text}"
    );
}

#[tokio::test]
async fn quotes_suggestions_and_reviews_work_with_shared_cooldowns() {
    let q = migrated_with_quotes().await;
    let g = id();
    q.discord.add_guild(g);
    let _bot = q.start(1).await;
    let someone = member(g, 0);
    let (text, private) = ask(&q.discord, &someone, "quote", json!([])).await;
    assert!(!private, "a quote is for everyone");
    assert!(text.starts_with("> ") && text.contains("— **"), "{text}");
    let (text, _) = ask(&q.discord, &someone, "quote", json!([])).await;
    assert!(text.contains("One quote at a time"), "{text}");

    let suggestion = json!([
        {"name": "quote", "type": 3, "value": "Well begun is half done."},
        {"name": "author", "type": 3, "value": "Aristotle"},
    ]);
    let (text, _) = ask(&q.discord, &someone, "suggest", suggestion.clone()).await;
    assert!(text.contains("waits for review"), "{text}");
    let (text, _) = ask(&q.discord, &someone, "suggest", suggestion).await;
    assert!(text.contains("One suggestion at a time"), "{text}");
    let pending = r#"SELECT count(*) FROM "SuggestionQuote" WHERE "status" = 'Pending'"#;
    assert_eq!(q.scalar(pending).await, 1);
    let told = eventually(Duration::from_secs(10), || {
        q.discord
            .messages()
            .into_iter()
            .find(|m| m.channel == MAIN_CHANNEL)
    })
    .await
    .expect("the owner's channel hears of it");
    assert!(
        told.body["content"]
            .as_str()
            .unwrap()
            .contains("Well begun"),
        "{}",
        told.body
    );

    let (text, _) = ask(
        &q.discord,
        &someone,
        "review",
        json!([{"name": "list", "type": 1, "options": []}]),
    )
    .await;
    assert!(text.contains("Only the bot's owner"), "{text}");
    let owner = Invoker {
        user: OWNER,
        ..member(g, 0)
    };
    let (text, _) = ask(
        &q.discord,
        &owner,
        "review",
        json!([{"name": "list", "type": 1, "options": []}]),
    )
    .await;
    let sid = text.split('`').nth(1).expect(&text).to_owned();
    let before = q.scalar(r#"SELECT count(*) FROM "MotivationQuote""#).await;
    let approve = json!([{"name": "approve", "type": 1, "options": [{"name": "id", "type": 3, "value": sid}]}]);
    let (text, _) = ask(&q.discord, &owner, "review", approve.clone()).await;
    assert!(text.starts_with("Approved"), "{text}");
    assert_eq!(
        q.scalar(r#"SELECT count(*) FROM "MotivationQuote""#).await,
        before + 1
    );
    let reviewed = q
        .scalar(&format!(
            r#"SELECT count(*) FROM "SuggestionQuote" WHERE "status" = 'Approved'
               AND "reviewedBy" = '{OWNER}' AND "reviewedAt" IS NOT NULL"#
        ))
        .await;
    assert_eq!(reviewed, 1);
    let (text, _) = ask(&q.discord, &owner, "review", approve).await;
    assert!(text.contains("reviewed already"), "{text}");
    let bogus = json!([{"name": "reject", "type": 1, "options": [{"name": "id", "type": 3, "value": "nope"}]}]);
    let (text, _) = ask(&q.discord, &owner, "review", bogus).await;
    assert!(text.contains("No suggestion has the id"), "{text}");
}

#[tokio::test]
async fn a_guild_never_gets_the_same_quote_twice_in_a_row() {
    let q = Quotebot::new().await;
    assert_eq!(q.run(&["migrate"]).await.0, 0);
    q.exec(r#"INSERT INTO "MotivationQuote" ("quote", "author", "addedBy") VALUES ('One.', 'A', '1'), ('Two.', 'B', '1')"#)
        .await;
    let g = id();
    q.discord.add_guild(g);
    let _bot = q.start(1).await;
    let mut last = String::new();
    for _ in 0..6 {
        // A new member each time: the cooldown is per user.
        let (text, _) = ask(&q.discord, &member(g, 0), "quote", json!([])).await;
        assert_ne!(text, last, "the same quote twice in a row");
        last = text;
    }
}

/// A guild set up a day ago whose daily time passed two minutes ago.
async fn owed_guild(q: &Quotebot, guild: u64, channel: u64) {
    q.exec(&format!(
        r#"INSERT INTO "Guild" ("guildId", "motivationChannelId", "motivationFrequency", "motivationTime", "timezone", "updatedAt")
           VALUES ('{guild}', '{channel}', 'Daily',
                   to_char((now() AT TIME ZONE 'UTC') - interval '2 minutes', 'HH24:MI'), 'UTC',
                   (now() AT TIME ZONE 'UTC') - interval '1 day')"#
    ))
    .await;
}

/// A new guild owed its quote, and the wait until it is posted: proof that
/// the schedulers kept ticking.
async fn serve_a_new_guild(q: &Quotebot, why: &str) {
    let (g, c) = (id(), id());
    owed_guild(q, g, c).await;
    let d = q.discord.clone();
    eventually(Duration::from_secs(20), || {
        (posts_to(&d, c) >= 1).then_some(())
    })
    .await
    .unwrap_or_else(|| panic!("{why}"));
    assert_eq!(posts_to(&d, c), 1);
}

fn posts_to(d: &FakeDiscordBot, channel: u64) -> usize {
    d.messages().iter().filter(|m| m.channel == channel).count()
}

#[tokio::test]
async fn a_due_quote_is_posted_once_across_two_processes_and_a_restart() {
    let q = migrated_with_quotes().await;
    let (ga, ca) = (id(), id());
    owed_guild(&q, ga, ca).await;
    let first = q.start(1).await;
    let second = q.start(2).await;
    let d = q.discord.clone();
    eventually(Duration::from_secs(20), || {
        (posts_to(&d, ca) >= 1).then_some(())
    })
    .await
    .expect("the missed quote is posted on start");
    // Later guilds prove both processes kept ticking meanwhile.
    for _ in 0..3 {
        serve_a_new_guild(&q, "a later guild is served").await;
    }
    assert_eq!(posts_to(&d, ca), 1, "posted twice");
    let body = d
        .messages()
        .into_iter()
        .find(|m| m.channel == ca)
        .unwrap()
        .body;
    assert!(
        body["content"].as_str().unwrap().starts_with("> "),
        "{body}"
    );
    first.stop().await;
    second.stop().await;
    let _again = q.start(1).await;
    serve_a_new_guild(&q, "served after the restart").await;
    assert_eq!(posts_to(&d, ca), 1, "posted again after a restart");
}

#[tokio::test]
async fn a_guild_id_above_postgresqls_bigint_does_not_stop_the_others_quotes() {
    let q = migrated_with_quotes().await;
    // A snowflake is a u64; reconcile can import one above i64::MAX.
    let huge = u64::MAX;
    owed_guild(&q, huge, id()).await;
    let _bot = q.start(1).await;
    serve_a_new_guild(&q, "the schedule kept ticking").await;
    let sent = q
        .scalar(&format!(
            r#"SELECT count(*) FROM "Guild" WHERE "guildId" = '{huge}' AND "lastMotivationSentAt" IS NOT NULL"#
        ))
        .await;
    assert_eq!(
        sent, 1,
        "the huge id is in shard 0 of 1 and got its quote too"
    );
}

#[tokio::test]
async fn a_channel_the_bot_cannot_post_to_is_skipped_not_retried() {
    let q = migrated_with_quotes().await;
    let (gf, cf) = (id(), id());
    q.discord.forbid_channel(cf);
    owed_guild(&q, gf, cf).await;
    let _bot = q.start(1).await;
    let d = q.discord.clone();
    eventually(Duration::from_secs(20), || {
        (!d.refused_posts().is_empty()).then_some(())
    })
    .await
    .expect("tried once");
    for _ in 0..3 {
        serve_a_new_guild(&q, "others are served").await;
    }
    assert_eq!(d.refused_posts(), [cf], "retried a forbidden channel");
}

#[tokio::test]
async fn presence_rotates_through_the_platform_activities() {
    let q = migrated_with_quotes().await;
    q.exec(r#"INSERT INTO "PlatformActivity" ("activity", "type") VALUES ('with quotes', 'Playing'), ('to wisdom', 'Listening')"#)
        .await;
    let _bot = q.start(1).await;
    let d = q.discord.clone();
    let names = eventually(Duration::from_secs(20), || {
        let names: Vec<String> = d
            .presences()
            .iter()
            .filter_map(|p| p["activities"][0]["name"].as_str().map(str::to_owned))
            .collect();
        (names.iter().any(|n| n == "with quotes") && names.iter().any(|n| n == "to wisdom"))
            .then_some(names)
    })
    .await;
    assert!(names.is_some(), "{:?}", d.presences());
}

#[tokio::test]
async fn user_text_the_bot_posts_pings_nobody() {
    let q = migrated_with_quotes().await;
    let (g, channel) = (id(), id());
    q.discord.add_guild(g);
    owed_guild(&q, g, channel).await;
    let _bot = q.start(1).await;
    let someone = member(g, 0);
    let (_, _) = ask(&q.discord, &someone, "quote", json!([])).await;
    let pings = json!([
        {"name": "quote", "type": 3, "value": "@everyone @here <@&4242> read this"},
        {"name": "author", "type": 3, "value": "<@1234>"},
    ]);
    let (text, _) = ask(&q.discord, &someone, "suggest", pings).await;
    assert!(text.contains("waits for review"), "{text}");
    let d = q.discord.clone();
    eventually(Duration::from_secs(20), || {
        let m = d.messages();
        (m.iter().any(|m| m.channel == MAIN_CHANNEL) && m.iter().any(|m| m.channel == channel))
            .then_some(())
    })
    .await
    .expect("the announcement and the scheduled quote were posted");
    let none = json!({"parse": []});
    for m in q.discord.messages() {
        assert_eq!(m.body["allowed_mentions"], none, "{}", m.body);
    }
    let callbacks = q.discord.callbacks();
    assert!(!callbacks.is_empty());
    for (_, b) in callbacks {
        assert_eq!(b["data"]["allowed_mentions"], none, "{b}");
    }
}
