//! The host site's REST convention: every route that takes fields accepts
//! them as JSON, as a urlencoded form, or as multipart form fields, with the
//! same checks and the same errors.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::multipart::Form;
use serde_json::json;

use crate::helpers::{FORM, Svc, finish};
use crate::push_kit::token;

#[tokio::test]
async fn a_device_registers_with_a_urlencoded_form_or_multipart_fields() {
    let svc = Svc::start().await;
    let t = svc.token();
    let r = svc
        .app
        .http
        .post(svc.url("/register"))
        .header("X-Vendor-AppCheck", &t)
        .form(&[
            ("push_token", token(1).as_str()),
            ("device_type", "android"),
            ("timezone", "Europe/Berlin"),
            ("user_label", "Ada's phone"),
        ])
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"success": true, "created": true, "active": true})
    );
    let d = svc.device_row(&token(1)).await.unwrap();
    assert_eq!(d.timezone.as_deref(), Some("Europe/Berlin"));
    assert_eq!(d.user_label.as_deref(), Some("Ada's phone"));

    let form = Form::new()
        .text("push_token", token(2))
        .text("device_type", "ios")
        .text("locale", "de-DE");
    let r = svc
        .app
        .http
        .post(svc.url("/register"))
        .header("X-Vendor-AppCheck", &t)
        .multipart(form)
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        svc.device_row(&token(2)).await.unwrap().locale.as_deref(),
        Some("de-DE")
    );
}

#[tokio::test]
async fn form_registrations_get_the_same_errors_as_json_ones() {
    let svc = Svc::start().await;
    let t = svc.token();
    let post = |pairs: Vec<(&'static str, String)>| {
        svc.app
            .http
            .post(svc.url("/register"))
            .header("X-Vendor-AppCheck", &t)
            .form(&pairs)
            .send()
    };
    let r = finish(post(vec![("device_type", "ios".into())]).await.unwrap()).await;
    assert_eq!((r.status, r.code()), (400, "rest_missing_callback_param"));
    assert_eq!(r.body["data"]["params"], json!(["push_token"]));
    let r = finish(
        post(vec![
            ("push_token", token(1)),
            ("device_type", "windows".into()),
        ])
        .await
        .unwrap(),
    )
    .await;
    assert_eq!((r.status, r.code()), (400, "rest_invalid_param"));
    assert!(r.body["data"]["params"]["device_type"].is_string());
    let r = finish(
        post(vec![
            ("push_token", "nope".into()),
            ("device_type", "ios".into()),
        ])
        .await
        .unwrap(),
    )
    .await;
    assert_eq!((r.status, r.code()), (400, "rest_invalid_param"));
    assert!(svc.all_devices().await.is_empty());
}

#[tokio::test]
async fn unregister_and_status_take_the_token_from_a_form_body() {
    let svc = Svc::start().await;
    let a = svc.registered(1).await;
    let r = svc
        .app
        .http
        .delete(svc.url("/register"))
        .form(&[("push_token", &a)])
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = svc
        .app
        .http
        .get(svc.url("/register/status"))
        .form(&[("push_token", &a)])
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!(r.body, json!({"registered": true, "active": false}));
    let r = svc
        .app
        .http
        .delete(svc.url("/register"))
        .multipart(Form::new().text("push_token", token(9)))
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!((r.status, r.code()), (404, "svc_push_device_not_found"));
    let r = svc
        .app
        .http
        .delete(svc.url("/register"))
        .form(&[("other", "x")])
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!((r.status, r.code()), (400, "rest_missing_callback_param"));
}

/// Sends `req` and reads the answer.
async fn answer(req: reqwest::RequestBuilder) -> crate::helpers::Resp {
    finish(req.send().await.unwrap()).await
}

#[tokio::test]
async fn a_submission_comes_as_a_form_with_bracketed_fields_and_the_legacy_token() {
    let svc = Svc::start().await;
    let token = svc.token();
    let submit = || svc.app.http.post(svc.url(&format!("/submit/{FORM}")));
    let r = answer(submit().form(&[
        ("fields[name]", "Ada"),
        ("fields[email]", "ada@example.com"),
        ("fields[topic]", "support"),
        ("app_check_token", token.as_str()),
    ]))
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["success"], true);
    let form = Form::new()
        .text("fields[name]", "Grace")
        .text("fields[email]", "not an address");
    let r = answer(submit().header("X-Vendor-AppCheck", &token).multipart(form)).await;
    assert_eq!((r.status, r.code()), (400, "invalid_email"), "{}", r.text);
    let r = answer(submit().header("X-Vendor-AppCheck", &token).form(&[
        ("fields[name]", "Ada"),
        ("fields[nope]", "x"),
        ("fields[email]", "a@b.co"),
    ]))
    .await;
    assert_eq!((r.status, r.code()), (400, "invalid_fields"), "{}", r.text);
    let r = answer(
        submit()
            .header("X-Vendor-AppCheck", &token)
            .form(&[("name", "Ada")]),
    )
    .await;
    assert_eq!((r.status, r.code()), (400, "missing_fields"), "{}", r.text);
    assert_eq!(svc.stored().await, 1);
}

#[tokio::test]
async fn a_send_comes_as_a_form_with_bracketed_filters() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    let tokens: Vec<String> = futures::future::join_all((0..3).map(|i| svc.registered(i))).await;
    let r = svc
        .app
        .http
        .post(svc.url("/send"))
        .basic_auth(&admin.user, Some(&admin.password))
        .form(&[
            ("title", "Hello"),
            ("body", "World"),
            ("data[screen]", "news"),
            ("target[push_tokens][]", tokens[0].as_str()),
            ("target[push_tokens][]", tokens[2].as_str()),
        ])
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(r.body["recipients"], 2);
    let id = r.body["id"].as_str().unwrap().to_owned();
    svc.wait_sent(&admin, &id, Duration::from_secs(20)).await;
    let delivered = svc.expo.delivered();
    let to: HashSet<String> = delivered.iter().map(|d| d.to.clone()).collect();
    assert_eq!(to, HashSet::from([tokens[0].clone(), tokens[2].clone()]));
    assert_eq!(delivered[0].data, Some(json!({"screen": "news"})));
    let r = svc
        .app
        .http
        .post(svc.url("/send"))
        .basic_auth(&admin.user, Some(&admin.password))
        .form(&[("title", "Hello"), ("body", "World"), ("local_time", "9am")])
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!(
        (r.status, r.code()),
        (400, "rest_invalid_param"),
        "{}",
        r.text
    );
    assert!(
        r.body["data"]["params"]["local_time"].is_string(),
        "{}",
        r.text
    );
    let r = svc
        .app
        .http
        .post(svc.url("/send"))
        .basic_auth(&admin.user, Some(&admin.password))
        .form(&[("title", "Hello")])
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!(
        (r.status, r.code()),
        (400, "rest_missing_callback_param"),
        "{}",
        r.text
    );
    assert_eq!(r.body["data"]["params"], json!(["body"]));
}
