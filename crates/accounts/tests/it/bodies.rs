use reqwest::Method;
use serde_json::json;

use crate::helpers::Api;

#[tokio::test]
async fn form_and_json_bodies_are_both_accepted() {
    let api = Api::start().await;
    let r = api
        .send_json(
            Method::POST,
            "/auth/register",
            None,
            &json!({"username": "ada", "email": "ada@example.com", "password": "long enough, really"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let token = r.body["accessToken"].as_str().unwrap().to_owned();
    let r = api
        .send_json(
            Method::POST,
            "/goals/weekly",
            Some(&token),
            &json!({"title": "json"}),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = api
        .post("/goals/weekly", Some(&token), &[("title", "form")])
        .await;
    assert_eq!(r.status, 200);
    let r = api
        .send_json(
            Method::POST,
            "/auth/login",
            None,
            &json!({"login": "ada", "password": "long enough, really", "code": 123456}),
        )
        .await;
    assert_eq!(r.status, 200, "a numeric code is read as text: {}", r.text);
}

#[tokio::test]
async fn malformed_json_is_400_and_a_field_of_the_wrong_type_is_named() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .app
        .http
        .post(api.url("/goals/weekly"))
        .bearer_auth(&user.token)
        .header("content-type", "application/json")
        .body("{\"title\": ")
        .send()
        .await
        .unwrap();
    let r = crate::helpers::finish(r).await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"), "{}", r.text);
    let r = api
        .send_json(
            Method::POST,
            "/goals/weekly",
            Some(&user.token),
            &json!({"title": 5}),
        )
        .await;
    assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"));
    assert!(
        r.body["message"].as_str().unwrap().starts_with("title"),
        "{}",
        r.text
    );
    let r = api
        .send_json(
            Method::POST,
            "/goals/weekly",
            Some(&user.token),
            &json!(["title"]),
        )
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn an_unsupported_content_type_is_415() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .app
        .http
        .post(api.url("/goals/weekly"))
        .bearer_auth(&user.token)
        .header("content-type", "text/plain")
        .body("title=x")
        .send()
        .await
        .unwrap();
    let r = crate::helpers::finish(r).await;
    assert_eq!((r.status, r.code()), (415, "UNSUPPORTED_MEDIA_TYPE"));
}

#[tokio::test]
async fn an_oversized_body_is_413() {
    let api = Api::with(&[("KEEL_BODY_LIMIT_BYTES", "4096")]).await;
    let user = api.register("ada").await;
    let big = "x".repeat(10_000);
    let r = api
        .post("/goals/weekly", Some(&user.token), &[("title", &big)])
        .await;
    assert_eq!((r.status, r.code()), (413, "PAYLOAD_TOO_LARGE"));
}

#[tokio::test]
async fn an_unknown_route_is_404_and_a_wrong_method_405_in_the_accounts_shape() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api.get("/nope", &user.token).await;
    assert_eq!((r.status, r.code()), (404, "NOT_FOUND"));
    let r = api
        .send(Method::PATCH, "/account", Some(&user.token), None)
        .await;
    assert_eq!((r.status, r.code()), (405, "METHOD_NOT_ALLOWED"));
}

#[tokio::test]
async fn every_route_is_in_the_openapi_document() {
    let api = Api::start().await;
    let doc: serde_json::Value = api
        .app
        .http
        .get(api.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let expected = [
        ("/auth/register", "post"),
        ("/auth/login", "post"),
        ("/auth/refresh", "post"),
        ("/auth/logout", "post"),
        ("/auth/verify-email/{token}", "put"),
        ("/account", "get"),
        ("/account", "delete"),
        ("/account/export", "get"),
        ("/account/notifications", "get"),
        ("/account/notifications", "put"),
        ("/notifications/unsubscribe/{token}", "get"),
        ("/notifications/unsubscribe/{token}", "post"),
        ("/account/two-factor", "post"),
        ("/account/two-factor", "put"),
        ("/account/two-factor", "delete"),
        ("/account/two-factor/backup-codes", "get"),
        ("/account/change-email", "post"),
        ("/account/change-email/resend", "post"),
        ("/account/change-email/{email_token}", "put"),
        ("/account/change-password", "put"),
        ("/account/change-username", "put"),
        ("/account/sessions", "get"),
        ("/account/sessions", "delete"),
        ("/account/sessions/{session_id}", "delete"),
        ("/goals/weekly", "get"),
        ("/goals/weekly", "post"),
        ("/goals/weekly/{goal_id}", "get"),
        ("/goals/weekly/{goal_id}", "delete"),
        ("/goals/weekly/{goal_id}/complete", "put"),
        ("/goals/weekly/{goal_id}/not-complete", "put"),
        ("/goals/yearly", "get"),
        ("/goals/yearly", "post"),
        ("/goals/yearly/{goal_id}", "get"),
        ("/goals/yearly/{goal_id}", "delete"),
        ("/goals/yearly/{goal_id}/weekly/{weekly_goal_id}", "put"),
        ("/goals/yearly/{goal_id}/weekly/{weekly_goal_id}", "delete"),
    ];
    for (path, method) in expected {
        assert!(
            doc["paths"][path][method].is_object(),
            "{method} {path} missing"
        );
    }
}

#[tokio::test]
async fn a_path_prefix_can_be_configured() {
    let api = Api::with(&[("KEEL_ACCOUNTS_PATH_PREFIX", "/api/v1")]).await;
    assert!(api.url("").ends_with("/api/v1"));
    let user = api.register("ada").await;
    api.me(&user.token).await;
}

/// The first problem named is the first field's, in the order the fields
/// are read (username, email, password), and an absent field is named
/// before a malformed one only when it comes first: whatever order the
/// body lists them in, and in either format.
#[tokio::test]
async fn a_body_with_several_problems_names_the_first_field_in_reading_order() {
    let api = Api::with(&[("KEEL_ACCOUNTS_REGISTRATIONS_PER_MINUTE", "100")]).await;
    let cases = [
        (json!({}), "username is required"),
        (
            json!({"password": "x", "email": "nope"}),
            "username is required",
        ),
        (
            json!({"password": "x", "email": "nope", "username": "a"}),
            "username must be",
        ),
        (
            json!({"password": "x", "email": "nope", "username": "ada"}),
            "email must be a valid email address",
        ),
        (
            json!({"password": "x", "username": "ada"}),
            "email is required",
        ),
        (
            json!({"password": "x", "email": "ada@example.com", "username": "ada"}),
            "password must be 8 to 128 characters",
        ),
        (
            json!({"email": "ada@example.com", "username": "ada"}),
            "password is required",
        ),
    ];
    for (body, expected) in cases {
        let r = api
            .send_json(Method::POST, "/auth/register", None, &body)
            .await;
        assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"), "{body}");
        let message = r.body["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(expected), "{body}: {message}");
        let form: Vec<(String, String)> = body
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
            .collect();
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let r = api.post("/auth/register", None, &form).await;
        let message = r.body["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(expected), "form {body}: {message}");
    }
}

#[tokio::test]
async fn a_required_field_that_is_null_or_empty_is_named_as_required() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    for title in [json!(null), json!("")] {
        let r = api
            .send_json(
                Method::POST,
                "/goals/yearly",
                Some(&user.token),
                &json!({"title": title, "completeBy": "12/31/2030"}),
            )
            .await;
        assert_eq!(
            (r.status, r.code()),
            (400, "VALIDATION_ERROR"),
            "{}",
            r.text
        );
        assert_eq!(r.body["message"], "title is required", "{}", r.text);
    }
    let r = api
        .send_json(
            Method::POST,
            "/goals/yearly",
            Some(&user.token),
            &json!({"title": "run", "completeBy": "02/30/2030"}),
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (400, "VALIDATION_ERROR"),
        "{}",
        r.text
    );
    assert!(
        r.body["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("completeBy")
    );
}
