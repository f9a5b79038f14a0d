//! `Idempotency-Key` on POST /send: a retry answers the first answer and
//! sends nothing more; another request under the same key is 422; each
//! admin's keys are their own; concurrent retries make one send.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Resp, Svc, finish};
use crate::push_kit::{Admin, device};

const WITHIN: Duration = Duration::from_secs(20);

async fn send_keyed(svc: &Svc, admin: &Admin, key: &str, body: &Value) -> Resp {
    let r = svc
        .app
        .http
        .request(Method::POST, svc.url("/send"))
        .basic_auth(&admin.user, Some(&admin.password))
        .header("Idempotency-Key", key)
        .json(body)
        .send()
        .await
        .unwrap();
    finish(r).await
}

async fn sends(svc: &Svc) -> u64 {
    use keel_platform::sea_orm::{EntityTrait, PaginatorTrait};
    keel_svc::entity::push_send::Entity::find()
        .count(svc.app.platform().db.read())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_retry_with_the_same_key_answers_the_first_answer_and_sends_nothing_more() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..3).map(device)).await;
    let body = json!({"title": "Once", "body": "only", "data": {"b": 1, "a": 2}});
    let first = send_keyed(&svc, &admin, "8e03978e-40d5-43e8-bc93-6894a57f9324", &body).await;
    assert_eq!(first.status, 202, "{}", first.text);
    assert!(!first.headers.contains_key("idempotent-replayed"));
    let id = first.body["id"].as_str().unwrap().to_owned();
    svc.wait_sent(&admin, &id, WITHIN).await;
    // The same request again, its data's keys in another order: the same
    // answer (the send's first status, not "sent"), nothing sent again.
    let again = json!({"body": "only", "data": {"a": 2, "b": 1}, "title": "Once"});
    let retry = send_keyed(&svc, &admin, "8e03978e-40d5-43e8-bc93-6894a57f9324", &again).await;
    assert_eq!(retry.status, 202, "{}", retry.text);
    assert_eq!(retry.body, first.body);
    assert_eq!(retry.headers["idempotent-replayed"], "true");
    svc.app.jobs_settled().await;
    assert_eq!(svc.expo.delivered().len(), 3, "each device once");
    assert_eq!(sends(&svc).await, 1);
    // Another key is another send.
    let other = send_keyed(&svc, &admin, "another-key", &body).await;
    assert_eq!(other.status, 202, "{}", other.text);
    assert_ne!(other.body["id"], first.body["id"]);
}

#[tokio::test]
async fn the_same_key_with_another_request_is_422_and_sends_nothing() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..2).map(device)).await;
    let r = send_keyed(&svc, &admin, "k1", &json!({"title": "A", "body": "a"})).await;
    assert_eq!(r.status, 202, "{}", r.text);
    for changed in [
        json!({"title": "A", "body": "b"}),
        json!({"title": "A", "body": "a", "target": {"device_type": "ios"}}),
        json!({"title": "A", "body": "a", "send_at": "2099-01-01T00:00:00Z"}),
    ] {
        let r = send_keyed(&svc, &admin, "k1", &changed).await;
        assert_eq!(
            (r.status, r.body["code"].as_str()),
            (422, Some("svc_push_idempotency_key_reused")),
            "{changed}: {}",
            r.text
        );
    }
    assert_eq!(sends(&svc).await, 1);
}

#[tokio::test]
async fn each_admins_keys_are_their_own_and_a_bad_key_is_400() {
    let svc = Svc::start().await;
    let ada = svc.push_admin().await;
    let (_, password) = svc.admin("second").await;
    let bob = Admin {
        user: "second".into(),
        password,
    };
    svc.registered(0).await;
    let body = json!({"title": "Hi", "body": "there"});
    let a = send_keyed(&svc, &ada, "shared-key", &body).await;
    let b = send_keyed(&svc, &bob, "shared-key", &body).await;
    assert_eq!((a.status, b.status), (202, 202), "{} {}", a.text, b.text);
    assert_ne!(a.body["id"], b.body["id"]);
    for bad in ["", "with space", &"k".repeat(256)] {
        let r = send_keyed(&svc, &ada, bad, &body).await;
        assert_eq!(
            (r.status, r.body["code"].as_str()),
            (400, Some("rest_invalid_param")),
            "{bad:?}: {}",
            r.text
        );
        assert!(r.text.contains("Idempotency-Key"), "{}", r.text);
    }
    assert_eq!(sends(&svc).await, 2);
}

#[tokio::test]
async fn concurrent_retries_of_one_key_make_one_send() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..5).map(device)).await;
    let body = json!({"title": "Race", "body": "one"});
    let tries = (0..8).map(|_| send_keyed(&svc, &admin, "race-key", &body));
    let answers = futures::future::join_all(tries).await;
    for a in &answers {
        assert_eq!(a.status, 202, "{}", a.text);
        assert_eq!(a.body["id"], answers[0].body["id"]);
    }
    assert_eq!(
        answers
            .iter()
            .filter(|a| !a.headers.contains_key("idempotent-replayed"))
            .count(),
        1,
        "one request made the send"
    );
    assert_eq!(sends(&svc).await, 1);
    let id = answers[0].body["id"].as_str().unwrap().to_owned();
    svc.wait_sent(&admin, &id, WITHIN).await;
    svc.app.jobs_settled().await;
    assert_eq!(svc.expo.delivered().len(), 5);
}

#[tokio::test]
async fn expired_keys_are_forgotten_by_the_hourly_purge_whoever_made_them() {
    use keel_platform::sea_orm::sea_query::Expr;
    use keel_platform::sea_orm::{EntityTrait, PaginatorTrait, QueryFilter};
    use keel_svc::entity::push_idempotency_key as key;
    // Every second here, so the test waits for the tick, not the hour.
    let svc = Svc::with(&[("KEEL_SVC_IDEMPOTENCY_PURGE_CRON", "* * * * * *".into())]).await;
    let admin = svc.push_admin().await;
    svc.registered(0).await;
    let body = json!({"title": "Kept", "body": "a day"});
    for k in ["old-key", "new-key"] {
        assert_eq!(send_keyed(&svc, &admin, k, &body).await.status, 202);
    }
    let db = &svc.app.platform().db;
    let yesterday = chrono::Utc::now() - chrono::Duration::hours(25);
    key::Entity::update_many()
        .col_expr(key::Column::CreatedAt, Expr::value(yesterday))
        .filter(keel_platform::sea_orm::ColumnTrait::eq(
            &key::Column::IdempotencyKey,
            "old-key",
        ))
        .exec(db.write())
        .await
        .unwrap();
    let purged = keel_testkit::eventually_async(WITHIN, || async {
        let left = key::Entity::find().count(db.read()).await.unwrap();
        (left == 1).then_some(())
    })
    .await;
    assert!(purged.is_some(), "the expired key is still kept");
    let kept = key::Entity::find().all(db.read()).await.unwrap();
    assert_eq!(kept[0].idempotency_key, "new-key", "the day-old one only");
}
