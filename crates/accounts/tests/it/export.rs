//! `GET /account/export`: a copy of the user's data, as an attachment.

use crate::helpers::{Api, is_iso_millis};

#[tokio::test]
async fn the_export_holds_the_profile_sessions_goals_and_pending_change_and_no_secret() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let y = api
        .post(
            "/goals/yearly",
            Some(&ada.token),
            &[("title", "year"), ("completeBy", "12/31/2027")],
        )
        .await;
    let yid = y.body["goal"]["_id"].as_str().unwrap().to_owned();
    let w = api
        .post(
            "/goals/weekly",
            Some(&ada.token),
            &[("title", "week"), ("yearlyGoal", &yid)],
        )
        .await;
    api.post(
        "/account/change-email",
        Some(&ada.token),
        &[("email", "ada.next@example.com")],
    )
    .await;
    crate::two_factor::enable(&api, &ada).await;

    let r = api.get("/account/export", &ada.token).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.headers["content-disposition"],
        "attachment; filename=\"account-ada.json\""
    );
    assert!(
        r.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let e = &r.body;
    assert!(is_iso_millis(&e["exportedAt"]));
    let me = api.me(&ada.token).await;
    assert_eq!(e["user"]["_id"], me["_id"]);
    assert_eq!(e["user"]["twoFactor"], true);
    assert_eq!(e["user"]["notifications"], me["notifications"]);
    assert_eq!(e["sessions"].as_array().unwrap().len(), 1);
    assert!(e["sessions"][0]["device"]["browser"].is_string());
    assert_eq!(e["weeklyGoals"][0]["_id"], w.body["goal"]["_id"]);
    assert_eq!(e["weeklyGoals"][0]["yearlyGoal"], yid.as_str());
    assert_eq!(e["yearlyGoals"][0]["weekly"][0]["title"], "week");
    assert_eq!(e["pendingEmailChange"]["email"], "ada.next@example.com");
    assert!(is_iso_millis(&e["pendingEmailChange"]["expiresAt"]));
    let text = r.text.to_lowercase();
    for secret in ["secret", "password", "hash", "backup", "token"] {
        assert!(!text.contains(secret), "{secret} in {}", r.text);
    }
}

#[tokio::test]
async fn exports_are_limited_to_ten_an_hour_per_user() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let bob = api.register("bob").await;
    for _ in 0..10 {
        assert_eq!(api.get("/account/export", &ada.token).await.status, 200);
    }
    let r = api.get("/account/export", &ada.token).await;
    assert_eq!(
        (r.status, r.code()),
        (429, "TOO_MANY_REQUESTS"),
        "{}",
        r.text
    );
    assert!(r.headers.contains_key("retry-after"));
    assert_eq!(api.get("/account/export", &bob.token).await.status, 200);
    let r = api.get("/account/export", "not-a-token").await;
    assert_eq!(r.status, 401);
}
