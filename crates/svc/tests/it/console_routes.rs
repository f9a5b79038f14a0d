//! What svc's console pages asked of its API besides the push routes and
//! application passwords: the device search (GET /devices) and the audit
//! log's filters. (The pages themselves are the operator console's now.)

use keel_platform::audit::{self, Actor, Entry};
use keel_platform::sea_orm::Set;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{Resp, Svc};
use crate::push_kit::device;

fn tokens(r: &Resp) -> Vec<String> {
    r.body["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["push_token"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn devices_are_searched_by_token_or_label_and_paged_on_the_server() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..30).map(|i| {
        let mut d = device(i);
        if i == 7 {
            d.user_label = Set(Some("Ada's phone".to_owned()));
        }
        d
    }))
    .await;
    let (svc, admin) = (&svc, &admin);
    let get = |q: &str| {
        let path = format!("/devices{q}");
        async move { svc.admin_call(Method::GET, &path, admin.auth(), None).await }
    };

    let r = get("?per_page=10&page=2").await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (r.body["total"].clone(), r.body["total_pages"].clone()),
        (json!(30), json!(3))
    );
    assert_eq!(r.headers["x-wp-total"], "30");
    assert_eq!(r.headers["x-wp-totalpages"], "3");
    let page = tokens(&r);
    assert_eq!(page.len(), 10);
    assert_eq!(page[0], crate::push_kit::token(10), "in push token order");
    assert_eq!(r.body["devices"][0]["device_type"], "ios");
    assert_eq!(r.body["devices"][0]["active"], true);

    let r = get("?search=device00001").await;
    assert_eq!(r.body["total"], 10, "device000010 to 19: {}", r.text);
    let r = get("?search=exponentpushtoken%5Bdevice000003").await;
    assert_eq!(tokens(&r), [crate::push_kit::token(3)], "case is ignored");
    let r = get("?search=ADA").await;
    assert_eq!(
        tokens(&r),
        [crate::push_kit::token(7)],
        "by label, case ignored"
    );
    assert_eq!(r.body["devices"][0]["user_label"], "Ada's phone");
    for literal in ["%25", "_", "%5C"] {
        let r = get(&format!("?search={literal}")).await;
        assert_eq!(
            (r.status, r.body["total"].clone()),
            (200, json!(0)),
            "{literal} is taken literally"
        );
    }
    let r = get("?search=").await;
    assert_eq!(r.body["total"], 30, "an empty search is every device");

    let long = "a".repeat(201);
    for q in [
        format!("?search={long}"),
        "?page=0".into(),
        "?per_page=101".into(),
    ] {
        let r = get(&q).await;
        assert_eq!(
            (r.status, r.code()),
            (400, "rest_invalid_param"),
            "{q}: {}",
            r.text
        );
    }
}

#[tokio::test]
async fn the_audit_log_is_filtered_by_event_and_form() {
    let svc = Svc::start().await;
    let (_, pw) = svc.admin("boss").await;
    let rows = [
        ("a_event", "1"),
        ("a_event", "2"),
        ("b_event", "1"),
        ("b_event", "1"),
    ];
    let db = &svc.app.platform().db;
    for (event, form) in rows {
        let app = Actor {
            name: "app".to_owned(),
            address: None,
        };
        let event: &'static str = Box::leak(event.to_owned().into_boxed_str());
        let entry = Entry::new("svc", event).on(form);
        audit::record_all(db.write(), vec![(app, entry)])
            .await
            .unwrap();
    }
    for (q, total) in [
        ("", 4),
        ("?event=a_event", 2),
        ("?event=b_event&form_id=1", 2),
        ("?form_id=2", 1),
        ("?event=a_event&form_id=2&per_page=1", 1),
        ("?event=none", 0),
        ("?event=&form_id=", 4),
    ] {
        let r = svc
            .admin_call(
                Method::GET,
                &format!("/admin/audit{q}"),
                ("boss", &pw),
                None,
            )
            .await;
        assert_eq!(
            (r.status, r.body["total"].clone()),
            (200, json!(total)),
            "{q}: {}",
            r.text
        );
        assert_eq!(r.headers["x-wp-total"], total.to_string().as_str());
        for e in r.body["entries"].as_array().unwrap() {
            if q.contains("event=a") {
                assert_eq!(e["event"], "a_event");
            }
        }
    }
    let long = "e".repeat(101);
    for q in [format!("?event={long}"), format!("?form_id={long}")] {
        let r = svc
            .admin_call(
                Method::GET,
                &format!("/admin/audit{q}"),
                ("boss", &pw),
                None,
            )
            .await;
        assert_eq!((r.status, r.code()), (400, "rest_invalid_param"), "{q}");
    }
}
