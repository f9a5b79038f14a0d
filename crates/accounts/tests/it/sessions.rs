use crate::helpers::{Api, is_iso_millis, is_object_id};

const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";

async fn login_as(api: &Api, ua: &str, forwarded_for: Option<&str>) -> String {
    let mut req = api
        .app
        .http
        .post(api.url("/auth/login"))
        .header("user-agent", ua)
        .form(&[("login", "ada"), ("password", "correct horse battery")]);
    if let Some(ip) = forwarded_for {
        req = req.header("x-forwarded-for", ip);
    }
    let r = crate::helpers::finish(req.send().await.unwrap()).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["accessToken"].as_str().unwrap().to_owned()
}

fn geo_csv(dir: &std::path::Path) -> String {
    let path = dir.join("geo.csv");
    std::fs::write(
        &path,
        "203.0.113.0,203.0.113.255,EU,FR,Ile-de-France,Paris\n",
    )
    .unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn each_login_opens_a_session_with_its_device_and_location() {
    let dir = tempfile::tempdir().unwrap();
    let csv = geo_csv(dir.path());
    let api = Api::with(&[
        ("KEEL_ACCOUNTS_GEOIP_CSV", &csv),
        ("KEEL_TRUSTED_PROXIES", "127.0.0.1"),
    ])
    .await;
    let user = api.register("ada").await;
    let token = login_as(&api, CHROME, Some("203.0.113.7")).await;
    let r = api.get("/account/sessions", &token).await;
    assert_eq!(r.status, 200);
    let sessions = r.body["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "registration and login");
    let newest = &sessions[0];
    assert!(is_object_id(&newest["_id"]));
    assert_eq!(newest["device"]["browser"], "Chrome");
    assert_eq!(newest["device"]["version"], "120.0.0.0");
    assert_eq!(newest["device"]["platform"], "desktop");
    assert_eq!(newest["device"]["os"], "Windows 10");
    assert_eq!(newest["device"]["isDev"], false);
    assert_eq!(newest["location"], "Paris, Ile-de-France, FR");
    assert!(is_iso_millis(&newest["expireAt"]) && is_iso_millis(&newest["createdAt"]));
    let mut keys: Vec<&str> = newest
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["_id", "createdAt", "device", "expireAt", "location"]);
    let _ = user;
}

#[tokio::test]
async fn forwarded_for_is_ignored_unless_the_peer_is_a_trusted_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let csv = geo_csv(dir.path());
    let api = Api::with(&[("KEEL_ACCOUNTS_GEOIP_CSV", &csv)]).await;
    api.register("ada").await;
    let token = login_as(&api, "curl/8.5.0", Some("203.0.113.7")).await;
    let r = api.get("/account/sessions", &token).await;
    let newest = &r.body["sessions"][0];
    assert_eq!(newest["location"], "unknown");
    assert_eq!(newest["device"]["isDev"], true);
    assert_eq!(newest["device"]["browser"], "curl");
}

#[tokio::test]
async fn an_unidentifiable_client_is_unknown_everywhere() {
    let api = Api::start().await;
    api.register("ada").await;
    let token = login_as(&api, "", None).await;
    let r = api.get("/account/sessions", &token).await;
    let d = &r.body["sessions"][0]["device"];
    for f in ["browser", "version", "platform", "os"] {
        assert_eq!(d[f], "unknown", "{f}");
    }
    assert_eq!(r.body["sessions"][0]["location"], "unknown");
}

#[tokio::test]
async fn revoking_a_session_ends_it_and_drops_it_from_the_list() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let other = login_as(&api, CHROME, None).await;
    let list = api.get("/account/sessions", &user.token).await;
    let other_id = list.body["sessions"][0]["_id"].as_str().unwrap().to_owned();
    let r = api
        .delete(&format!("/account/sessions/{other_id}"), &user.token)
        .await;
    assert_eq!((r.status, r.code()), (200, "SESSION_REVOKED"));
    assert!(r.body["error"].is_string());
    assert_eq!(api.get("/account", &other).await.status, 401);
    let list = api.get("/account/sessions", &user.token).await;
    assert_eq!(list.body["sessions"].as_array().unwrap().len(), 1);
    let again = api
        .delete(&format!("/account/sessions/{other_id}"), &user.token)
        .await;
    assert_eq!((again.status, again.code()), (404, "NOT_FOUND"));
}

#[tokio::test]
async fn another_users_session_is_not_found() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let bob = api.register("bob").await;
    let bobs = api.get("/account/sessions", &bob.token).await;
    let id = bobs.body["sessions"][0]["_id"].as_str().unwrap().to_owned();
    let r = api
        .delete(&format!("/account/sessions/{id}"), &ada.token)
        .await;
    assert_eq!((r.status, r.code()), (404, "NOT_FOUND"));
    api.me(&bob.token).await;
}

#[tokio::test]
async fn a_malformed_session_id_is_400() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api.delete("/account/sessions/not-an-id", &user.token).await;
    assert_eq!((r.status, r.code()), (400, "INVALID_ID"));
}

#[tokio::test]
async fn revoking_all_sessions_includes_the_current_one() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let other = login_as(&api, CHROME, None).await;
    let r = api.delete("/account/sessions", &user.token).await;
    assert_eq!((r.status, r.code()), (200, "ALL_SESSIONS_REVOKE"));
    assert!(r.body["error"].is_string());
    assert_eq!(api.get("/account", &user.token).await.status, 401);
    assert_eq!(api.get("/account", &other).await.status, 401);
    let r = api
        .post("/auth/refresh", None, &[("refreshToken", &user.refresh)])
        .await;
    assert_eq!(r.status, 401);
}
