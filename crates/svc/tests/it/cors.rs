use keel_svc::domain::settings::SettingsPatch;

use crate::helpers::{FORM, Svc, finish};

async fn preflight(svc: &Svc, origin: &str) -> crate::helpers::Resp {
    let r = svc
        .app
        .http
        .request(
            reqwest::Method::OPTIONS,
            svc.url(&format!("/submit/{FORM}")),
        )
        .header("Origin", origin)
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "content-type, x-vendor-appcheck",
        )
        .send()
        .await
        .unwrap();
    finish(r).await
}

async fn fields_from(svc: &Svc, origin: &str) -> crate::helpers::Resp {
    let r = svc
        .app
        .http
        .get(svc.url(&format!("/forms/{FORM}/fields")))
        .header("Origin", origin)
        .header("X-Vendor-AppCheck", svc.token())
        .send()
        .await
        .unwrap();
    finish(r).await
}

#[tokio::test]
async fn with_no_allowed_origins_no_cross_origin_request_is_permitted() {
    let svc = Svc::start().await;
    let p = preflight(&svc, "https://app.example.com").await;
    assert!(p.status < 300);
    assert!(!p.headers.contains_key("access-control-allow-origin"));
    assert!(!p.headers.contains_key("access-control-allow-methods"));
    let r = fields_from(&svc, "https://app.example.com").await;
    assert_eq!(r.status, 200);
    assert!(!r.headers.contains_key("access-control-allow-origin"));
}

#[tokio::test]
async fn an_allowed_origin_gets_cors_headers_and_others_do_not() {
    let svc = Svc::start().await;
    svc.configure(SettingsPatch {
        allowed_origins: Some(vec!["https://app.example.com".into()]),
        ..Default::default()
    })
    .await;
    let p = preflight(&svc, "https://app.example.com").await;
    assert_eq!(p.status, 204);
    assert_eq!(
        p.headers["access-control-allow-origin"],
        "https://app.example.com"
    );
    assert!(
        p.headers["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .contains("POST")
    );
    assert!(
        p.headers["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .to_lowercase()
            .contains("x-vendor-appcheck")
    );
    let r = fields_from(&svc, "https://app.example.com").await;
    assert_eq!(
        r.headers["access-control-allow-origin"],
        "https://app.example.com"
    );
    assert!(r.headers.get_all("vary").iter().any(|v| v == "Origin"));
    let other = preflight(&svc, "https://evil.example").await;
    assert!(!other.headers.contains_key("access-control-allow-origin"));
    let r = fields_from(&svc, "https://evil.example").await;
    assert!(!r.headers.contains_key("access-control-allow-origin"));
}
