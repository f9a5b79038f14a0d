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
