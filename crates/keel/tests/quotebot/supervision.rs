//! Shard supervision with the documented rules: the shard count from Discord
//! (retried, or fatal), one process per shard, respawns up to the death
//! limit, fatal errors, and the stop budgets.

use std::time::{Duration, Instant};

use keel_testkit::discord_bot::Lookup;
use keel_testkit::eventually;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::harness::{KEEL, Quotebot, children};
use keel_testkit::process::command;

fn signal(pid: i32, sig: Signal) {
    let _ = kill(Pid::from_raw(pid), sig);
}

#[tokio::test]
async fn the_shard_count_lookup_retries_5xx_and_429_then_one_process_runs_per_shard() {
    let q = Quotebot::new().await;
    q.discord.set_shards(2);
    q.discord.script_lookups(&[
        Lookup::Status(502),
        Lookup::RateLimited(0.3),
        Lookup::Status(500),
    ]);
    let started = Instant::now();
    let bot = q.start(2).await;
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "retry_after not honoured"
    );
    assert_eq!(q.discord.lookups(), 4);
    let mut shards = q.discord.identifies();
    shards.sort_unstable();
    assert_eq!(shards, [[0, 2], [1, 2]]);
    assert_eq!(bot.shard_pids().len(), 2, "one process per shard");
    let out = eventually(Duration::from_secs(10), || {
        let o = bot.output();
        o.contains("every shard is ready").then_some(o)
    })
    .await;
    assert!(out.is_some(), "{}", bot.output());
}

#[tokio::test]
async fn an_absurd_retry_after_is_waited_for_at_most_the_cap_not_a_panic() {
    let mut q = Quotebot::new().await;
    q.set("KEEL_QUOTEBOT_LOOKUP_MAX_WAIT_MS", "300");
    q.discord.script_lookups(&[Lookup::RateLimited(1e300)]);
    let bot = q.start(1).await;
    assert_eq!(q.discord.lookups(), 2, "{}", bot.output());
    assert!(!bot.output().contains("panicked"), "{}", bot.output());
}

#[tokio::test]
async fn an_invalid_token_stops_the_bot_non_zero_after_the_fatal_wait() {
    let mut q = Quotebot::new().await;
    q.set("CHAT_APPLICATION_BOT_TOKEN", "MTIz.wrong.token");
    q.set("KEEL_QUOTEBOT_FATAL_WAIT_MS", "1500");
    let started = Instant::now();
    let (code, out) = q.run(&[]).await;
    assert_ne!(code, 0, "{out}");
    assert!(started.elapsed() >= Duration::from_millis(1500), "{out}");
    assert_eq!(q.discord.lookups(), 1, "a 401 is not retried");
    assert!(q.discord.identifies().is_empty());
    assert!(!out.contains("MTIz.wrong.token"), "{out}");
}

#[tokio::test]
async fn exhausted_lookups_stop_the_bot_non_zero() {
    let mut q = Quotebot::new().await;
    q.set("KEEL_QUOTEBOT_LOOKUP_ATTEMPTS", "3");
    q.discord.script_lookups(&[Lookup::Status(503); 5]);
    let (code, out) = q.run(&[]).await;
    assert_ne!(code, 0, "{out}");
    assert_eq!(q.discord.lookups(), 3, "{out}");
    assert!(q.discord.identifies().is_empty());
}

#[tokio::test]
async fn an_unreachable_discord_is_retried_then_fatal() {
    let mut q = Quotebot::new().await;
    q.set("KEEL_QUOTEBOT_LOOKUP_ATTEMPTS", "2");
    q.set("KEEL_DISCORD_API_URL", "http://127.0.0.1:9");
    let (code, out) = q.run(&[]).await;
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("retrying"), "{out}");
}

#[tokio::test]
async fn a_fatal_gateway_close_stops_the_bot_non_zero_without_respawning() {
    for code in [4004u16, 4014] {
        let mut q = Quotebot::new().await;
        q.set("KEEL_QUOTEBOT_FATAL_WAIT_MS", "1000");
        q.discord.close_on_identify(Some(code));
        let started = Instant::now();
        let (exit, out) = q.run(&[]).await;
        assert_ne!(exit, 0, "{code}: {out}");
        assert!(started.elapsed() >= Duration::from_millis(1000), "{out}");
        assert!(out.contains("fatal"), "{code}: {out}");
        assert!(!out.contains("respawning"), "{code}: {out}");
    }
}

#[tokio::test]
async fn a_shard_not_ready_within_the_ready_timeout_stops_the_bot_non_zero() {
    let mut q = Quotebot::new().await;
    q.set("KEEL_QUOTEBOT_READY_TIMEOUT_MS", "2000");
    q.set("KEEL_QUOTEBOT_FATAL_WAIT_MS", "500");
    q.discord.hold_identify(true);
    let started = Instant::now();
    let (code, out) = q.run(&[]).await;
    assert_ne!(code, 0, "{out}");
    assert!(started.elapsed() >= Duration::from_millis(2500), "{out}");
    assert!(out.contains("was not ready within"), "{out}");
    assert_eq!(q.discord.identifies().len(), 1, "{out}");
}

#[tokio::test]
async fn a_shard_that_cannot_be_spawned_stops_the_bot_non_zero() {
    let mut q = Quotebot::new().await;
    q.set("KEEL_QUOTEBOT_SHARD_PROGRAM", "/nonexistent/keel");
    q.set("KEEL_QUOTEBOT_FATAL_WAIT_MS", "800");
    let started = Instant::now();
    let (code, out) = q.run(&[]).await;
    assert_ne!(code, 0, "{out}");
    assert!(started.elapsed() >= Duration::from_millis(800), "{out}");
}

#[tokio::test]
async fn a_dead_shard_is_respawned_until_the_death_limit() {
    let mut q = Quotebot::new().await;
    q.set("KEEL_QUOTEBOT_DEATH_LIMIT", "3");
    let mut bot = q.start(1).await;
    for deaths in 1..=2 {
        let pids = bot.shard_pids();
        assert_eq!(pids.len(), 1);
        signal(pids[0], Signal::SIGKILL);
        let d = q.discord.clone();
        eventually(Duration::from_secs(30), || {
            (d.identifies().len() == deaths + 1 && d.sessions().len() == 1).then_some(())
        })
        .await
        .unwrap_or_else(|| panic!("not respawned after death {deaths}: {}", bot.output()));
    }
    let pids = bot.shard_pids();
    signal(pids[0], Signal::SIGKILL);
    let status = bot.p.wait(Duration::from_secs(30)).await;
    assert!(!status.success(), "{}", bot.output());
    assert!(bot.output().contains("not respawning"), "{}", bot.output());
    assert_eq!(q.discord.identifies().len(), 3);
}

#[tokio::test]
async fn a_reconnectable_close_is_handled_inside_the_shard() {
    let q = Quotebot::new().await;
    let bot = q.start(1).await;
    let pids = bot.shard_pids();
    q.discord.close_sessions(4000);
    let d = q.discord.clone();
    eventually(Duration::from_secs(30), || {
        (d.sessions().len() == 1).then_some(())
    })
    .await
    .expect("the shard reconnected");
    assert_eq!(
        bot.shard_pids(),
        pids,
        "no respawn for a reconnectable close"
    );
}

#[tokio::test]
async fn sigterm_closes_every_shard_and_exits_zero() {
    let q = Quotebot::new().await;
    q.discord.set_shards(2);
    let mut bot = q.start(2).await;
    let started = Instant::now();
    bot.p.signal(Signal::SIGTERM);
    let status = bot.p.wait(Duration::from_secs(10)).await;
    assert!(status.success(), "{}", bot.output());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}: {}",
        started.elapsed(),
        bot.output()
    );
    let d = q.discord.clone();
    eventually(Duration::from_secs(5), || {
        d.sessions().is_empty().then_some(())
    })
    .await
    .expect("sessions closed");
}

#[tokio::test]
async fn a_shard_whose_close_is_never_answered_ends_itself_at_the_shard_watchdog() {
    let q = Quotebot::new().await;
    q.discord.ignore_close(true);
    let mut bot = q.start(1).await;
    let started = Instant::now();
    bot.p.signal(Signal::SIGTERM);
    let status = bot.p.wait(Duration::from_secs(10)).await;
    let took = started.elapsed();
    assert!(status.success(), "{}", bot.output());
    // Shard watchdog 2 s, kill timeout 2.5 s (harness).
    assert!(took >= Duration::from_millis(1900), "took {took:?}");
    assert!(
        took < Duration::from_millis(2500),
        "took {took:?}: {}",
        bot.output()
    );
    assert!(
        bot.output().contains("a shard: still running"),
        "{}",
        bot.output()
    );
    assert!(!bot.output().contains("killing it"), "{}", bot.output());
}

#[tokio::test]
async fn a_shard_stuck_at_stop_is_killed_at_the_kill_timeout() {
    let q = Quotebot::new().await;
    let mut bot = q.start(1).await;
    let shard = bot.shard_pids()[0];
    signal(shard, Signal::SIGSTOP);
    let started = Instant::now();
    bot.p.signal(Signal::SIGTERM);
    let status = bot.p.wait(Duration::from_secs(10)).await;
    let took = started.elapsed();
    assert!(status.success(), "{}", bot.output());
    // kill timeout 2.5 s, parent watchdog 4 s (harness).
    assert!(took >= Duration::from_millis(2400), "took {took:?}");
    assert!(took < Duration::from_millis(4000), "took {took:?}");
    assert!(bot.output().contains("killing it"), "{}", bot.output());
    assert!(!std::path::Path::new(&format!("/proc/{shard}")).exists() || zombie(shard));
}

fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.contains(") Z "))
        .unwrap_or(true)
}

#[tokio::test]
async fn the_parent_watchdog_ends_the_manager_whatever_happens() {
    let mut q = Quotebot::new().await;
    q.set("KEEL_QUOTEBOT_KILL_TIMEOUT_MS", "20000");
    q.set("KEEL_QUOTEBOT_PARENT_WATCHDOG_MS", "1500");
    let mut bot = q.start(1).await;
    let shard = bot.shard_pids()[0];
    signal(shard, Signal::SIGSTOP);
    let started = Instant::now();
    bot.p.signal(Signal::SIGTERM);
    let status = bot.p.wait(Duration::from_secs(10)).await;
    let took = started.elapsed();
    signal(shard, Signal::SIGKILL);
    assert!(!status.success(), "{}", bot.output());
    assert!(took >= Duration::from_millis(1400), "took {took:?}");
    assert!(took < Duration::from_millis(5000), "took {took:?}");
}

#[tokio::test]
async fn a_shard_ends_itself_when_its_manager_is_killed_even_with_its_output_gone() {
    let q = Quotebot::new().await;
    let mut cmd = command(KEEL, q.dir.path(), &q.env, &["quotebot"]);
    cmd.stdout(std::process::Stdio::null());
    let mut manager = cmd.spawn().unwrap();
    // Nobody reads the output any more: every write to stderr fails.
    drop(manager.stderr.take());
    let d = q.discord.clone();
    eventually(Duration::from_secs(60), || {
        (!d.sessions().is_empty()).then_some(())
    })
    .await
    .expect("a shard session");
    let pid = i32::try_from(manager.id().unwrap()).unwrap();
    let shard = eventually(Duration::from_secs(10), || children(pid).first().copied())
        .await
        .expect("a shard process");
    // Nor is the shard's close answered (Discord gone as well).
    q.discord.ignore_close(true);
    manager.kill().await.unwrap();
    // Orphan check every 0.5 s, then the shard watchdog (2 s here).
    let gone = || !std::path::Path::new(&format!("/proc/{shard}")).exists() || zombie(shard);
    let ended = eventually(Duration::from_secs(15), || gone().then_some(())).await;
    if ended.is_none() {
        signal(shard, Signal::SIGKILL);
    }
    assert!(ended.is_some(), "the orphaned shard {shard} lives on");
}

#[tokio::test]
async fn a_shard_respawned_while_starting_gets_a_fresh_ready_deadline() {
    let mut q = Quotebot::new().await;
    q.set("KEEL_QUOTEBOT_READY_TIMEOUT_MS", "6000");
    q.discord.hold_identify(true);
    let bot = q.spawn(&[]);
    let d = q.discord.clone();
    eventually(Duration::from_secs(20), || {
        (!d.identifies().is_empty()).then_some(())
    })
    .await
    .expect("the first shard identified");
    let first = Instant::now();
    // A fixed wait: what is tested is a deadline, so this test waits for
    // the clock: the
    // shard dies half-way through its 6 s and is respawned...
    tokio::time::sleep_until((first + Duration::from_millis(2500)).into()).await;
    let pids = children(bot.pid());
    assert_eq!(pids.len(), 1, "{}", bot.stderr());
    signal(pids[0], Signal::SIGKILL);
    eventually(Duration::from_secs(20), || {
        (d.identifies().len() == 2).then_some(())
    })
    .await
    .expect("respawned");
    // A fixed wait: the gateway answers after the first process's deadline, well
    // within the respawned one's.
    tokio::time::sleep_until((first + Duration::from_millis(6300)).into()).await;
    q.discord.hold_identify(false);
    eventually(Duration::from_secs(20), || {
        (d.sessions().len() == 1).then_some(())
    })
    .await
    .unwrap_or_else(|| panic!("the respawned shard never got ready: {}", bot.stderr()));
    assert!(
        !bot.stderr().contains("was not ready within"),
        "{}",
        bot.stderr()
    );
}
