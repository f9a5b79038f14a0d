//! Yearly goals that hold weekly goals: link, unlink, create linked, and what
//! deleting either side does.

use serde_json::Value;

use crate::helpers::{Api, User};

async fn yearly(api: &Api, user: &User, title: &str) -> String {
    let r = api
        .post(
            "/goals/yearly",
            Some(&user.token),
            &[("title", title), ("completeBy", "12/31/2027")],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["goal"]["_id"].as_str().unwrap().to_owned()
}

async fn weekly(api: &Api, user: &User, form: &[(&str, &str)]) -> Value {
    let r = api.post("/goals/weekly", Some(&user.token), form).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["goal"].clone()
}

fn ids(goal: &Value) -> Vec<&str> {
    goal["weekly"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["_id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_weekly_goal_created_in_a_yearly_goal_is_listed_in_it_with_the_progress() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let y = yearly(&api, &ada, "Marathon").await;
    let fresh = api
        .get(&format!("/goals/yearly/{y}"), &ada.token)
        .await
        .body;
    assert_eq!(fresh["weekly"], serde_json::json!([]));
    assert_eq!(
        fresh["progress"],
        serde_json::json!({"completed": 0, "total": 0})
    );

    let w1 = weekly(&api, &ada, &[("title", "Run 10k"), ("yearlyGoal", &y)]).await;
    assert_eq!(w1["yearlyGoal"], y.as_str());
    let w2 = weekly(&api, &ada, &[("title", "Run 20k"), ("yearlyGoal", &y)]).await;
    let alone = weekly(&api, &ada, &[("title", "Stretch"), ("yearlyGoal", "")]).await;
    assert_eq!(
        alone["yearlyGoal"],
        Value::Null,
        "an empty yearlyGoal is none"
    );
    let w1id = w1["_id"].as_str().unwrap();
    api.put(&format!("/goals/weekly/{w1id}/complete"), &ada.token, &[])
        .await;

    let got = api
        .get(&format!("/goals/yearly/{y}"), &ada.token)
        .await
        .body;
    assert_eq!(
        ids(&got),
        [w2["_id"].as_str().unwrap(), w1id],
        "newest first"
    );
    assert_eq!(got["weekly"][1]["isCompleted"], true, "whole weekly goals");
    assert_eq!(
        got["progress"],
        serde_json::json!({"completed": 1, "total": 2})
    );
    let list = api.get("/goals/yearly", &ada.token).await.body;
    assert_eq!(list["goals"][0], got, "the list says the same");
}

#[tokio::test]
async fn linking_moves_a_weekly_goal_and_unlinking_takes_it_out() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let (a, b) = (yearly(&api, &ada, "A").await, yearly(&api, &ada, "B").await);
    let w = weekly(&api, &ada, &[("title", "Run")]).await;
    let wid = w["_id"].as_str().unwrap();

    let r = api
        .put(&format!("/goals/yearly/{a}/weekly/{wid}"), &ada.token, &[])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(ids(&r.body), [wid]);
    assert_eq!(r.body["__v"], 1, "a link is a change of the yearly goal");
    let again = api
        .put(&format!("/goals/yearly/{a}/weekly/{wid}"), &ada.token, &[])
        .await;
    assert_eq!(
        (again.status, &again.body["__v"]),
        (200, &1.into()),
        "no change"
    );

    let moved = api
        .put(&format!("/goals/yearly/{b}/weekly/{wid}"), &ada.token, &[])
        .await;
    assert_eq!(ids(&moved.body), [wid]);
    let a_now = api
        .get(&format!("/goals/yearly/{a}"), &ada.token)
        .await
        .body;
    assert_eq!(
        ids(&a_now),
        Vec::<&str>::new(),
        "a weekly goal is in one yearly goal"
    );
    let w_now = api
        .get(&format!("/goals/weekly/{wid}"), &ada.token)
        .await
        .body;
    assert_eq!(w_now["yearlyGoal"], b.as_str());

    let not_in_a = api
        .delete(&format!("/goals/yearly/{a}/weekly/{wid}"), &ada.token)
        .await;
    assert_eq!((not_in_a.status, not_in_a.code()), (404, "NOT_FOUND"));
    let out = api
        .delete(&format!("/goals/yearly/{b}/weekly/{wid}"), &ada.token)
        .await;
    assert_eq!(out.status, 200, "{}", out.text);
    assert_eq!(ids(&out.body), Vec::<&str>::new());
    let w_now = api
        .get(&format!("/goals/weekly/{wid}"), &ada.token)
        .await
        .body;
    assert_eq!(w_now["yearlyGoal"], Value::Null);
}

#[tokio::test]
async fn deleting_a_weekly_goal_removes_it_and_deleting_a_yearly_goal_keeps_its_weekly_goals() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let y = yearly(&api, &ada, "Year").await;
    let gone = weekly(&api, &ada, &[("title", "gone"), ("yearlyGoal", &y)]).await;
    let kept = weekly(&api, &ada, &[("title", "kept"), ("yearlyGoal", &y)]).await;
    let gid = gone["_id"].as_str().unwrap();
    let kid = kept["_id"].as_str().unwrap();
    assert_eq!(
        api.delete(&format!("/goals/weekly/{gid}"), &ada.token)
            .await
            .status,
        200
    );
    let got = api
        .get(&format!("/goals/yearly/{y}"), &ada.token)
        .await
        .body;
    assert_eq!(ids(&got), [kid]);
    assert_eq!(got["progress"]["total"], 1);

    assert_eq!(
        api.delete(&format!("/goals/yearly/{y}"), &ada.token)
            .await
            .status,
        200
    );
    let w = api.get(&format!("/goals/weekly/{kid}"), &ada.token).await;
    assert_eq!(w.status, 200, "the weekly goal stays");
    assert_eq!(w.body["yearlyGoal"], Value::Null);
}

#[tokio::test]
async fn another_users_goals_and_bad_ids_are_refused_and_change_nothing() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let bob = api.register("bob").await;
    let ay = yearly(&api, &ada, "ada's").await;
    let aw = weekly(&api, &ada, &[("title", "ada's")]).await;
    let awid = aw["_id"].as_str().unwrap();
    let by = yearly(&api, &bob, "bob's").await;
    let bw = weekly(&api, &bob, &[("title", "bob's")]).await;
    let bwid = bw["_id"].as_str().unwrap();

    for (y, w) in [(&ay, bwid), (&by, awid), (&by, bwid)] {
        for put in [true, false] {
            let path = format!("/goals/yearly/{y}/weekly/{w}");
            let r = if put {
                api.put(&path, &ada.token, &[]).await
            } else {
                api.delete(&path, &ada.token).await
            };
            assert_eq!((r.status, r.code()), (404, "NOT_FOUND"), "{path}");
        }
    }
    let r = api
        .post(
            "/goals/weekly",
            Some(&ada.token),
            &[("title", "x"), ("yearlyGoal", &by)],
        )
        .await;
    assert_eq!((r.status, r.code()), (404, "NOT_FOUND"), "{}", r.text);
    assert_eq!(
        api.get("/goals/weekly", &ada.token).await.body["goals"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "nothing written"
    );
    let bad = api
        .post(
            "/goals/weekly",
            Some(&ada.token),
            &[("title", "x"), ("yearlyGoal", "nope")],
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.text);
    assert!(bad.text.contains("yearlyGoal"), "{}", bad.text);
    let null = api
        .send_json(
            reqwest::Method::POST,
            "/goals/weekly",
            Some(&ada.token),
            &serde_json::json!({"title": "x", "yearlyGoal": null}),
        )
        .await;
    assert_eq!(null.status, 400, "null is not an id: {}", null.text);
    assert!(null.text.contains("yearlyGoal"), "{}", null.text);
    let bad = api
        .put(&format!("/goals/yearly/{ay}/weekly/nope"), &ada.token, &[])
        .await;
    assert_eq!(bad.status, 400, "{}", bad.text);
    assert!(bad.text.contains("weekly_goal_id"), "{}", bad.text);
    let theirs = api
        .get(&format!("/goals/yearly/{by}"), &bob.token)
        .await
        .body;
    assert_eq!((theirs["__v"].clone(), ids(&theirs).len()), (0.into(), 0));
}
