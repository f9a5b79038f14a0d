//! SQLite's disk full under write load: writes answer 507 naming the
//! cause, nothing is corrupted, every acknowledged write is kept, and
//! writes succeed again once space returns, without a restart.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use keel_platform::sea_orm::{ConnectionTrait, Statement};

use crate::harness::{Stack, account};
use crate::load::{Kind, Load, Targets, tally};
use crate::stored;

const KINDS: [Kind; 2] = [Kind::Event, Kind::Goal];

/// A small tmpfs, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(at: &Path, size: &str) -> Self {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "could not mount a tmpfs at {} (the fault suite runs as root)",
            at.display()
        );
        Self(at.to_owned())
    }

    /// Fills what is left with a file; its path.
    fn fill(&self) -> PathBuf {
        let ballast = self.0.join("ballast");
        let mut f = std::fs::File::create(&ballast).unwrap();
        let chunk = vec![0u8; 64 * 1024];
        while f.write_all(&chunk).is_ok() {}
        let one = [0u8; 1];
        while f.write_all(&one).is_ok() {}
        ballast
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[tokio::test]
async fn a_full_disk_refuses_writes_with_507_and_recovers_when_space_returns() {
    if keel_testkit::db::postgres_url().is_some() {
        println!("SQLite disk full: runs in the SQLite pass");
        return;
    }
    let stack = Stack::start().await;
    let disk = SmallDisk::mount(&stack.dir.path().join("small"), "16m");
    let file = disk.0.join("keel.db");
    let env = [
        ("KEEL_DATA_DIR", disk.0.display().to_string()),
        ("DATABASE_URL", format!("sqlite://{}", file.display())),
    ];
    let mut keel = stack.serve(&["accounts", "usage-alerts"], &env).await;
    let token = account(keel.url("accounts"), "faultdisk").await;
    let targets = Arc::new(Targets {
        usage_alerts: keel.url("usage-alerts").to_owned(),
        accounts: keel.url("accounts").to_owned(),
        svc: String::new(),
        channel_api: String::new(),
        account_token: token.clone(),
        appcheck: String::new(),
        stream: stack.stream.clone(),
    });
    let load = Load::start(targets, &KINDS, 2);
    load.until(
        Duration::from_secs(30),
        "writes before the disk fills",
        |a| KINDS.iter().all(|k| tally(a, *k).acknowledged >= 20),
    )
    .await;
    let full = Instant::now();
    let ballast = disk.fill();
    // The disk stays full until every kind of write has been refused for
    // at least a second.
    load.until(
        Duration::from_secs(30),
        "507s while the disk is full",
        |a| {
            KINDS.iter().all(|k| {
                let refused: Vec<_> = a
                    .iter()
                    .filter(|x| x.kind == *k && x.at > full && x.status == 507)
                    .map(|x| x.at)
                    .collect();
                refused
                    .first()
                    .zip(refused.last())
                    .is_some_and(|(first, last)| {
                        last.duration_since(*first) >= Duration::from_secs(1)
                    })
            })
        },
    )
    .await;
    // What a client is told.
    let refused = reqwest::Client::new()
        .post(format!("{}/goals/weekly", keel.url("accounts")))
        .bearer_auth(&token)
        .form(&[("title", "one more")])
        .send()
        .await
        .unwrap();
    let refused = (
        refused.status().as_u16(),
        refused.headers().contains_key("retry-after"),
        refused.json::<serde_json::Value>().await.unwrap(),
    );
    std::fs::remove_file(&ballast).unwrap();
    let freed = Instant::now();
    load.until(
        Duration::from_secs(30),
        "writes after space returned",
        |a| {
            KINDS.iter().all(|k| {
                a.iter()
                    .any(|x| x.kind == *k && x.at > freed && x.status == 200)
            })
        },
    )
    .await;
    let recovered_in = freed.elapsed();
    let answers = load.stop().await;
    keel.kill().await;

    let p = crate::harness::platform_at(&stack.dir, &format!("sqlite://{}", file.display())).await;
    let check =
        p.db.read()
            .query_one_raw(Statement::from_string(
                p.db.backend(),
                "PRAGMA integrity_check",
            ))
            .await
            .unwrap()
            .unwrap()
            .try_get_by_index::<String>(0)
            .unwrap();
    println!(
        "SQLite on a 16 MiB tmpfs filled under 2 clients per write; a refused write: {refused:?}; writes acknowledged again {recovered_in:?} after space returned; integrity_check: {check}"
    );
    for kind in KINDS {
        let t = tally(&answers, kind);
        let lost = stored::lost(&p, &answers, kind).await;
        println!(
            "  {kind:?}: sent {}, acknowledged {}, 507/503 {}, other {} {:?}, lost {}",
            t.sent,
            t.acknowledged,
            t.unavailable,
            t.other,
            t.others,
            lost.len()
        );
        assert!(lost.is_empty(), "{kind:?}: {lost:?}");
        assert_eq!(t.other, 0, "{kind:?}: answers other than 2xx, 503 or 507");
    }
    assert_eq!(check, "ok");
    assert_eq!(refused.0, 507, "{refused:?}");
    assert!(refused.1, "Retry-After");
    assert_eq!(refused.2["code"], "INSUFFICIENT_STORAGE", "{refused:?}");
}
