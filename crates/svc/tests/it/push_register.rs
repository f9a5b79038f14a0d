//! Public push routes: registration, unregistration, status.

use serde_json::json;

use crate::helpers::{Svc, finish};
use crate::push_kit::token;

#[tokio::test]
async fn a_new_token_is_registered_and_active() {
    let svc = Svc::start().await;
    let t = token(1);
    let r = svc
        .register(json!({
            "push_token": t, "device_type": "ios", "device_model": "iPhone 17",
            "os_version": "26.1", "app_version": "2.3.0", "locale": "de-DE",
            "timezone": "Europe/Berlin", "user_label": "Ada's phone"
        }))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"success": true, "created": true, "active": true})
    );
    let s = svc.status_of(&t).await;
    assert_eq!(s.status, 200, "{}", s.text);
    assert_eq!(s.body, json!({"registered": true, "active": true}));
    let d = svc.device_row(&t).await.unwrap();
    assert_eq!(d.device_model.as_deref(), Some("iPhone 17"));
    assert_eq!(d.timezone.as_deref(), Some("Europe/Berlin"));
    assert_eq!(d.app_id, crate::helpers::APP_ID);
}

#[tokio::test]
async fn the_seeds_token_shape_and_both_expo_spellings_are_accepted() {
    let svc = Svc::start().await;
    for t in [
        "ProviderPushToken[opaque-VALUE_42]",
        "ExpoPushToken[abc_DEF-123]",
        "ExponentPushToken[xyz]",
        "FcmPushToken[a:b/c+d=]",
    ] {
        let r = svc
            .register(json!({"push_token": t, "device_type": "android"}))
            .await;
        assert_eq!(r.status, 200, "{t}: {}", r.text);
    }
}

#[tokio::test]
async fn registering_a_known_token_updates_the_record_and_reactivates_it() {
    let svc = Svc::start().await;
    let t = svc.registered(1).await;
    let r = svc
        .app
        .http
        .delete(svc.url("/register"))
        .json(&json!({"push_token": t}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(svc.status_of(&t).await.body["active"], false);
    let registered_at = svc.device_row(&t).await.unwrap().registered_at;
    let r = svc
        .register(json!({"push_token": t, "device_type": "android", "app_version": "9.9"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"success": true, "created": false, "active": true})
    );
    assert_eq!(
        svc.status_of(&t).await.body,
        json!({"registered": true, "active": true})
    );
    let d = svc.device_row(&t).await.unwrap();
    assert_eq!(d.device_type, "android");
    assert_eq!(d.app_version.as_deref(), Some("9.9"));
    assert_eq!(d.inactive_reason, None);
    assert_eq!(
        d.registered_at, registered_at,
        "one device, first seen then"
    );
    assert_eq!(svc.all_devices().await.len(), 1);
}

#[tokio::test]
async fn the_same_token_registered_many_times_at_once_is_created_exactly_once() {
    let svc = Svc::start().await;
    let t = token(7);
    let body = json!({"push_token": t, "device_type": "ios"});
    let answers = futures::future::join_all((0..20).map(|_| svc.register(body.clone()))).await;
    let created = answers
        .iter()
        .inspect(|r| assert_eq!(r.status, 200, "{}", r.text))
        .filter(|r| r.body["created"] == true)
        .count();
    assert_eq!(created, 1, "one of the twenty created the device");
    assert_eq!(svc.all_devices().await.len(), 1);
}

#[tokio::test]
async fn a_missing_required_field_is_400_naming_it() {
    let svc = Svc::start().await;
    let r = svc.register(json!({"device_type": "ios"})).await;
    assert_eq!((r.status, r.code()), (400, "rest_missing_callback_param"));
    assert_eq!(r.body["data"]["params"], json!(["push_token"]));
    assert_eq!(r.body["data"]["status"], 400);
    let r = svc.register(json!({"push_token": token(1)})).await;
    assert_eq!((r.status, r.code()), (400, "rest_missing_callback_param"));
    assert_eq!(r.body["data"]["params"], json!(["device_type"]));
    assert!(svc.all_devices().await.is_empty());
}

#[tokio::test]
async fn an_invalid_field_is_400_naming_it_and_nothing_is_written() {
    let svc = Svc::start().await;
    let long = "x".repeat(300);
    let cases = [
        (
            "push_token",
            json!({"push_token": "apns:0123abcd", "device_type": "ios"}),
        ),
        (
            "push_token",
            json!({"push_token": "ProviderPushToken[has space]", "device_type": "ios"}),
        ),
        (
            "push_token",
            json!({"push_token": format!("ProviderPushToken[{}]", "x".repeat(201)), "device_type": "ios"}),
        ),
        (
            "push_token",
            json!({"push_token": 42, "device_type": "ios"}),
        ),
        (
            "device_type",
            json!({"push_token": token(1), "device_type": "windows"}),
        ),
        (
            "locale",
            json!({"push_token": token(1), "device_type": "ios", "locale": "english please"}),
        ),
        (
            "timezone",
            json!({"push_token": token(1), "device_type": "ios", "timezone": "Mars/Olympus"}),
        ),
        (
            "device_model",
            json!({"push_token": token(1), "device_type": "ios", "device_model": long}),
        ),
        (
            "user_label",
            json!({"push_token": token(1), "device_type": "ios", "user_label": ["a"]}),
        ),
    ];
    for (field, body) in cases {
        let r = svc.register(body).await;
        assert_eq!(
            (r.status, r.code()),
            (400, "rest_invalid_param"),
            "{field}: {}",
            r.text
        );
        assert!(
            r.body["data"]["params"][field].is_string(),
            "{field}: {}",
            r.text
        );
        assert!(r.body["message"].as_str().unwrap().contains(field));
    }
    assert!(svc.all_devices().await.is_empty());
}

#[tokio::test]
async fn a_body_that_is_not_a_json_object_is_400() {
    let svc = Svc::start().await;
    let t = svc.token();
    for (ct, body) in [
        ("application/json", "{not json"),
        ("application/json", "[1,2]"),
        ("text/plain", "push_token=x"),
    ] {
        let r = svc
            .app
            .http
            .post(svc.url("/register"))
            .header("X-Vendor-AppCheck", &t)
            .header("content-type", ct)
            .body(body)
            .send()
            .await
            .unwrap();
        let r = finish(r).await;
        assert!(
            r.status == 400 || r.status == 415,
            "{ct} {body}: {}",
            r.text
        );
        assert!(
            !r.code().is_empty(),
            "the namespace's error shape: {}",
            r.text
        );
    }
}

#[tokio::test]
async fn registration_needs_a_valid_app_check_token() {
    let svc = Svc::start().await;
    let body = json!({"push_token": token(1), "device_type": "ios"});
    let r = svc.register_with(None, body.clone()).await;
    assert_eq!((r.status, r.code()), (403, "appcheck_failed"));
    let r = svc.register_with(Some("not.a.token"), body.clone()).await;
    assert_eq!((r.status, r.code()), (403, "appcheck_failed"));
    let expired = svc.token_with(|c| c["exp"] = json!(chrono::Utc::now().timestamp() - 3600));
    let r = svc.register_with(Some(&expired), body).await;
    assert_eq!((r.status, r.code()), (403, "appcheck_failed"));
    assert!(svc.all_devices().await.is_empty());
}

#[tokio::test]
async fn the_token_is_the_credential_from_the_body_or_the_query_string() {
    let svc = Svc::start().await;
    let a = svc.registered(1).await;
    let b = svc.registered(2).await;
    // DELETE with the token in the query string.
    let r = svc
        .app
        .http
        .delete(svc.url("/register"))
        .query(&[("push_token", &a)])
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body, json!({"success": true, "active": false}));
    // GET status with the token in a JSON body.
    let r = svc
        .app
        .http
        .get(svc.url("/register/status"))
        .json(&json!({"push_token": a}))
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!(r.body, json!({"registered": true, "active": false}));
    assert_eq!(
        svc.status_of(&b).await.body,
        json!({"registered": true, "active": true}),
        "b untouched"
    );
}

#[tokio::test]
async fn status_and_unregister_reveal_nothing_about_other_devices() {
    let svc = Svc::start().await;
    svc.registered(1).await;
    let unknown = token(99);
    assert_eq!(
        svc.status_of(&unknown).await.body,
        json!({"registered": false, "active": false})
    );
    let r = svc
        .app
        .http
        .delete(svc.url("/register"))
        .query(&[("push_token", &unknown)])
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!((r.status, r.code()), (404, "svc_push_device_not_found"));
    assert!(!r.text.contains("device000001"));
    for path in ["/register/status", "/register"] {
        let req = if path == "/register" {
            svc.app.http.delete(svc.url(path))
        } else {
            svc.app.http.get(svc.url(path))
        };
        let r = finish(req.send().await.unwrap()).await;
        assert_eq!(
            (r.status, r.code()),
            (400, "rest_missing_callback_param"),
            "{path}"
        );
    }
    // No public route lists devices.
    let r = finish(
        svc.app
            .http
            .get(svc.url("/devices/export"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((r.status, r.code()), (403, "svc_push_forbidden"));
}

#[tokio::test]
async fn an_unregistered_device_gets_no_sends() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    let a = svc.registered(1).await;
    let b = svc.registered(2).await;
    svc.app
        .http
        .delete(svc.url("/register"))
        .query(&[("push_token", &b)])
        .send()
        .await
        .unwrap();
    let r = svc.send(&admin, json!({"title": "t", "body": "b"})).await;
    assert_eq!(r.body["recipients"], 1, "{}", r.text);
    let id = r.body["id"].as_str().unwrap().to_owned();
    svc.wait_sent(&admin, &id, std::time::Duration::from_secs(10))
        .await;
    let got: Vec<String> = svc.expo.delivered().into_iter().map(|d| d.to).collect();
    assert_eq!(got, vec![a]);
}
