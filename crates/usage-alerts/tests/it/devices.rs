use reqwest::Method;
use serde_json::json;

use crate::helpers::{Api, device};

#[tokio::test]
async fn a_device_is_registered_listed_and_updated_in_place() {
    let api = Api::start().await;
    let d = device(1);
    let r = api
        .post(
            "/register",
            "alice",
            json!({"device_token": d, "platform": "ios"}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["success"], true);
    assert!(r.body["message"].is_string());
    let list = api.get("/device", "alice").await;
    let devs = list.body["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 1);
    assert_eq!(devs[0]["deviceToken"], d.as_str());
    assert_eq!(devs[0]["platform"], "ios");
    assert_eq!(devs[0]["sandbox"], false);
    assert!(devs[0]["registeredAt"].is_string());
    api.post(
        "/register",
        "alice",
        json!({"device_token": d, "platform": "watchos", "sandbox": true}),
    )
    .await;
    let devs = api.get("/device", "alice").await.body["devices"].clone();
    assert_eq!(devs.as_array().unwrap().len(), 1, "one device, not two");
    assert_eq!(devs[0]["platform"], "watchos");
    assert_eq!(devs[0]["sandbox"], true);
}

#[tokio::test]
async fn registration_validates_each_field() {
    let api = Api::start().await;
    let cases = [
        (
            json!({"platform": "ios"}),
            "Missing required field: device_token",
        ),
        (
            json!({"device_token": device(1)}),
            "Missing required field: platform",
        ),
        (
            json!({"device_token": "abc"}),
            "Missing required field: platform",
        ),
        (
            json!({"device_token": "", "platform": "ios"}),
            "Missing required field: device_token",
        ),
        (
            json!({"device_token": 5, "platform": " "}),
            "Missing required field: platform",
        ),
        (
            json!({"device_token": device(1), "platform": "android"}),
            "Invalid field: platform must be ios or watchos",
        ),
        (
            json!({"device_token": "xyz", "platform": "ios"}),
            "Invalid field: device_token",
        ),
        (
            json!({"device_token": 5, "platform": "ios"}),
            "Invalid field: device_token must be a string",
        ),
        (
            json!({"device_token": device(1), "platform": "ios", "sandbox": "yes"}),
            "Invalid field: sandbox must be true or false",
        ),
    ];
    for (body, expected) in cases {
        let r = api.post("/register", "alice", body.clone()).await;
        assert_eq!(r.status, 400, "{body}");
        assert!(r.code().starts_with(expected), "{body}: {}", r.text);
    }
}

#[tokio::test]
async fn a_device_is_removed_by_body_or_by_path_and_only_by_its_owner() {
    let api = Api::start().await;
    api.register("alice", &device(1), "ios", false).await;
    api.register("alice", &device(2), "ios", false).await;
    let r = api
        .call(
            Method::DELETE,
            "/register",
            Some("bob"),
            Some(json!({"deviceToken": device(1)})),
        )
        .await;
    assert_eq!(r.status, 404, "another user's device");
    let r = api
        .call(
            Method::DELETE,
            "/register",
            Some("alice"),
            Some(json!({"deviceToken": device(1)})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.body["message"].is_string());
    let r = api
        .call(
            Method::DELETE,
            "/register",
            Some("alice"),
            Some(json!({"device_token": device(2)})),
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (400, "Missing required field: deviceToken"),
        "camelCase"
    );
    let r = api
        .call(
            Method::DELETE,
            &format!("/device/{}", device(2)),
            Some("bob"),
            None,
        )
        .await;
    assert_eq!(r.status, 404);
    let r = api
        .call(
            Method::DELETE,
            &format!("/device/{}", device(2)),
            Some("alice"),
            None,
        )
        .await;
    assert_eq!(r.body, json!({"success": true}));
    assert_eq!(api.get("/device", "alice").await.body["devices"], json!([]));
}

#[tokio::test]
async fn bodies_must_be_json_objects() {
    let api = Api::start().await;
    let r = api
        .app
        .http
        .post(api.url("/register"))
        .bearer_auth("alice")
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap()["error"],
        "Content-Type must be application/json"
    );
    let r = api
        .app
        .http
        .post(api.url("/event"))
        .bearer_auth("alice")
        .header("content-type", "application/json")
        .body("{\"sessionId\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(
        r.json::<serde_json::Value>().await.unwrap()["error"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    let r = api.post("/event", "alice", json!([1, 2])).await;
    assert_eq!(
        (r.status, r.code()),
        (400, "Request body must be a JSON object")
    );
}

#[tokio::test]
async fn an_oversized_body_is_413_in_the_error_shape() {
    let api = Api::with(&[("KEEL_BODY_LIMIT_BYTES", "2048".to_owned())]).await;
    let mut e = crate::helpers::event("s", 1.0);
    e["model"] = json!("x".repeat(5000));
    let r = api.post("/event", "alice", e).await;
    assert_eq!(r.status, 413);
    assert!(r.body["error"].is_string());
}

#[tokio::test]
async fn unknown_routes_are_404_in_the_error_shape_and_every_route_is_documented() {
    let api = Api::start().await;
    let r = api.get("/nope", "alice").await;
    assert_eq!(r.status, 404);
    assert!(r.body["error"].is_string());
    let doc = api
        .call(Method::GET, "/openapi.json", None, None)
        .await
        .body;
    for (path, method) in [
        ("/status", "get"),
        ("/register", "post"),
        ("/register", "delete"),
        ("/device/{token}", "delete"),
        ("/device", "get"),
        ("/event", "post"),
        ("/preferences", "get"),
        ("/preferences", "post"),
        ("/history", "get"),
        ("/account", "delete"),
    ] {
        assert!(doc["paths"][path][method].is_object(), "{method} {path}");
    }
}
