//! Configuration comes from the environment only; a missing or invalid
//! value stops the process at once, naming the variable, never printing
//! the token.

use crate::harness::{Quotebot, TOKEN};

#[tokio::test]
async fn each_missing_required_variable_stops_the_start_naming_it() {
    for var in [
        "DATABASE_URL",
        "REDIS_URL",
        "CHAT_APPLICATION_BOT_TOKEN",
        "OWNER_ID",
        "MAIN_CHANNEL_ID",
    ] {
        let mut q = Quotebot::new().await;
        q.unset(var);
        let (code, out) = q.run(&[]).await;
        assert_ne!(code, 0, "{var}: {out}");
        assert!(out.contains(var), "{var} not named: {out}");
        assert!(!out.contains(TOKEN), "the token was printed: {out}");
        assert_eq!(q.discord.lookups(), 0, "{var}: Discord was called");
    }
}

#[tokio::test]
async fn invalid_values_are_named_and_the_token_never_printed() {
    for (var, value) in [
        ("DATABASE_URL", "sqlite://quotes.db"),
        ("OWNER_ID", "not-a-snowflake"),
        ("MAIN_CHANNEL_ID", "-5"),
        ("PORT", "http"),
        ("HOST", "not an address"),
        ("KEEL_DISCORD_API_URL", "discord"),
        ("REDIS_URL", "postgres://nope"),
    ] {
        let mut q = Quotebot::new().await;
        q.set(var, value);
        let (code, out) = q.run(&[]).await;
        assert_ne!(code, 0, "{var}={value}: {out}");
        assert!(out.contains(var), "{var} not named: {out}");
        assert!(!out.contains(TOKEN), "the token was printed: {out}");
    }
}

#[tokio::test]
async fn an_environment_file_is_not_read() {
    let mut q = Quotebot::new().await;
    q.unset("OWNER_ID");
    std::fs::write(q.dir.path().join(".env"), "OWNER_ID=1234\n").unwrap();
    let (code, out) = q.run(&["migrate"]).await;
    // `migrate` needs only the database; the bot itself needs OWNER_ID.
    assert_eq!(code, 0, "{out}");
    let (code, out) = q.run(&[]).await;
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("OWNER_ID"), "{out}");
}

#[tokio::test]
async fn a_shard_id_outside_its_total_is_refused_not_a_panic() {
    let q = Quotebot::new().await;
    for (id, total) in [("2", "2"), ("0", "0")] {
        let (code, out) = q.run(&["shard", "--id", id, "--total", total]).await;
        assert_eq!(code, 1, "--id {id} --total {total}: {out}");
        assert!(out.contains("must be below --total"), "{out}");
        assert!(!out.contains("panicked"), "{out}");
    }
}
