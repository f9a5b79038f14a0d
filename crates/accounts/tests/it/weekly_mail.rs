//! The notification preferences, the weekly goals mail and its one-click
//! unsubscribe link.

use keel_platform::sea_orm::{ConnectionTrait, Statement};
use reqwest::Method;

use crate::helpers::{Api, Resp};

/// What the app is told its public URL is; links in mails start with it.
const PUBLIC: &str = "http://127.0.0.1:9/accounts";

/// An app whose weekly mail runs every second (each run is the same week).
async fn every_second() -> Api {
    Api::with(&[
        ("KEEL_ACCOUNTS_WEEKLY_MAIL_CRON", "* * * * * *"),
        ("KEEL_ACCOUNTS_PUBLIC_URL", PUBLIC),
        ("KEEL_ACCOUNTS_APP_NAME", "Goalie"),
        ("KEEL_ACCOUNTS_APP_URL", "https://goalie.example/app"),
    ])
    .await
}

async fn ticks(api: &Api) -> i64 {
    let db = api.app.platform().db.clone();
    let conn = db.write();
    let row = conn
        .query_one_raw(Statement::from_string(
            conn.get_database_backend(),
            "SELECT COUNT(*) AS n FROM keel_cron_ticks WHERE name = 'accounts.weekly_mail'",
        ))
        .await
        .unwrap()
        .unwrap();
    row.try_get("", "n").unwrap()
}

/// POSTs (or GETs) the unsubscribe URL of a mail, with no session.
async fn open(api: &Api, method: Method, url: &str) -> Resp {
    let path = url
        .strip_prefix(PUBLIC)
        .expect("a link under the public URL");
    let req = api.app.http.request(method, api.url(path));
    let req = req
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click");
    crate::helpers::finish(req.send().await.unwrap()).await
}

#[tokio::test]
async fn the_preference_is_read_and_changed_and_a_change_counts_in_v() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let r = api.get("/account/notifications", &ada.token).await;
    assert_eq!(
        r.body,
        serde_json::json!({"notifications": {"email": {"weeklyGoals": true}}})
    );
    let v0 = api.me(&ada.token).await["__v"].as_i64().unwrap();
    let r = api
        .put(
            "/account/notifications",
            &ada.token,
            &[("weeklyGoals", "false")],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["notifications"]["email"]["weeklyGoals"], false);
    let me = api.me(&ada.token).await;
    assert_eq!(me["notifications"]["email"]["weeklyGoals"], false);
    assert_eq!(me["__v"].as_i64().unwrap(), v0 + 1);
    api.put(
        "/account/notifications",
        &ada.token,
        &[("weeklyGoals", "false")],
    )
    .await;
    assert_eq!(
        api.me(&ada.token).await["__v"].as_i64().unwrap(),
        v0 + 1,
        "same value"
    );
    let r = api
        .send_json(
            Method::PUT,
            "/account/notifications",
            Some(&ada.token),
            &serde_json::json!({"weeklyGoals": true}),
        )
        .await;
    assert_eq!(r.body["notifications"]["email"]["weeklyGoals"], true);
    for bad in [&[][..], &[("weeklyGoals", "maybe")][..]] {
        let r = api.put("/account/notifications", &ada.token, bad).await;
        assert_eq!(
            (r.status, r.code()),
            (400, "VALIDATION_ERROR"),
            "{}",
            r.text
        );
        assert!(r.text.contains("weeklyGoals"), "{}", r.text);
    }
}

#[tokio::test]
async fn each_verified_subscriber_gets_one_mail_a_week_with_a_working_unsubscribe_link() {
    let api = every_second().await;
    let ada = api.register("ada").await;
    let bob = api.register("bob").await;
    api.register("carol").await; // never verifies her address
    api.put(
        "/account/notifications",
        &bob.token,
        &[("weeklyGoals", "false")],
    )
    .await;
    for (title, done) in [("run", true), ("swim", false)] {
        let r = api
            .post("/goals/weekly", Some(&ada.token), &[("title", title)])
            .await;
        if done {
            let id = r.body["goal"]["_id"].as_str().unwrap();
            api.put(&format!("/goals/weekly/{id}/complete"), &ada.token, &[])
                .await;
        }
    }
    // Verified last: the mail runs every second and goes only to verified
    // addresses, so it cannot catch her week half written.
    api.sql("UPDATE accounts_users SET email_verified = true WHERE username IN ('ada', 'bob')")
        .await;
    let mail = api.mails_to("ada@example.com", 1).await.remove(0);
    let mail = if mail.subject.starts_with("Your week") {
        mail
    } else {
        api.mails_to("ada@example.com", 2)
            .await
            .into_iter()
            .find(|m| m.subject.starts_with("Your week"))
            .unwrap()
    };
    assert_eq!(mail.subject, "Your week in Goalie: 1 of 2 goals done");
    assert!(
        mail.body.contains("completed 1 goal; 1 is still open"),
        "{}",
        mail.body
    );
    assert!(
        mail.body.contains("https://goalie.example/app"),
        "{}",
        mail.body
    );
    assert!(
        mail.html
            .contains("<a href=\"https://goalie.example/app\">"),
        "{}",
        mail.html
    );
    let link = mail.header("List-Unsubscribe").unwrap();
    let url = link
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_owned();
    assert!(
        url.starts_with(&format!("{PUBLIC}/notifications/unsubscribe/")),
        "{url}"
    );
    assert_eq!(
        mail.header("List-Unsubscribe-Post").as_deref(),
        Some("List-Unsubscribe=One-Click")
    );
    assert!(mail.body.contains(&url) && mail.html.contains(&url));

    // More runs of the same week mail nobody again.
    let seen = ticks(&api).await;
    let later = keel_testkit::eventually_async(std::time::Duration::from_secs(10), || async {
        (ticks(&api).await >= seen + 2).then_some(())
    })
    .await;
    assert!(later.is_some(), "the schedule kept ticking");
    let weekly = |to: &str| {
        api.app
            .mails()
            .into_iter()
            .filter(|m| m.to == to && m.subject.starts_with("Your week"))
            .count()
    };
    assert_eq!(weekly("ada@example.com"), 1);
    assert_eq!(weekly("bob@example.com"), 0, "opted out");
    assert_eq!(weekly("carol@example.com"), 0, "address not verified");

    let page = open(&api, Method::GET, &url).await;
    assert_eq!(page.status, 200);
    assert!(
        page.text.contains("<form method=\"post\">"),
        "{}",
        page.text
    );
    assert_eq!(
        api.me(&ada.token).await["notifications"]["email"]["weeklyGoals"],
        true,
        "a GET changes nothing"
    );
    let r = open(&api, Method::POST, &url).await;
    assert_eq!((r.status, r.code()), (200, "UNSUBSCRIBED"), "{}", r.text);
    assert_eq!(
        api.me(&ada.token).await["notifications"]["email"]["weeklyGoals"],
        false
    );
    let again = open(&api, Method::POST, &url).await;
    assert_eq!(again.status, 200, "a second click is fine");
}

#[tokio::test]
async fn a_forged_or_altered_unsubscribe_token_is_refused_and_changes_nothing() {
    let api = Api::start().await;
    let ada = api.register("ada").await;
    let secrets = keel_platform::crypto::SecretBox::new(&[1; 32]);
    let forged = keel_accounts::domain::notifications::unsubscribe_token(&secrets, &ada.id);
    let ours = keel_accounts::domain::notifications::unsubscribe_token(
        &api.app.platform().secrets,
        &ada.id,
    );
    let mut altered = ours.clone().into_bytes();
    altered[10] = if altered[10] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    for token in [forged.as_str(), altered.as_str(), "x", &ada.id] {
        let r = open(
            &api,
            Method::POST,
            &format!("{PUBLIC}/notifications/unsubscribe/{token}"),
        )
        .await;
        assert_eq!(
            (r.status, r.code()),
            (400, "INVALID_TOKEN"),
            "{token}: {}",
            r.text
        );
    }
    assert_eq!(
        api.me(&ada.token).await["notifications"]["email"]["weeklyGoals"],
        true
    );
    let r = open(
        &api,
        Method::POST,
        &format!("{PUBLIC}/notifications/unsubscribe/{ours}"),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
}
