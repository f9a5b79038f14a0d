use reqwest::Method;
use serde_json::json;

use crate::helpers::{Api, event};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[tokio::test]
async fn an_event_is_stored_and_answers_the_days_running_cost() {
    let api = Api::start().await;
    let r = api.event("alice", "s1", 1.25).await;
    assert_eq!(r.body["success"], true);
    assert!(close(
        r.body["summary"]["totalCost"].as_f64().unwrap(),
        1.25
    ));
    let r = api.event("alice", "s2", 0.5).await;
    assert!(close(
        r.body["summary"]["totalCost"].as_f64().unwrap(),
        1.75
    ));
    let r = api.event("bob", "s1", 0.1).await;
    assert!(
        close(r.body["summary"]["totalCost"].as_f64().unwrap(), 0.1),
        "per user"
    );
}

#[tokio::test]
async fn the_total_counts_only_the_current_utc_day() {
    let api = Api::start().await;
    let db = api.app.platform().db.clone();
    let me = keel_usage_alerts::auth::synthetic_id("alice");
    let yesterday = chrono::Utc::now() - chrono::Duration::days(1);
    let old = keel_usage_alerts::domain::event::NewEvent {
        user_id: me,
        event: serde_json::from_value(event("old", 100.0)).unwrap(),
    };
    keel_usage_alerts::domain::ingest::write_batch(&db, &[old], yesterday)
        .await
        .unwrap();
    let r = api.event("alice", "s1", 2.0).await;
    assert!(close(r.body["summary"]["totalCost"].as_f64().unwrap(), 2.0));
    assert_eq!(
        api.get("/history", "alice").await.body["events"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn concurrent_events_of_one_user_add_up_exactly() {
    let api = Api::start().await;
    let mut tasks = Vec::new();
    for i in 0..40 {
        let url = api.url("/event");
        let http = api.app.http.clone();
        tasks.push(tokio::spawn(async move {
            let r = http
                .post(url)
                .bearer_auth("alice")
                .json(&event(&format!("s{}", i % 4), 0.25))
                .send()
                .await
                .unwrap();
            r.json::<serde_json::Value>().await.unwrap()["summary"]["totalCost"]
                .as_f64()
                .unwrap()
        }));
    }
    let mut totals = Vec::new();
    for t in tasks {
        totals.push(t.await.unwrap());
    }
    totals.sort_by(f64::total_cmp);
    for (i, t) in totals.iter().enumerate() {
        assert!(
            close(*t, 0.25 * (i as f64 + 1.0)),
            "running totals are 0.25, 0.5, ...: {totals:?}"
        );
    }
}

#[tokio::test]
async fn each_missing_field_is_named() {
    let api = Api::start().await;
    for field in [
        "sessionId",
        "timestamp",
        "model",
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
        "costUSD",
    ] {
        let mut e = event("s", 1.0);
        e.as_object_mut().unwrap().remove(field);
        let r = api.post("/event", "alice", e).await;
        assert_eq!(r.status, 400);
        assert_eq!(
            r.body,
            json!({"error": format!("Missing required field: {field}")})
        );
    }
}

#[tokio::test]
async fn empty_or_blank_required_strings_are_missing_fields() {
    let api = Api::start().await;
    for (field, value) in [("sessionId", ""), ("model", "   "), ("timestamp", "")] {
        let mut e = event("s", 1.0);
        e[field] = json!(value);
        let r = api.post("/event", "alice", e).await;
        assert_eq!(r.status, 400, "{field}={value:?}");
        assert_eq!(
            r.body,
            json!({"error": format!("Missing required field: {field}")})
        );
    }
    let mut zero = event("s", 0.0);
    zero["inputTokens"] = json!(0);
    assert_eq!(
        api.post("/event", "alice", zero).await.status,
        200,
        "0 is a value"
    );
}

#[tokio::test]
async fn a_missing_field_is_reported_before_a_malformed_one() {
    let api = Api::start().await;
    let mut e = event("s", 1.0);
    e["inputTokens"] = json!("many");
    e["timestamp"] = json!("someday");
    e.as_object_mut().unwrap().remove("costUSD");
    let r = api.post("/event", "alice", e).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body, json!({"error": "Missing required field: costUSD"}));
}

#[tokio::test]
async fn wrong_types_and_values_are_400_naming_the_field() {
    let api = Api::start().await;
    let cases = [
        ("inputTokens", json!(-1)),
        ("outputTokens", json!("12")),
        ("cacheReadTokens", json!(1.5)),
        ("costUSD", json!(-0.01)),
        ("costUSD", json!("free")),
        ("timestamp", json!("last tuesday")),
        ("timestamp", json!(1_700_000_000)),
        ("model", json!(["a"])),
    ];
    for (field, value) in cases {
        let mut e = event("s", 1.0);
        e[field] = value.clone();
        let r = api.post("/event", "alice", e).await;
        assert_eq!(r.status, 400, "{field}={value}");
        assert!(
            r.code().starts_with(&format!("Invalid field: {field}")),
            "{field}={value}: {}",
            r.text
        );
    }
    assert_eq!(
        api.get("/history", "alice").await.body["events"],
        json!([]),
        "nothing stored"
    );
}

#[tokio::test]
async fn history_is_newest_first_paginated_and_carries_the_stored_fields() {
    let api = Api::start().await;
    for i in 0..7 {
        api.event("alice", &format!("s{i}"), 0.01).await;
    }
    api.event("bob", "other", 0.01).await;
    let r = api.get("/history", "alice").await;
    assert_eq!(
        (r.body["limit"].clone(), r.body["offset"].clone()),
        (json!(50), json!(0))
    );
    let events = r.body["events"].as_array().unwrap();
    assert_eq!(events.len(), 7, "only alice's");
    assert_eq!(events[0]["sessionId"], "s6");
    let e = &events[0];
    for field in [
        "id",
        "userId",
        "createdAt",
        "sessionId",
        "timestamp",
        "model",
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
        "costUSD",
    ] {
        assert!(!e[field].is_null(), "{field}");
    }
    assert_eq!(e["timestamp"], "2026-11-22T10:00:00.000Z", "as submitted");
    let page = api.get("/history?limit=2&offset=3", "alice").await;
    let sessions: Vec<&str> = page.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, ["s3", "s2"]);
    assert_eq!(page.body["limit"], 2);
    assert_eq!(page.body["offset"], 3);
    assert_eq!(
        api.get("/history?limit=100000", "alice").await.body["limit"],
        500,
        "capped"
    );
}

#[tokio::test]
async fn bad_history_parameters_are_400() {
    let api = Api::start().await;
    for q in [
        "limit=abc",
        "limit=-1",
        "offset=-5",
        "offset=1.5",
        "limit=",
        "limit=1&limit=2",
    ] {
        let r = api.get(&format!("/history?{q}"), "alice").await;
        assert_eq!(r.status, 400, "{q}");
        assert!(r.body["error"].is_string(), "{q}: {}", r.text);
    }
}

#[tokio::test]
async fn numbers_past_their_bounds_are_400_naming_the_field_never_a_500() {
    let api = Api::start().await;
    for q in [
        "offset=9223372036854775808",
        "offset=99999999999999999999",
        "offset=1000000001",
    ] {
        let r = api.get(&format!("/history?{q}"), "alice").await;
        assert_eq!(r.status, 400, "{q}: {}", r.text);
        assert!(
            r.body["error"].as_str().unwrap().contains("offset"),
            "{}",
            r.text
        );
    }
    let r = api
        .get(
            "/history?limit=99999999999999999999999&offset=1000000000",
            "alice",
        )
        .await;
    assert_eq!(
        (r.status, &r.body["limit"]),
        (200, &json!(500)),
        "a huge limit is capped"
    );
    for (field, value) in [
        ("inputTokens", json!(1_000_000_001_i64)),
        ("cacheReadTokens", json!(9_223_372_036_854_775_807_i64)),
        ("costUSD", json!(1.0e300)),
        ("costUSD", json!(1_000_000.5)),
    ] {
        let mut e = crate::helpers::event("s", 1.0);
        e[field] = value;
        let r = api.post("/event", "alice", e).await;
        assert_eq!(r.status, 400, "{field}: {}", r.text);
        assert!(
            r.body["error"].as_str().unwrap().contains(field),
            "{}",
            r.text
        );
    }
    let mut e = crate::helpers::event("s", 1_000_000.0);
    e["outputTokens"] = json!(1_000_000_000);
    assert_eq!(
        api.post("/event", "alice", e).await.status,
        200,
        "the bounds themselves are accepted"
    );
}

#[tokio::test]
async fn deleting_the_account_removes_everything_and_counts_it() {
    let api = Api::start().await;
    api.register("alice", &crate::helpers::device(1), "ios", false)
        .await;
    api.register("alice", &crate::helpers::device(2), "watchos", false)
        .await;
    api.register("bob", &crate::helpers::device(3), "ios", false)
        .await;
    api.post("/preferences", "alice", json!({"thresholds": [{"id": "a", "type": "daily_cost", "value": 0.01, "isEnabled": true}]})).await;
    for _ in 0..3 {
        api.event("alice", "s", 1.0).await;
    }
    api.event("bob", "s", 1.0).await;
    let r = api
        .call(Method::DELETE, "/account", Some("alice"), None)
        .await;
    assert_eq!(
        r.body,
        json!({"success": true, "devicesRemoved": 2, "eventsRemoved": 3})
    );
    assert_eq!(api.get("/device", "alice").await.body["devices"], json!([]));
    assert_eq!(api.get("/history", "alice").await.body["events"], json!([]));
    assert_eq!(
        api.get("/preferences", "alice").await.body,
        json!({"preferences": null})
    );
    let r = api.event("alice", "s", 1.0).await;
    assert!(
        close(r.body["summary"]["totalCost"].as_f64().unwrap(), 1.0),
        "aggregates are gone too"
    );
    assert_eq!(
        api.get("/device", "bob").await.body["devices"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "bob untouched"
    );
    let r = api
        .call(Method::DELETE, "/account", Some("nobody"), None)
        .await;
    assert_eq!(
        r.body,
        json!({"success": true, "devicesRemoved": 0, "eventsRemoved": 0})
    );
}

/// The page written straight from SQLite's rows is the page written from
/// the pool's models, to the byte: sub-millisecond creation times, several
/// stored timestamp spellings, costs of every magnitude with all their
/// digits, text that needs escaping.
#[tokio::test]
async fn a_history_page_written_from_sqlite_rows_is_the_page_written_from_models() {
    use keel_platform::sea_orm::ConnectionTrait;
    use keel_usage_alerts::domain::event::{HistoryPage, page_inline, page_pooled};
    use keel_usage_alerts::routes::history::Envelope;
    let api = Api::start().await;
    let db = &api.app.platform().db;
    if db.is_postgres() {
        return;
    }
    let stored = [
        ("2026-03-04 05:06:07.123987+00:00", 0.1 + 0.2),
        ("2026-03-04T05:06:07.999999+00:00", 0.000_001),
        ("2026-03-04 05:06:07", 1.0 / 3.0),
        ("2026-03-04T05:06:07Z", 1e300),
        ("2026-03-04T06:06:07+01:00", 5e-324),
    ];
    for (i, (created, cost)) in stored.iter().enumerate() {
        db.write()
            .execute_unprepared(&format!(
                "INSERT INTO ua_events (id, user_id, session_id, timestamp, model, input_tokens, \
                 output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at) \
                 VALUES ('e{i}', 'u1', 's \"quoted\" \\ \u{1}', '2026-01-01T00:00:00Z', 'm\u{e9}\u{1F600}', \
                 {i}, 2, 3, 4, {cost:e}, '{created}')"
            ))
            .await
            .unwrap();
    }
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..500 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mantissa = (x >> 11) as f64 / (1u64 << 53) as f64;
        let cost = mantissa * 10f64.powi(i % 40 - 20);
        db.write()
            .execute_unprepared(&format!(
                "INSERT INTO ua_events (id, user_id, session_id, timestamp, model, input_tokens, \
                 output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at) \
                 VALUES ('r{i}', 'u1', 's', '2026-01-01T00:00:00Z', 'm', 1, 2, 3, 4, {cost:e}, \
                 '2026-03-04 05:06:07.{i:06}+00:00')"
            ))
            .await
            .unwrap();
    }
    for (limit, offset) in [(500, 0), (50, 0), (50, 470), (50, 600), (0, 0)] {
        let mut inline = Envelope::open(0);
        page_inline(
            db,
            HistoryPage {
                user_id: "u1",
                limit,
                offset,
            },
            &mut inline,
        )
        .expect("read inline");
        let inline = inline.close(limit, offset);
        let mut pooled = Envelope::open(0);
        page_pooled(
            db,
            HistoryPage {
                user_id: "u1",
                limit,
                offset,
            },
            &mut pooled,
        )
        .await
        .unwrap();
        let pooled = pooled.close(limit, offset);
        assert_eq!(
            String::from_utf8_lossy(&inline),
            String::from_utf8_lossy(&pooled),
            "limit {limit} offset {offset}"
        );
        let page: serde_json::Value = serde_json::from_slice(&inline).unwrap();
        assert_eq!(page["limit"], limit);
    }
}
