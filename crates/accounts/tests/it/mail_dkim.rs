//! Mail that authenticates and reads right: from the app's name at
//! `KEEL_MAIL_FROM`'s address, signed with DKIM (a verifier no one here
//! wrote, dkimpy, checks the signature against the public key), and the
//! signature covers From, Subject and the one-click unsubscribe headers
//! (changing any of them breaks it).

use std::path::{Path, PathBuf};
use std::time::Duration;

use keel_testkit::{FakeSmtp, eventually};

use crate::helpers::Api;

fn keys() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testkit/keys")
}

/// dkimpy's verdict on `message`, with its reasons.
fn verify(message: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("message.eml");
    std::fs::write(&path, message).unwrap();
    let python = keel_testkit::tools_dir().join("checkers/bin/python");
    assert!(python.exists(), "scripts/test installs the checkers");
    let out = std::process::Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../testkit/checkers/dkim_verify.py"))
        .arg(&path)
        .arg(keys().join("rsa1.pub.pem"))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success() && said.contains("pass"), said)
}

/// The value of `name` in `message`'s header block, unfolded.
fn header(message: &str, name: &str) -> Option<String> {
    let head = message.split("\r\n\r\n").next()?;
    let mut found: Option<String> = None;
    for line in head.split("\r\n") {
        if line.starts_with([' ', '\t']) {
            if let Some(v) = found.as_mut() {
                v.push_str(line);
            }
        } else if found.is_some() {
            break;
        } else if let Some((n, v)) = line.split_once(':')
            && n.eq_ignore_ascii_case(name)
        {
            found = Some(v.trim().to_owned());
        }
    }
    found
}

#[tokio::test]
async fn the_weekly_mail_is_from_the_app_and_its_dkim_signature_verifies() {
    let smtp = FakeSmtp::start().await;
    // In production KEEL_DKIM_PRIVATE_KEY_FILE names the file.
    let key = std::fs::read_to_string(keys().join("rsa1.pem")).unwrap();
    let api = Api::with(&[
        ("KEEL_SMTP_URL", &smtp.url()),
        ("KEEL_MAIL_FROM", "keel <no-reply@mail.example.com>"),
        ("KEEL_DKIM_DOMAIN", "example.com"),
        ("KEEL_DKIM_SELECTOR", "keel2026"),
        ("KEEL_DKIM_PRIVATE_KEY", &key),
        ("KEEL_ACCOUNTS_WEEKLY_MAIL_CRON", "* * * * * *"),
        ("KEEL_ACCOUNTS_PUBLIC_URL", "http://127.0.0.1:9/accounts"),
        ("KEEL_ACCOUNTS_APP_NAME", "Goalie"),
    ])
    .await;
    let ada = api.register("ada").await;
    api.post("/goals/weekly", Some(&ada.token), &[("title", "run")])
        .await;
    api.sql("UPDATE accounts_users SET email_verified = true WHERE username = 'ada'")
        .await;
    let weekly = eventually(Duration::from_secs(15), || {
        smtp.messages()
            .into_iter()
            .find(|m| m.data.contains("Subject: Your week in Goalie"))
    })
    .await
    .expect("the weekly mail");
    let message = weekly.data;
    assert_eq!(
        header(&message, "From").as_deref(),
        Some("Goalie <no-reply@mail.example.com>")
    );
    assert_eq!(
        header(&message, "Subject").as_deref(),
        Some("Your week in Goalie: 0 of 1 goal done")
    );
    let (ok, said) = verify(&message);
    assert!(ok, "dkimpy: {said}\n{message}");
    assert!(said.contains("keel2026._domainkey.example.com"), "{said}");
    let signature = header(&message, "DKIM-Signature").unwrap();
    let h = signature
        .split(';')
        .find_map(|t| t.trim().strip_prefix("h="))
        .unwrap()
        .replace(char::is_whitespace, "");
    let covered: Vec<&str> = h.split(':').collect();
    for name in [
        "from",
        "to",
        "subject",
        "date",
        "list-unsubscribe",
        "list-unsubscribe-post",
    ] {
        assert!(covered.contains(&name), "{name} is not signed: {h}");
    }
    for name in ["from", "subject", "to"] {
        let times = covered.iter().filter(|n| **n == name).count();
        assert_eq!(times, 2, "{name} is not over-signed: {h}");
    }
    // A second From, Subject or To added on the way breaks it.
    for added in [
        "From: Evil <ceo@evil.example>",
        "Subject: Urgent",
        "To: someone@evil.example",
    ] {
        let bent = format!("{added}\r\n{message}");
        assert!(!verify(&bent).0, "an added {added:?} still verifies");
        // (Appended after the signature, too: header order within a name
        // is from the bottom up.)
        let (sig, rest) = message.split_once("\r\n").unwrap();
        let bent = format!("{sig}\r\n{added}\r\n{rest}");
        assert!(
            !verify(&bent).0,
            "{added:?} after the signature still verifies"
        );
    }
    // Each covered header changed, the signature fails.
    let unsubscribe = header(&message, "List-Unsubscribe").unwrap();
    for (from, to) in [
        ("Goalie <no-reply@", "Goa1ie <no-reply@"),
        ("Subject: Your week", "Subject: Your weak"),
        (unsubscribe.as_str(), "<https://evil.example/unsubscribe>"),
        ("List-Unsubscribe=One-Click", "List-Unsubscribe=One-Clack"),
    ] {
        let bent = message.replacen(from, to, 1);
        assert_ne!(bent, message, "{from}");
        assert!(!verify(&bent).0, "a changed {from:?} still verifies");
    }
    // The registration's verification mail is signed and from the app too.
    let hello = smtp
        .messages()
        .into_iter()
        .find(|m| m.data.contains("Subject: Verify your email address"))
        .expect("the verification mail");
    assert_eq!(
        header(&hello.data, "From").as_deref(),
        Some("Goalie <no-reply@mail.example.com>")
    );
    assert!(verify(&hello.data).0);
}
