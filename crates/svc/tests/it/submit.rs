use keel_svc::domain::settings::SettingsPatch;
use serde_json::json;

use crate::helpers::{FORM, Svc, good};

#[tokio::test]
async fn the_field_list_is_served_privately() {
    let svc = Svc::start().await;
    let r = svc.fields(FORM, Some(&svc.token())).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.headers["cache-control"], "private, no-store");
    assert_eq!(r.body["title"], "Contact");
    let f = &r.body["fields"];
    assert_eq!(f[0]["id"], "name");
    assert_eq!(f[0]["type"], "text");
    assert_eq!(f[0]["required"], true);
    assert_eq!(f[2]["choices"], json!(["sales", "support"]));
}

#[tokio::test]
async fn a_form_not_on_the_allow_list_or_missing_is_404_form_not_found() {
    let svc = Svc::start().await;
    let def = serde_json::from_value(json!({"id": "99", "title": "Hidden", "fields": []})).unwrap();
    keel_svc::domain::site::put_form(&svc.app.platform().db, &def)
        .await
        .unwrap();
    for form in ["99", "77", "12:0f8fad5b-d9cb-469f-a165-70867728950e"] {
        let r = svc.submit_to(form, Some(&svc.token()), good()).await;
        assert_eq!((r.status, r.code()), (404, "form_not_found"), "{form}");
        let r = svc.fields(form, Some(&svc.token())).await;
        assert_eq!((r.status, r.code()), (404, "form_not_found"), "{form}");
    }
    let r = svc.submit_to("abc", Some(&svc.token()), good()).await;
    assert_eq!(
        (r.status, r.code()),
        (404, "rest_no_route"),
        "an id off the pattern matches no route"
    );
    assert_eq!(svc.stored().await, 0);
}

#[tokio::test]
async fn the_allow_list_changes_without_a_restart() {
    let svc = Svc::start().await;
    svc.settings(SettingsPatch {
        forms_allowlist: Some(vec![]),
        ..Default::default()
    })
    .await;
    assert_eq!(svc.submit(Some(&svc.token()), good()).await.status, 404);
    svc.settings(SettingsPatch {
        forms_allowlist: Some(vec![FORM.into()]),
        ..Default::default()
    })
    .await;
    assert_eq!(svc.submit(Some(&svc.token()), good()).await.status, 200);
}

#[tokio::test]
async fn the_rate_limit_answers_429_rate_limited() {
    let svc = Svc::start().await;
    svc.configure(SettingsPatch {
        submission_rate_limit: Some(3),
        ..Default::default()
    })
    .await;
    let token = svc.token();
    for _ in 0..3 {
        assert_eq!(svc.submit(Some(&token), good()).await.status, 200);
    }
    let r = svc.submit(Some(&token), good()).await;
    assert_eq!((r.status, r.code()), (429, "rate_limited"));
    assert!(r.headers.contains_key("retry-after"));
    assert_eq!(svc.stored().await, 3);
}

#[tokio::test]
async fn a_body_over_the_payload_limit_is_413_invalid_fields() {
    let svc = Svc::start().await;
    svc.configure(SettingsPatch {
        payload_limit_bytes: Some(1024),
        ..Default::default()
    })
    .await;
    let mut body = good();
    body["fields"]["note"] = json!("x".repeat(2000));
    let r = svc.submit(Some(&svc.token()), body).await;
    assert_eq!((r.status, r.code()), (413, "invalid_fields"));
    assert_eq!(r.body["data"]["status"], 413);
    assert_eq!(svc.stored().await, 0);
}

#[tokio::test]
async fn fields_must_be_present_and_an_object() {
    let svc = Svc::start().await;
    for body in [
        json!({}),
        json!({"fields": []}),
        json!({"fields": "x"}),
        json!({"fields": {}}),
    ] {
        let r = svc.submit(Some(&svc.token()), body.clone()).await;
        assert_eq!((r.status, r.code()), (400, "missing_fields"), "{body}");
    }
}

#[tokio::test]
async fn invalid_fields_are_400_with_their_ids_in_data() {
    let svc = Svc::start().await;
    let cases = [
        (json!({"email": "ada@example.com"}), vec!["name"]),
        (
            json!({"name": "Ada", "email": "ada@example.com", "bogus": "x"}),
            vec!["bogus"],
        ),
        (
            json!({"name": "Ada", "email": "ada@example.com", "topic": "billing"}),
            vec!["topic"],
        ),
        (
            json!({"name": ["Ada"], "email": "ada@example.com"}),
            vec!["name"],
        ),
        (
            json!({"name": {"first": "Ada"}, "email": "ada@example.com"}),
            vec!["name"],
        ),
        (
            json!({"name": "x".repeat(51), "email": "ada@example.com"}),
            vec!["name"],
        ),
    ];
    for (fields, ids) in cases {
        let r = svc
            .submit(Some(&svc.token()), json!({"fields": fields}))
            .await;
        assert_eq!(
            (r.status, r.code()),
            (400, "invalid_fields"),
            "{fields}: {}",
            r.text
        );
        assert_eq!(r.body["data"]["fields"], json!(ids));
    }
    let r = svc
        .submit(
            Some(&svc.token()),
            json!({"fields": {"name": "Ada", "email": "not-an-email"}}),
        )
        .await;
    assert_eq!((r.status, r.code()), (400, "invalid_email"));
    assert_eq!(r.body["data"]["fields"], json!(["email"]));
    assert_eq!(svc.stored().await, 0);
}

#[tokio::test]
async fn every_field_type_is_checked() {
    let svc = Svc::start().await;
    let def = serde_json::from_value(json!({"id": "5", "title": "All", "fields": [
        {"id": "n", "label": "N", "type": "number"},
        {"id": "u", "label": "U", "type": "url"},
        {"id": "t", "label": "T", "type": "tel"},
        {"id": "d", "label": "D", "type": "date"},
        {"id": "r", "label": "R", "type": "radio", "choices": ["a", "b"]},
        {"id": "c", "label": "C", "type": "checkbox", "choices": ["x", "y"]},
        {"id": "h", "label": "H", "type": "hidden"},
        {"id": "ta", "label": "TA", "type": "textarea", "max_length": 5}
    ]}))
    .unwrap();
    keel_svc::domain::site::put_form(&svc.app.platform().db, &def)
        .await
        .unwrap();
    svc.settings(SettingsPatch {
        forms_allowlist: Some(vec!["5".into()]),
        ..Default::default()
    })
    .await;
    let ok = json!({"n": "3.5", "u": "https://example.com/x", "t": "+1 (555) 010-0199", "d": "2026-12-31", "r": "b", "c": "x,y", "h": "z", "ta": "short"});
    let r = svc
        .submit_to("5", Some(&svc.token()), json!({"fields": ok}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let bad = [
        ("n", json!("three")),
        ("u", json!("not a url")),
        ("t", json!("call me")),
        ("d", json!("2026-02-30")),
        ("r", json!("c")),
        ("c", json!("x,z")),
        ("ta", json!("too long")),
    ];
    for (field, value) in bad {
        let r = svc
            .submit_to("5", Some(&svc.token()), json!({"fields": {field: value}}))
            .await;
        assert_eq!((r.status, r.code()), (400, "invalid_fields"), "{field}");
        assert_eq!(r.body["data"]["fields"], json!([field]));
    }
}
