use serde_json::json;

use crate::helpers::Api;

#[tokio::test]
async fn preferences_are_null_until_set_then_replaced_whole() {
    let api = Api::start().await;
    assert_eq!(
        api.get("/preferences", "alice").await.body,
        json!({"preferences": null})
    );
    let thresholds = json!([
        {"id": "t1", "type": "daily_cost", "value": 2.5, "isEnabled": true},
        {"id": "t2", "type": "token_count", "value": 100000, "isEnabled": false},
    ]);
    let r = api
        .post("/preferences", "alice", json!({"thresholds": thresholds}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["success"], true);
    let p = &r.body["preferences"];
    assert!(p["userId"].as_str().unwrap().starts_with("dev-"));
    assert_eq!(p["thresholds"], thresholds);
    let first = p["updatedAt"].as_str().unwrap().to_owned();
    // The next write is stamped later than the first.
    keel_testkit::eventually(std::time::Duration::from_secs(1), || {
        (keel_platform::time::iso_millis(&chrono::Utc::now()) > first).then_some(())
    })
    .await;
    let only = json!([{"id": "t3", "type": "session_count", "value": 3, "isEnabled": true}]);
    let r = api
        .post("/preferences", "alice", json!({"thresholds": only}))
        .await;
    assert_eq!(
        r.body["preferences"]["thresholds"], only,
        "replaced, not merged"
    );
    assert_ne!(
        r.body["preferences"]["updatedAt"],
        first.as_str(),
        "updatedAt refreshed"
    );
    let got = api.get("/preferences", "alice").await.body;
    assert_eq!(got["preferences"]["thresholds"], only);
    assert_eq!(
        api.get("/preferences", "bob").await.body,
        json!({"preferences": null}),
        "per user"
    );
}

#[tokio::test]
async fn bad_thresholds_are_400_naming_the_field() {
    let api = Api::start().await;
    let cases = [
        (json!({}), "Missing required field: thresholds"),
        (
            json!({"thresholds": {}}),
            "Invalid field: thresholds must be an array",
        ),
        (
            json!({"thresholds": [{"id": "a", "type": "monthly", "value": 1, "isEnabled": true}]}),
            "Invalid field: thresholds[0].type",
        ),
        (
            json!({"thresholds": [{"id": "a", "type": "daily_cost", "value": -1, "isEnabled": true}]}),
            "Invalid field: thresholds[0].value",
        ),
        (
            json!({"thresholds": [{"id": "a", "type": "daily_cost", "value": 1}]}),
            "Missing required field: thresholds[0].isEnabled",
        ),
        (
            json!({"thresholds": [{"id": "a", "type": "daily_cost", "value": "1", "isEnabled": true}]}),
            "Invalid field: thresholds[0].value",
        ),
        (
            json!({"thresholds": [{"id": "", "type": "daily_cost", "value": 1, "isEnabled": true}]}),
            "Missing required field: thresholds[0].id",
        ),
        (
            json!({"thresholds": [
                {"id": "a", "type": "monthly", "value": 1, "isEnabled": true},
                {"id": "b", "type": "daily_cost", "value": 1}
            ]}),
            "Missing required field: thresholds[1].isEnabled",
        ),
    ];
    for (body, expected) in cases {
        let r = api.post("/preferences", "alice", body.clone()).await;
        assert_eq!(r.status, 400, "{body}");
        assert!(r.code().starts_with(expected), "{body}: {}", r.text);
    }
}
