use crate::helpers::{Api, is_iso_millis, is_object_id};

#[tokio::test]
async fn a_weekly_goal_goes_through_its_states() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .post(
            "/goals/weekly",
            Some(&user.token),
            &[("title", "  Run 10k  ")],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["code"], 200);
    assert!(r.body["message"].is_string());
    let goal = &r.body["goal"];
    assert!(is_object_id(&goal["_id"]));
    assert_eq!(goal["user"], user.id.as_str());
    assert_eq!(goal["title"], "Run 10k");
    assert_eq!(goal["isCompleted"], false);
    assert_eq!(goal["__v"], 0);
    assert!(is_iso_millis(&goal["createdAt"]) && is_iso_millis(&goal["updatedAt"]));
    let id = goal["_id"].as_str().unwrap().to_owned();

    let got = api.get(&format!("/goals/weekly/{id}"), &user.token).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.body["_id"], id.as_str(), "the goal object itself");

    let r = api
        .put(&format!("/goals/weekly/{id}/complete"), &user.token, &[])
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        serde_json::json!({"code": "COMPLETED", "isCompleted": true})
    );
    let g = api
        .get(&format!("/goals/weekly/{id}"), &user.token)
        .await
        .body;
    assert_eq!(
        (g["isCompleted"].clone(), g["__v"].clone()),
        (true.into(), 1.into())
    );

    let r = api
        .put(&format!("/goals/weekly/{id}/complete"), &user.token, &[])
        .await;
    assert_eq!(r.status, 200, "completing again is fine");
    assert_eq!(
        api.get(&format!("/goals/weekly/{id}"), &user.token)
            .await
            .body["__v"],
        1,
        "and changes nothing"
    );

    let r = api
        .put(
            &format!("/goals/weekly/{id}/not-complete"),
            &user.token,
            &[],
        )
        .await;
    assert_eq!(
        r.body,
        serde_json::json!({"code": "NOT_COMPLETED", "isCompleted": false})
    );
    let g = api
        .get(&format!("/goals/weekly/{id}"), &user.token)
        .await
        .body;
    assert_eq!(
        (g["isCompleted"].clone(), g["__v"].clone()),
        (false.into(), 2.into())
    );

    let r = api
        .delete(&format!("/goals/weekly/{id}"), &user.token)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["code"], 200);
    assert!(r.body["message"].is_string());
    assert_eq!(
        api.get(&format!("/goals/weekly/{id}"), &user.token)
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn weekly_goals_are_listed_newest_first() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    for t in ["one", "two", "three"] {
        api.post("/goals/weekly", Some(&user.token), &[("title", t)])
            .await;
    }
    let r = api.get("/goals/weekly", &user.token).await;
    assert_eq!(r.body["code"], 200);
    let titles: Vec<&str> = r.body["goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["three", "two", "one"]);
}

#[tokio::test]
async fn a_yearly_goal_is_created_listed_read_and_removed() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let r = api
        .post(
            "/goals/yearly",
            Some(&user.token),
            &[("title", "Marathon"), ("completeBy", "12/31/2026")],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.body["message"].is_string());
    let goal = &r.body["goal"];
    assert_eq!(goal["completeBy"], "2026-12-31T00:00:00.000Z");
    assert_eq!(goal["weekly"], serde_json::json!([]));
    assert_eq!(goal["isCompleted"], false);
    let id = goal["_id"].as_str().unwrap().to_owned();
    api.post(
        "/goals/yearly",
        Some(&user.token),
        &[("title", "Second"), ("completeBy", "1/2/2027")],
    )
    .await;

    let list = api.get("/goals/yearly", &user.token).await;
    assert_eq!(list.body["total"], 2);
    assert_eq!(list.body["goals"][0]["title"], "Second");
    let got = api.get(&format!("/goals/yearly/{id}"), &user.token).await;
    assert_eq!(got.body["title"], "Marathon");

    let r = api
        .delete(&format!("/goals/yearly/{id}"), &user.token)
        .await;
    assert_eq!((r.status, r.code()), (200, "REMOVED"));
    assert_eq!(
        api.get(&format!("/goals/yearly/{id}"), &user.token)
            .await
            .status,
        404
    );
    assert_eq!(api.get("/goals/yearly", &user.token).await.body["total"], 1);
}

#[tokio::test]
async fn another_users_goals_cannot_be_read_completed_or_deleted() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let bob = api.register("bob").await;
    let w = api
        .post("/goals/weekly", Some(&ada.token), &[("title", "mine")])
        .await;
    let wid = w.body["goal"]["_id"].as_str().unwrap().to_owned();
    let y = api
        .post(
            "/goals/yearly",
            Some(&ada.token),
            &[("title", "mine"), ("completeBy", "12/31/2026")],
        )
        .await;
    let yid = y.body["goal"]["_id"].as_str().unwrap().to_owned();
    let missing = "0123456789abcdef01234567";
    for path in [
        format!("/goals/weekly/{wid}"),
        format!("/goals/yearly/{yid}"),
        format!("/goals/weekly/{missing}"),
    ] {
        let r = api.get(&path, &bob.token).await;
        assert_eq!((r.status, r.code()), (404, "NOT_FOUND"), "{path}");
    }
    let theirs = api
        .put(&format!("/goals/weekly/{wid}/complete"), &bob.token, &[])
        .await;
    let nobodys = api
        .put(
            &format!("/goals/weekly/{missing}/complete"),
            &bob.token,
            &[],
        )
        .await;
    assert_eq!(
        (theirs.status, &theirs.body),
        (404, &nobodys.body),
        "indistinguishable from a missing goal"
    );
    assert_eq!(
        api.put(
            &format!("/goals/weekly/{wid}/not-complete"),
            &bob.token,
            &[]
        )
        .await
        .status,
        404
    );
    assert_eq!(
        api.delete(&format!("/goals/weekly/{wid}"), &bob.token)
            .await
            .status,
        404
    );
    assert_eq!(
        api.delete(&format!("/goals/yearly/{yid}"), &bob.token)
            .await
            .status,
        404
    );
    assert_eq!(
        api.get("/goals/weekly", &bob.token).await.body["goals"],
        serde_json::json!([])
    );
    assert_eq!(api.get("/goals/yearly", &bob.token).await.body["total"], 0);
    assert_eq!(
        api.get(&format!("/goals/weekly/{wid}"), &ada.token)
            .await
            .body["isCompleted"],
        false
    );
}

#[tokio::test]
async fn goal_input_is_validated_field_by_field() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    let long = "x".repeat(201);
    let weekly: [&[(&str, &str)]; 3] = [&[], &[("title", "   ")], &[("title", &long)]];
    for form in weekly {
        let r = api.post("/goals/weekly", Some(&user.token), form).await;
        assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"), "{form:?}");
        assert!(r.body["message"].as_str().unwrap().starts_with("title"));
    }
    for by in ["02/30/2026", "2026-12-31", "13/01/2026", "tomorrow", ""] {
        let r = api
            .post(
                "/goals/yearly",
                Some(&user.token),
                &[("title", "t"), ("completeBy", by)],
            )
            .await;
        assert_eq!((r.status, r.code()), (400, "VALIDATION_ERROR"), "{by:?}");
        assert!(
            r.body["message"]
                .as_str()
                .unwrap()
                .starts_with("completeBy"),
            "{}",
            r.text
        );
    }
}

#[tokio::test]
async fn malformed_goal_ids_are_400() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    for path in [
        "/goals/weekly/123",
        "/goals/weekly/zzzzzzzzzzzzzzzzzzzzzzzz/complete",
        "/goals/yearly/abc",
    ] {
        let r = api.get(path, &user.token).await;
        let r = if r.status == 405 {
            api.put(path, &user.token, &[]).await
        } else {
            r
        };
        assert_eq!(
            (r.status, r.code()),
            (400, "INVALID_ID"),
            "{path}: {}",
            r.text
        );
    }
}

/// Gives the user `n` weekly goals straight in the database.
async fn hold_weekly_goals(api: &Api, user_id: &str, n: usize) {
    use keel_accounts::entity::weekly_goal;
    use keel_platform::sea_orm::{EntityTrait, Set};
    let now = chrono::Utc::now();
    let rows = (0..n).map(|i| weekly_goal::ActiveModel {
        id: Set(format!("{i:024x}")),
        user_id: Set(user_id.to_owned()),
        title: Set(format!("goal {i}")),
        is_completed: Set(false),
        yearly_goal_id: Set(None),
        revision: Set(0),
        created_at: Set(now),
        updated_at: Set(now),
    });
    weekly_goal::Entity::insert_many(rows)
        .exec(api.app.platform().db.write())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_user_holds_at_most_a_thousand_goals_of_a_kind() {
    let api = Api::start().await;
    let user = api.register("ada").await;
    hold_weekly_goals(&api, &user.id, 999).await;
    let r = api
        .post(
            "/goals/weekly",
            Some(&user.token),
            &[("title", "the thousandth")],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = api
        .post(
            "/goals/weekly",
            Some(&user.token),
            &[("title", "one too many")],
        )
        .await;
    assert_eq!((r.status, r.code()), (409, "GOAL_LIMIT_REACHED"));
    let r = api
        .post(
            "/goals/yearly",
            Some(&user.token),
            &[("title", "other kind"), ("completeBy", "12/31/2026")],
        )
        .await;
    assert_eq!(r.status, 200, "the limit is per kind");
}

#[tokio::test]
async fn concurrent_creates_at_the_limit_never_pass_a_thousand() {
    use keel_accounts::entity::weekly_goal;
    use keel_platform::sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
    let api = Api::start().await;
    let user = api.register("grace").await;
    hold_weekly_goals(&api, &user.id, 990).await;
    let tries = (0..30).map(|i| {
        let title = format!("late {i}");
        let api = &api;
        let token = user.token.clone();
        async move {
            api.post("/goals/weekly", Some(&token), &[("title", title.as_str())])
                .await
                .status
        }
    });
    let statuses = futures::future::join_all(tries).await;
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        10,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 409).count(),
        20,
        "{statuses:?}"
    );
    let held = weekly_goal::Entity::find()
        .filter(weekly_goal::Column::UserId.eq(user.id.as_str()))
        .count(api.app.platform().db.read())
        .await
        .unwrap();
    assert_eq!(held, 1000);
}

/// A user's goals are read in list order from an index, newest first,
/// without a sort (SQLite's plan; PostgreSQL picks by table size).
#[tokio::test]
async fn a_goal_list_is_read_from_an_index_in_its_order() {
    use keel_platform::sea_orm::{ConnectionTrait, Statement};
    let api = Api::start().await;
    let db = &api.app.platform().db;
    if db.is_postgres() {
        return;
    }
    for table in ["accounts_weekly_goals", "accounts_yearly_goals"] {
        let plan = db
            .read()
            .query_all_raw(Statement::from_string(
                db.backend(),
                format!(
                    "EXPLAIN QUERY PLAN SELECT * FROM {table} WHERE user_id = 'u' \
                     ORDER BY created_at DESC, id DESC"
                ),
            ))
            .await
            .unwrap()
            .iter()
            .map(|r| r.try_get::<String>("", "detail").unwrap())
            .collect::<Vec<_>>()
            .join("; ");
        assert!(plan.contains(&format!("{table}_user_created")), "{plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    }
}

#[tokio::test]
async fn concurrent_creates_of_two_users_are_limited_each_by_their_own_goals() {
    let api = Api::start().await;
    let full = api.register("full").await;
    let free = api.register("free").await;
    hold_weekly_goals(&api, &full.id, 1000).await;
    // Interleaved, so group commits hold creates of both.
    let tries = (0..20).map(|i| {
        let api = &api;
        let token = if i % 2 == 0 { &full.token } else { &free.token }.clone();
        async move {
            let r = api
                .post("/goals/weekly", Some(&token), &[("title", "both")])
                .await;
            (i % 2 == 0, r.status)
        }
    });
    for (of_full, status) in futures::future::join_all(tries).await {
        assert_eq!(status, if of_full { 409 } else { 200 });
    }
}
