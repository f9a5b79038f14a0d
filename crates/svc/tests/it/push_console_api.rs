//! The routes the admin console reads besides POST /send: the list of
//! sends (GET /sends) and the count of recipients a target reaches before
//! anything is sent (POST /recipients/count).

use keel_platform::sea_orm::Set;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::Svc;
use crate::push_kit::{Admin, device, token};

async fn count(svc: &Svc, admin: &Admin, body: Value) -> crate::helpers::Resp {
    svc.admin_call(Method::POST, "/recipients/count", admin.auth(), Some(body))
        .await
}

#[tokio::test]
async fn sends_are_listed_newest_first_a_page_at_a_time() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..2).map(device)).await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let at = format!("2099-01-0{}T00:00:00Z", n + 1);
        ids.push(
            svc.sent(
                &admin,
                json!({"title": format!("send {n}"), "body": "b", "send_at": at}),
            )
            .await,
        );
    }
    let r = svc
        .admin_call(Method::GET, "/sends?per_page=2", admin.auth(), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let header = |name: &str| {
        r.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    assert_eq!(
        (header("x-wp-total"), header("x-wp-totalpages")),
        (Some("3".into()), Some("2".into()))
    );
    let listed: Vec<&str> = r.body["sends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [ids[2].as_str(), ids[1].as_str()], "newest first");
    assert_eq!(
        (r.body["total"].clone(), r.body["page"].clone()),
        (json!(3), json!(1))
    );
    let first = &r.body["sends"][0];
    let one = svc.send_view(&admin, &ids[2]).await;
    assert_eq!(*first, one.body, "each as GET /send/{{id}} shows it");
    assert_eq!(first["status"], "scheduled");
    assert_eq!(first["recipients"], 2);

    let r = svc
        .admin_call(Method::GET, "/sends?per_page=2&page=2", admin.auth(), None)
        .await;
    assert_eq!(r.body["sends"].as_array().unwrap().len(), 1);
    assert_eq!(r.body["sends"][0]["id"], ids[0].as_str());
    let r = svc
        .admin_call(Method::GET, "/sends?page=9", admin.auth(), None)
        .await;
    assert_eq!((r.status, r.body["sends"].clone()), (200, json!([])));
}

#[tokio::test]
async fn a_page_out_of_range_is_400_naming_it() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    for q in ["per_page=0", "per_page=101", "page=0", "page=x"] {
        let r = svc
            .admin_call(Method::GET, &format!("/sends?{q}"), admin.auth(), None)
            .await;
        assert_eq!(r.status, 400, "{q}: {}", r.text);
    }
}

#[tokio::test]
async fn the_recipient_count_is_what_a_send_with_the_same_target_reaches() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..6).map(|i| {
        let mut d = device(i);
        if i == 5 {
            d.active = Set(false);
        }
        if i == 4 {
            d.locale = Set(Some("de-DE".into()));
        }
        d
    }))
    .await;
    let cases = [
        (json!({"target": "all"}), 5),
        (json!({"target": null}), 5),
        (json!({"target": {"device_type": "ios"}}), 3),
        (json!({"target": {"device_type": "android"}}), 2),
        (json!({"target": {"locale": "de-DE"}}), 1),
        (
            json!({"target": {"device_type": "android", "locale": "de-DE"}}),
            0,
        ),
        (
            json!({"target": {"push_tokens": [token(0), token(1), token(5)]}}),
            2,
        ),
        (json!({"target": {"app_version": "9.9.9"}}), 0),
    ];
    for (body, expected) in cases {
        let r = count(&svc, &admin, body.clone()).await;
        assert_eq!(r.status, 200, "{body}: {}", r.text);
        assert_eq!(r.body, json!({"recipients": expected}), "{body}");
        let mut send = json!({"title": "t", "body": "b", "send_at": "2099-01-01T00:00:00Z"});
        send["target"] = body["target"].clone();
        let made = svc.send(&admin, send).await;
        if expected == 0 {
            // What would reach no one is refused, scheduled or not.
            assert_eq!(
                made.body["code"], "svc_push_no_recipients",
                "{body}: {}",
                made.text
            );
        } else {
            assert_eq!(made.body["recipients"], expected, "{body}: {}", made.text);
        }
    }
    assert!(svc.expo.delivered().is_empty(), "counting sends nothing");
}

#[tokio::test]
async fn a_bad_target_is_400_naming_the_filter() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    let cases = [
        (json!({"target": {"device_type": "windows"}}), "device_type"),
        (json!({"target": {"colour": "red"}}), "colour"),
        (json!({"target": 7}), "target"),
        (
            json!({"target": {"push_tokens": ["not-a-token"]}}),
            "push_tokens",
        ),
        (json!({"target": "all", "title": "t"}), "title"),
        (json!({}), "target"),
    ];
    for (body, named) in cases {
        let r = count(&svc, &admin, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.text);
        assert!(r.text.contains(named), "{body}: {}", r.text);
    }
}

#[tokio::test]
async fn a_send_shows_its_audience_with_push_tokens_counted_not_listed() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..3).map(device)).await;
    let at = "2099-01-01T00:00:00Z";
    let all = svc
        .sent(&admin, json!({"title": "t", "body": "b", "send_at": at}))
        .await;
    let some = svc
        .sent(
            &admin,
            json!({"title": "t", "body": "b", "send_at": at,
                   "target": {"device_type": "ios", "push_tokens": [token(0), token(1)]}}),
        )
        .await;
    assert_eq!(
        svc.send_view(&admin, &all).await.body["audience"],
        json!({})
    );
    assert_eq!(
        svc.send_view(&admin, &some).await.body["audience"],
        json!({"device_type": "ios", "push_tokens": 2})
    );
}
