use std::time::Duration;

use keel_platform::jobs::{JobRegistry, Worker};
use keel_platform::mail::{self, Mail};
use keel_testkit::{FakeSmtp, TestPlatform, eventually};
use tokio_util::sync::CancellationToken;

fn run_worker(tp: &TestPlatform) -> CancellationToken {
    let mut registry = JobRegistry::default();
    tp.platform.mailer.register(&mut registry);
    let stop = CancellationToken::new();
    let w = Worker::new(tp.platform.db.clone(), registry, tp.config().jobs.clone());
    tokio::spawn(w.run(stop.clone(), Duration::from_secs(1)));
    stop
}

fn welcome() -> Mail {
    Mail {
        to: "ada@example.com".into(),
        subject: "Welcome, Ada".into(),
        text: "Confirm with this token: abc123\n".into(),
        ..Mail::default()
    }
}

#[tokio::test]
async fn an_enqueued_mail_lands_as_an_eml_file_with_the_right_headers() {
    let tp = TestPlatform::start(&[("KEEL_MAIL_FROM", "Keel <keel@example.org>")]).await;
    let txn = tp.platform.db.begin_write().await.unwrap();
    mail::enqueue(&txn, welcome()).await.unwrap();
    txn.commit().await.unwrap();
    let _stop = run_worker(&tp);
    let dir = tp.data_dir.path().join("mail");
    let mails = eventually(Duration::from_secs(5), || {
        let m = keel_testkit::mail_files(&dir);
        (!m.is_empty()).then_some(m)
    })
    .await
    .expect("a mail file");
    assert_eq!(mails.len(), 1);
    let m = &mails[0];
    assert_eq!(m.from, "keel@example.org");
    assert_eq!(m.to, "ada@example.com");
    assert_eq!(m.subject, "Welcome, Ada");
    assert!(!m.date.is_empty(), "a Date header");
    assert!(m.message_id.ends_with("@example.org"), "{}", m.message_id);
    assert!(m.file.ends_with(".eml"));
    assert!(m.raw.contains("Content-Type: text/plain"), "{}", m.raw);
    assert!(m.body.contains("abc123"));
}

#[tokio::test]
async fn a_mail_enqueued_in_a_rolled_back_transaction_is_never_sent() {
    let tp = TestPlatform::start(&[]).await;
    let txn = tp.platform.db.begin_write().await.unwrap();
    mail::enqueue(&txn, welcome()).await.unwrap();
    txn.rollback().await.unwrap();
    let _stop = run_worker(&tp);
    keel_testkit::jobs_drained(&tp.platform.db).await;
    assert!(keel_testkit::mail_files(&tp.data_dir.path().join("mail")).is_empty());
}

#[tokio::test]
async fn with_smtp_configured_mail_goes_through_smtp_and_temporary_failures_are_retried() {
    let smtp = FakeSmtp::start().await;
    smtp.fail_next(1);
    let url = smtp.url();
    let tp = TestPlatform::start(&[("KEEL_SMTP_URL", url.as_str())]).await;
    mail::enqueue(tp.platform.db.write(), welcome())
        .await
        .unwrap();
    let _stop = run_worker(&tp);
    let got = eventually(Duration::from_secs(10), || {
        let m = smtp.messages();
        (!m.is_empty()).then_some(m)
    })
    .await
    .expect("delivered over SMTP");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].to, ["ada@example.com"]);
    assert!(got[0].data.contains("Subject: Welcome, Ada"));
    assert!(keel_testkit::mail_files(&tp.data_dir.path().join("mail")).is_empty());
}

#[tokio::test]
async fn forgotten_addresses_get_none_of_their_queued_mail_and_others_get_theirs() {
    let tp = TestPlatform::start(&[]).await;
    let to = |addr: &str| Mail {
        to: addr.to_owned(),
        ..welcome()
    };
    let txn = tp.platform.db.begin_write().await.unwrap();
    for addr in [
        "ada@example.com",
        "Ada@Example.com",
        "ada.new@example.com",
        "bob@example.com",
    ] {
        mail::enqueue(&txn, to(addr)).await.unwrap();
    }
    let gone = mail::forget(&txn, &["ada@example.com", "ada.new@example.com"])
        .await
        .unwrap();
    txn.commit().await.unwrap();
    assert_eq!(gone, 3, "addresses match without regard to case");
    let _stop = run_worker(&tp);
    keel_testkit::jobs_drained(&tp.platform.db).await;
    let sent: Vec<_> = keel_testkit::mail_files(&tp.data_dir.path().join("mail"))
        .into_iter()
        .map(|m| m.to)
        .collect();
    assert_eq!(sent, ["bob@example.com"]);
}

#[tokio::test]
async fn a_mail_with_html_and_list_headers_is_multipart_alternative_with_the_headers() {
    let tp = TestPlatform::start(&[]).await;
    let m = Mail {
        html: Some("<p>Confirm with <b>abc123</b></p>".to_owned()),
        headers: vec![
            (
                "List-Unsubscribe".to_owned(),
                "<https://x.example/u/t>".to_owned(),
            ),
            (
                "List-Unsubscribe-Post".to_owned(),
                "List-Unsubscribe=One-Click".to_owned(),
            ),
        ],
        ..welcome()
    };
    mail::enqueue(tp.platform.db.write(), m).await.unwrap();
    let _stop = run_worker(&tp);
    keel_testkit::jobs_drained(&tp.platform.db).await;
    let mails = keel_testkit::mail_files(&tp.data_dir.path().join("mail"));
    let m = &mails[0];
    assert!(m.raw.contains("multipart/alternative"), "{}", m.raw);
    assert!(
        m.body.contains("abc123") && m.html.contains("<b>abc123</b>"),
        "{}",
        m.raw
    );
    assert_eq!(
        m.header("List-Unsubscribe").as_deref(),
        Some("<https://x.example/u/t>")
    );
    assert_eq!(
        m.header("List-Unsubscribe-Post").as_deref(),
        Some("List-Unsubscribe=One-Click")
    );
}
