//! Panels and the channel's and profile's edits, as getInfo shows them.

use serde_json::{Value, json};

use crate::helpers::Channel;

fn titles(panels: &Value) -> Vec<String> {
    panels
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["title"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn panels_are_created_edited_reordered_and_deleted() {
    let ch = Channel::start().await;
    ch.set_up().await;
    let mut ids = Vec::new();
    for t in ["About", "Schedule", "Gear"] {
        let r = ch
            .mutate(
                "panels.create",
                json!({"title": t, "body": format!("{t} text")}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        ids.push(r.data()["id"].as_str().unwrap().to_owned());
    }
    let r = ch
        .mutate(
            "panels.update",
            json!({"id": ids[1], "title": "Weekly schedule", "linkUrl": "https://example.com/s"}),
        )
        .await;
    assert_eq!(r.data()["title"], "Weekly schedule");
    assert_eq!(r.data()["linkUrl"], "https://example.com/s");
    let r = ch
        .mutate("panels.update", json!({"id": ids[1], "linkUrl": null}))
        .await;
    assert_eq!(r.data()["linkUrl"], Value::Null, "null removes the link");
    let r = ch
        .mutate("panels.reorder", json!({"ids": [ids[2], ids[0], ids[1]]}))
        .await;
    assert_eq!(
        titles(&r.data()["panels"]),
        ["Gear", "About", "Weekly schedule"]
    );
    let info = ch.query("channel.getInfo", None).await;
    assert_eq!(
        titles(&info.data()["panels"]),
        ["Gear", "About", "Weekly schedule"]
    );
    let r = ch.mutate("panels.delete", json!({"id": ids[0]})).await;
    assert_eq!(r.data(), &json!({"ok": true}));
    let list = ch.query("panels.list", None).await;
    assert_eq!(titles(&list.data()["panels"]), ["Gear", "Weekly schedule"]);
}

#[tokio::test]
async fn bad_panel_changes_are_refused_naming_why() {
    let ch = Channel::start().await;
    ch.set_up().await;
    let a = ch
        .mutate("panels.create", json!({"title": "A"}))
        .await
        .data()["id"]
        .clone();
    let r = ch.mutate("panels.create", json!({"title": ""})).await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"));
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("title")
    );
    let r = ch
        .mutate(
            "panels.create",
            json!({"title": "x", "imageUrl": "javascript:alert(1)"}),
        )
        .await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"));
    let r = ch
        .mutate("panels.create", json!({"title": "x", "sneaky": 1}))
        .await;
    assert_eq!(
        (r.status, r.code()),
        (400, "BAD_REQUEST"),
        "unknown fields are refused"
    );
    let r = ch
        .mutate("panels.update", json!({"id": "nope", "title": "x"}))
        .await;
    assert_eq!((r.status, r.code()), (404, "NOT_FOUND"));
    let r = ch.mutate("panels.delete", json!({"id": "nope"})).await;
    assert_eq!((r.status, r.code()), (404, "NOT_FOUND"));
    let r = ch.mutate("panels.reorder", json!({"ids": [a, a]})).await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"));
    let r = ch.mutate("panels.reorder", json!({"ids": []})).await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"));
}

#[tokio::test]
async fn the_channel_and_the_profile_change_only_in_the_fields_given() {
    let ch = Channel::start().await;
    ch.set_up().await;
    let links = json!([{"label": "YouTube", "url": "https://youtube.com/@ada"}]);
    let r = ch
        .mutate(
            "channel.update",
            json!({"title": "New title", "socialLinks": links}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.data()["title"], "New title");
    assert_eq!(r.data()["description"], "Building things", "unchanged");
    assert_eq!(r.data()["socialLinks"], links);
    let r = ch
        .mutate("profile.update", json!({"displayName": "Ada", "bio": "Hi", "avatarUrl": "https://example.com/a.png", "location": "London"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = ch.mutate("profile.update", json!({"location": null})).await;
    assert_eq!(
        r.data(),
        &json!({"displayName": "Ada", "bio": "Hi", "avatarUrl": "https://example.com/a.png", "location": null})
    );
    assert_eq!(
        ch.query("channel.getInfo", None).await.data()["profile"]["displayName"],
        "Ada"
    );
    let many: Vec<Value> = (0..11)
        .map(|i| json!({"label": format!("l{i}"), "url": "https://example.com"}))
        .collect();
    let r = ch
        .mutate("channel.update", json!({"socialLinks": many}))
        .await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"));
    let r = ch.mutate("channel.update", json!({"title": "   "})).await;
    assert_eq!((r.status, r.code()), (400, "BAD_REQUEST"));
}
