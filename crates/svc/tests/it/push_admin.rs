//! Push admin access and the module switch.

use keel_svc::domain::settings::SettingsPatch;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Svc, finish};
use crate::push_kit::token;

/// Every admin push route, with a body where it takes one.
fn admin_routes() -> Vec<(Method, &'static str, Option<Value>)> {
    vec![
        (
            Method::POST,
            "/send",
            Some(json!({"title": "t", "body": "b"})),
        ),
        (
            Method::GET,
            "/send/0190a6c4-0000-7000-8000-000000000000",
            None,
        ),
        (
            Method::DELETE,
            "/send/0190a6c4-0000-7000-8000-000000000000",
            None,
        ),
        (Method::GET, "/sends", None),
        (
            Method::POST,
            "/recipients/count",
            Some(json!({"target": "all"})),
        ),
        (Method::GET, "/stats", None),
        (Method::GET, "/devices", None),
        (Method::GET, "/devices/export", None),
        (Method::POST, "/devices/import", None),
    ]
}

#[tokio::test]
async fn admin_routes_without_svc_manage_are_403_svc_push_forbidden() {
    let svc = Svc::start().await;
    let (_, real) = svc.admin("boss").await;
    let clerk = svc.clerk().await;
    let callers: [(&str, Option<(&str, &str)>); 4] = [
        ("no credentials", None),
        ("a user without svc_manage", Some(("clerk", &clerk))),
        (
            "a wrong application password",
            Some(("boss", "aaaa bbbb cccc dddd eeee ffff")),
        ),
        ("an unknown user", Some(("nobody", &real))),
    ];
    for (who, auth) in callers {
        for (method, path, body) in admin_routes() {
            let mut req = svc.app.http.request(method.clone(), svc.url(path));
            if let Some((u, p)) = auth {
                req = req.basic_auth(u, Some(p));
            }
            if let Some(b) = &body {
                req = req.json(b);
            }
            let r = finish(req.send().await.unwrap()).await;
            assert_eq!(
                (r.status, r.code()),
                (403, "svc_push_forbidden"),
                "{who}: {method} {path}"
            );
            assert_eq!(r.body["data"]["status"], 403);
        }
    }
    assert!(svc.expo.delivered().is_empty());
}

#[tokio::test]
async fn a_cookie_session_works_with_its_nonce_and_not_without_on_every_route() {
    let svc = Svc::start().await;
    let (login, _) = svc.admin("boss").await;
    svc.registered(1).await;
    let r = finish(
        svc.app
            .http
            .post(svc.url("/admin/login"))
            .json(&json!({"username": "boss", "password": login}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let cookie = keel_testkit::session::cookie(&r.headers);
    let nonce = r.body["nonce"].as_str().unwrap().to_owned();
    let send = |nonce: Option<String>| {
        let mut req = svc
            .app
            .http
            .post(svc.url("/send"))
            .header("cookie", &cookie)
            .json(&json!({"title": "t", "body": "b"}));
        if let Some(n) = nonce {
            req = req.header("X-Svc-Nonce", n);
        }
        req.send()
    };
    let r = finish(send(None).await.unwrap()).await;
    assert_eq!((r.status, r.code()), (403, "svc_push_forbidden"));
    let r = finish(send(Some("guess".into())).await.unwrap()).await;
    assert_eq!((r.status, r.code()), (403, "svc_push_forbidden"));
    let r = finish(send(Some(nonce.clone())).await.unwrap()).await;
    assert_eq!(r.status, 202, "{}", r.text);
    let send_id = r.body["id"].as_str().unwrap().to_owned();
    for path in [
        "/stats".to_owned(),
        format!("/send/{send_id}"),
        "/devices/export".to_owned(),
    ] {
        let get = |nonce: Option<&str>| {
            let mut req = svc.app.http.get(svc.url(&path)).header("cookie", &cookie);
            if let Some(n) = nonce {
                req = req.header("X-Svc-Nonce", n);
            }
            req.send()
        };
        let r = finish(get(None).await.unwrap()).await;
        assert_eq!(
            (r.status, r.code()),
            (403, "svc_push_forbidden"),
            "{path}: a cookie without its nonce is refused on reads too"
        );
        let r = finish(get(Some("guess")).await.unwrap()).await;
        assert_eq!((r.status, r.code()), (403, "svc_push_forbidden"), "{path}");
        let r = finish(get(Some(&nonce)).await.unwrap()).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text);
    }
}

#[tokio::test]
async fn with_the_module_off_every_push_route_is_404_until_it_is_back_on() {
    let svc = Svc::start().await;
    let (_, pw) = svc.admin("boss").await;
    let t = svc.registered(1).await;
    svc.settings(SettingsPatch {
        push_enabled: Some(false),
        ..Default::default()
    })
    .await;
    let app_check = svc.token();
    let public: Vec<(Method, String, Option<Value>)> = vec![
        (
            Method::POST,
            "/register".into(),
            Some(json!({"push_token": token(2), "device_type": "ios"})),
        ),
        (Method::DELETE, format!("/register?push_token={t}"), None),
        (
            Method::GET,
            format!("/register/status?push_token={t}"),
            None,
        ),
    ];
    for (method, path, body) in public {
        let mut req = svc
            .app
            .http
            .request(method.clone(), svc.url(&path))
            .header("X-Vendor-AppCheck", &app_check);
        if let Some(b) = &body {
            req = req.json(b);
        }
        let r = finish(req.send().await.unwrap()).await;
        assert_eq!(
            (r.status, r.code()),
            (404, "rest_no_route"),
            "{method} {path}"
        );
    }
    for (method, path, body) in admin_routes() {
        let r = svc
            .admin_call(method.clone(), path, ("boss", &pw), body)
            .await;
        assert_eq!(
            (r.status, r.code()),
            (404, "rest_no_route"),
            "{method} {path}"
        );
    }
    assert_eq!(
        svc.all_devices().await.len(),
        1,
        "nothing registered while off"
    );
    assert!(
        svc.device_row(&t).await.unwrap().active,
        "nothing unregistered while off"
    );
    svc.settings(SettingsPatch {
        push_enabled: Some(true),
        ..Default::default()
    })
    .await;
    assert_eq!(svc.status_of(&t).await.status, 200, "back on, no restart");
    let r = svc
        .admin_call(Method::GET, "/stats", ("boss", &pw), None)
        .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn every_push_route_is_in_the_openapi_document() {
    let svc = Svc::start().await;
    let doc: Value = svc
        .app
        .http
        .get(svc.app.root(keel_svc::NAME, "/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let paths = doc["paths"].as_object().unwrap();
    for (path, methods) in [
        ("/svc/v1/register", &["post", "delete"][..]),
        ("/svc/v1/register/status", &["get"]),
        ("/svc/v1/send", &["post"]),
        ("/svc/v1/send/{id}", &["get", "delete"]),
        ("/svc/v1/stats", &["get"]),
        ("/svc/v1/devices/export", &["get"]),
        ("/svc/v1/devices/import", &["post"]),
    ] {
        for m in methods {
            assert!(
                paths.get(path).and_then(|p| p.get(*m)).is_some(),
                "{m} {path}"
            );
        }
    }
}
