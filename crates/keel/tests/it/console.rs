//! The operator console over HTTP: sign-in with a password and a TOTP
//! code at the platform's guard, the session's cookie and CSRF token,
//! roles, the jobs, health and audit pages' API.

use keel_platform::console::Role;
use keel_testkit::TestApp;
use reqwest::Method;
use serde_json::{Value, json};

use crate::console_kit::{Console, PASSWORD, operator, sign_in, sign_in_raw};

async fn app() -> TestApp {
    TestApp::builder()
        .service("accounts")
        .service("console")
        .spawn()
        .await
}

#[tokio::test]
async fn an_operator_signs_in_with_password_and_code_and_sees_their_roles_and_areas() {
    let app = app().await;
    let ada = operator(&app, "ada", &[Role::Users, Role::Jobs]).await;
    let resp = sign_in_raw(
        &app,
        &json!({ "name": "ADA", "password": PASSWORD, "code": ada.code(0) }),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let cookie = resp.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("keel_console="), "{cookie}");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert_eq!(resp.headers()["cache-control"], "no-store");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["operator"]["name"], "ada");
    assert_eq!(body["operator"]["roles"], json!(["users", "jobs"]));
    assert_eq!(body["operator"]["areas"][0]["name"], "users");

    let console = Console {
        app: &app,
        cookie: cookie.split(';').next().unwrap().to_owned(),
        csrf: body["csrf"].as_str().unwrap().to_owned(),
    };
    let (status, me) = console.get("/console/v1/session").await;
    assert_eq!((status, me["name"].clone()), (200, json!("ada")));
    assert_eq!(
        console.audit("operator_signed_in").await[0]["actor"],
        "operator:ada"
    );
}

#[tokio::test]
async fn a_wrong_code_a_wrong_password_a_used_code_and_a_disabled_operator_are_refused_alike() {
    let app = app().await;
    let ada = operator(&app, "ada", &[]).await;
    let wrong_code = if ada.code(0) == "000000" {
        "111111"
    } else {
        "000000"
    };
    for body in [
        json!({ "name": "ada", "password": PASSWORD, "code": wrong_code }),
        json!({ "name": "ada", "password": "not the passphrase", "code": ada.code(0) }),
        json!({ "name": "nobody", "password": PASSWORD, "code": ada.code(0) }),
    ] {
        let resp = sign_in_raw(&app, &body).await;
        assert_eq!(resp.status(), 401);
        assert!(resp.headers().get("set-cookie").is_none());
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["code"], "bad_credentials", "{body}");
    }
    let console = sign_in(&app, &ada).await;
    // The code just used does not work twice.
    let again = json!({ "name": "ada", "password": PASSWORD, "code": ada.code(0) });
    assert_eq!(sign_in_raw(&app, &again).await.status(), 401);
    let refused = console.audit("operator_sign_in_refused").await;
    assert_eq!(refused.len(), 4, "{refused:?}");
    assert!(
        refused
            .iter()
            .any(|e| e["actor"].as_str().unwrap().starts_with("unknown "))
    );

    let p = app.platform();
    keel_console::domain::operators::set_disabled(&p.db, "ada", true)
        .await
        .unwrap();
    let later = json!({ "name": "ada", "password": PASSWORD, "code": ada.code(1) });
    assert_eq!(sign_in_raw(&app, &later).await.status(), 401);
    let (status, body) = console.get("/console/v1/session").await;
    assert_eq!(
        (status, body["code"].clone()),
        (401, json!("not_signed_in")),
        "disabling ends the session"
    );
}

#[tokio::test]
async fn sign_in_is_throttled_after_five_attempts_for_one_name() {
    let app = app().await;
    operator(&app, "ada", &[]).await;
    let body = json!({ "name": "ada", "password": "wrong", "code": "123456" });
    for _ in 0..5 {
        assert_eq!(sign_in_raw(&app, &body).await.status(), 401);
    }
    let resp = sign_in_raw(&app, &body).await;
    assert_eq!(resp.status(), 429);
    assert!(resp.headers().contains_key("retry-after"));
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["code"], "throttled");
}

#[tokio::test]
async fn bad_sign_in_bodies_are_refused_naming_the_field() {
    let app = app().await;
    for (body, field) in [
        (json!({ "name": "ada", "password": "x" }), "code"),
        (
            json!({ "name": 7, "password": "x", "code": "123456" }),
            "name",
        ),
        (
            json!({ "name": "ada", "password": "x", "code": "123456", "extra": 1 }),
            "extra",
        ),
    ] {
        let resp = sign_in_raw(&app, &body).await;
        assert_eq!(resp.status(), 400, "{body}");
        let answer: Value = resp.json().await.unwrap();
        assert_eq!(answer["code"], "invalid_input", "{answer}");
        assert!(
            answer["message"].as_str().unwrap().contains(field),
            "{answer}"
        );
    }
}

#[tokio::test]
async fn nothing_but_the_page_and_sign_in_answers_without_a_session() {
    let app = app().await;
    for path in [
        "/console/v1/session",
        "/console/v1/health",
        "/console/v1/jobs",
        "/console/v1/audit",
        "/console/v1/users?q=a",
    ] {
        let resp = app
            .http
            .get(app.root("console", path))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 401, "{path}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["code"], "not_signed_in", "{path}");
    }
    let page = app.http.get(app.root("console", "/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
}

#[tokio::test]
async fn a_request_that_changes_something_needs_the_sessions_csrf_token() {
    let app = app().await;
    let ada = operator(&app, "ada", &[Role::Jobs]).await;
    let console = sign_in(&app, &ada).await;
    let forged = Console {
        app: &app,
        cookie: console.cookie.clone(),
        csrf: "not-the-token".to_owned(),
    };
    let (status, body) = forged
        .call(Method::DELETE, "/console/v1/session", None)
        .await;
    assert_eq!(
        (status, body["code"].clone()),
        (403, json!("csrf_token_invalid"))
    );
    let (status, _) = console
        .call(Method::DELETE, "/console/v1/session", None)
        .await;
    assert_eq!(status, 204);
    let (status, _) = console.get("/console/v1/session").await;
    assert_eq!(status, 401, "signed out");
}

#[tokio::test]
async fn an_operator_without_the_jobs_role_is_refused_the_jobs_page() {
    let app = app().await;
    let bo = operator(&app, "bo", &[Role::Users]).await;
    let console = sign_in(&app, &bo).await;
    let (status, body) = console.get("/console/v1/jobs").await;
    assert_eq!(
        (status, body["code"].clone()),
        (403, json!("forbidden")),
        "{body}"
    );
    assert!(body["message"].as_str().unwrap().contains("jobs role"));
    let (status, _) = console.post("/console/v1/jobs/1/retry", json!({})).await;
    assert_eq!(status, 403);
}

/// A weekly-mail job that gave up, as the worker leaves one.
async fn failed_job(app: &TestApp) -> i64 {
    use keel_platform::jobs::entity;
    use keel_platform::sea_orm::{ActiveModelTrait, Set};
    let now = chrono::Utc::now();
    let row = entity::ActiveModel {
        kind: Set("accounts.weekly_mail".to_owned()),
        payload: Set(json!({ "week": "2026-W01", "at": now }).to_string()),
        status: Set(entity::FAILED.to_owned()),
        attempts: Set(5),
        max_attempts: Set(5),
        run_at: Set(now),
        last_error: Set(Some("SMTP refused: 421 try later".to_owned())),
        created_at: Set(now),
        ..Default::default()
    }
    .insert(app.platform().db.write())
    .await
    .unwrap();
    row.id
}

#[tokio::test]
async fn a_failed_job_is_listed_with_its_error_and_runs_again_when_retried() {
    let app = TestApp::builder()
        .service("accounts")
        .service("console")
        .env("KEEL_ACCOUNTS_PUBLIC_URL", "https://accounts.example.com")
        .spawn()
        .await;
    let jo = operator(&app, "jo", &[Role::Jobs]).await;
    let console = sign_in(&app, &jo).await;
    let id = failed_job(&app).await;
    let (status, jobs) = console.get("/console/v1/jobs").await;
    assert_eq!(status, 200, "{jobs}");
    let kind = jobs["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "accounts.weekly_mail")
        .cloned()
        .unwrap();
    assert_eq!(kind["failed"], 1);
    assert_eq!(jobs["failed"][0]["id"], id);
    assert_eq!(
        jobs["failed"][0]["last_error"],
        "SMTP refused: 421 try later"
    );

    let (status, done) = console
        .post(&format!("/console/v1/jobs/{id}/retry"), json!({}))
        .await;
    assert_eq!((status, done["jobs"].clone()), (200, json!(1)), "{done}");
    let ran = keel_testkit::eventually_async(std::time::Duration::from_secs(30), || async {
        let (_, jobs) = console.get("/console/v1/jobs").await;
        let gone = jobs["failed"].as_array().unwrap().is_empty()
            && jobs["kinds"]
                .as_array()
                .unwrap()
                .iter()
                .all(|k| k["kind"] != "accounts.weekly_mail" || k["queued"] == 0);
        gone.then_some(())
    })
    .await;
    let (_, jobs) = console.get("/console/v1/jobs").await;
    assert!(ran.is_some(), "the retried job ran: {jobs}");
    let (status, body) = console
        .post(&format!("/console/v1/jobs/{id}/retry"), json!({}))
        .await;
    assert_eq!((status, body["code"].clone()), (404, json!("not_found")));
    assert_eq!(
        console.audit("job_retried").await[0]["subject"],
        id.to_string()
    );
}

#[tokio::test]
async fn failed_jobs_of_a_kind_are_discarded_together() {
    let app = app().await;
    let jo = operator(&app, "jo", &[Role::Jobs]).await;
    let console = sign_in(&app, &jo).await;
    failed_job(&app).await;
    failed_job(&app).await;
    let (status, done) = console
        .post(
            "/console/v1/jobs/kinds/accounts.weekly_mail/discard",
            json!({}),
        )
        .await;
    assert_eq!((status, done["jobs"].clone()), (200, json!(2)), "{done}");
    let (_, jobs) = console.get("/console/v1/jobs").await;
    assert!(jobs["failed"].as_array().unwrap().is_empty());
    let entry = &console.audit("jobs_of_kind_discarded").await[0];
    assert_eq!(entry["detail"]["jobs"], 2);
}

#[tokio::test]
async fn health_shows_readiness_the_version_migrations_and_the_database() {
    let app = app().await;
    let ops = operator(&app, "ops", &[]).await;
    let console = sign_in(&app, &ops).await;
    let (status, health) = console.get("/console/v1/health").await;
    assert_eq!(status, 200, "{health}");
    assert_eq!(health["readiness"]["status"], "ok", "{health}");
    assert_eq!(health["readiness"]["checks"]["database"], "ok");
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
    let migrated: Vec<&str> = health["migrations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["component"].as_str().unwrap())
        .collect();
    assert!(
        migrated.contains(&"console") && migrated.contains(&"accounts"),
        "{migrated:?}"
    );
    if app.is_postgres() {
        assert_eq!(health["database"], "postgres");
    } else {
        assert_eq!(health["database"], "sqlite");
        assert!(health["database_bytes"].as_u64().unwrap() > 0);
    }
    assert_eq!(health["services"], json!(["accounts", "console"]));
    assert!(health["quotebot"].is_null(), "no quotebot named: {health}");
    // The last hour of traffic, read off keel's own metrics.
    for _ in 0..5 {
        app.http
            .get(app.url("accounts", "/nowhere"))
            .send()
            .await
            .unwrap();
    }
    let (_, health) = console.get("/console/v1/health").await;
    let last = health["traffic"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap();
    assert!(
        last["requests_per_second"].as_f64().unwrap() > 0.0,
        "{last}"
    );
    assert!(last["p99_seconds"].as_f64().is_some(), "{last}");
}

#[tokio::test]
async fn schemathesis_finds_nothing_the_consoles_document_does_not_say() {
    // svc's areas are in the document too.
    let app = crate::console_kit::every_area().await;
    let ops = operator(&app, "ops", &Role::ALL).await;
    let console = sign_in(&app, &ops).await;
    failed_job(&app).await;
    // Devices for svc's sends to reach.
    let (status, _) = crate::console_svc::import(&console, 4).await;
    assert_eq!(status, 200);
    let cookie = console
        .cookie
        .trim_start_matches("keel_console=")
        .to_owned();
    keel_testkit::Schemathesis::new(
        app.root("console", "/openapi.json"),
        app.root("console", ""),
    )
    .api_key("console_session", cookie)
    .api_key("console_csrf", console.csrf.clone())
    // Signing out, or ending the operator's own sessions (GET
    // /console/v1/operators names it), would end the run's session.
    .arg("--exclude-operation-id")
    .arg("sign_out")
    .arg("--exclude-operation-id")
    .arg("end_sessions")
    .passes()
    .await;
}

#[tokio::test]
async fn an_operator_with_the_operators_role_adds_one_who_then_signs_in_and_manages_them() {
    let app = app().await;
    let root = operator(&app, "root", &[Role::Operators]).await;
    let console = sign_in(&app, &root).await;
    let (status, added) = console
        .post(
            "/console/v1/operators",
            json!({ "name": "cy", "roles": ["jobs"] }),
        )
        .await;
    assert_eq!(status, 201, "{added}");
    let cy = crate::console_kit::Operator {
        name: "cy".to_owned(),
        secret: keel_platform::totp::from_base32(added["totp_secret"].as_str().unwrap()).unwrap(),
    };
    let password = added["password"].as_str().unwrap();
    let resp = sign_in_raw(
        &app,
        &json!({ "name": "cy", "password": password, "code": cy.code(0) }),
    )
    .await;
    assert_eq!(resp.status(), 200);

    let (status, _) = console
        .post(
            "/console/v1/operators",
            json!({ "name": "cy", "roles": [] }),
        )
        .await;
    assert_eq!(status, 409, "the name is taken");
    let (status, body) = console
        .post(
            "/console/v1/operators",
            json!({ "name": "dee", "roles": ["wizard"] }),
        )
        .await;
    assert_eq!(
        (status, body["code"].clone()),
        (400, json!("invalid_input")),
        "{body}"
    );
    let (status, row) = console
        .call(
            Method::PUT,
            "/console/v1/operators/cy/roles",
            Some(json!({ "roles": ["users", "jobs"] })),
        )
        .await;
    assert_eq!(
        (status, row["roles"].clone()),
        (200, json!(["users", "jobs"]))
    );
    let (status, row) = console
        .post("/console/v1/operators/cy/disable", json!({}))
        .await;
    assert_eq!((status, row["disabled"].clone()), (200, json!(true)));
    let (status, body) = console
        .post("/console/v1/operators/root/disable", json!({}))
        .await;
    assert_eq!(
        (status, body["code"].clone()),
        (409, json!("conflict")),
        "not oneself"
    );
    let (status, list) = console.get("/console/v1/operators").await;
    assert_eq!(status, 200);
    assert_eq!(list["operators"].as_array().unwrap().len(), 2);
    let (status, _) = console
        .call(Method::DELETE, "/console/v1/operators/cy", None)
        .await;
    assert_eq!(status, 204);
    let roles = &console.audit("operator_roles_set").await[0];
    assert_eq!(roles["before"]["roles"], json!(["jobs"]));
    assert_eq!(roles["actor"], "operator:root");
    assert!(
        !console.audit("operator_added").await[0]
            .to_string()
            .contains(password)
    );

    let jo = operator(&app, "jo", &[Role::Jobs]).await;
    let console = sign_in(&app, &jo).await;
    let (status, _) = console.get("/console/v1/operators").await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn the_audit_log_is_filtered_and_exported_as_csv_a_spreadsheet_will_not_run() {
    let app = app().await;
    let ops = operator(&app, "ops", &[]).await;
    let console = sign_in(&app, &ops).await;
    // A name typed at sign-in lands in the log as its pseudonym; an entry
    // of the command line with a formula-looking subject is neutralised.
    let p = app.platform();
    let entry =
        keel_platform::audit::Entry::new("console", "operator_added").on("=HYPERLINK(\"x\")");
    keel_platform::audit::record(&p.db, &keel_platform::audit::Actor::cli(), entry).await;
    let (status, page) = console.get("/console/v1/audit?actor=cli").await;
    assert_eq!(status, 200);
    assert_eq!(page["total"], 1, "{page}");
    let resp = app
        .http
        .get(app.root("console", "/console/v1/audit/export?actor=cli"))
        .header("cookie", &console.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/csv; charset=utf-8");
    let csv = resp.text().await.unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "id,at,service,actor,action,subject,before,after,detail,address"
    );
    assert_eq!(lines.len(), 2, "{csv}");
    assert!(lines[1].contains("'=HYPERLINK"), "{csv}");
    assert_eq!(console.audit("audit_exported").await.len(), 1);
    let (status, body) = console
        .get(&format!("/console/v1/audit?actor={}", "x".repeat(201)))
        .await;
    assert_eq!(
        (status, body["code"].clone()),
        (400, json!("invalid_input"))
    );
}

#[tokio::test]
async fn health_shows_each_providers_last_answer() {
    let smtp = keel_testkit::FakeSmtp::start().await;
    let app = TestApp::builder()
        .service("accounts")
        .service("console")
        .env("KEEL_SMTP_URL", smtp.url())
        .env("KEEL_MAIL_FROM", "keel <no-reply@example.com>")
        // The refusal stays the last answer for a while before the retry.
        .env("KEEL_JOB_RETRY_BASE_MS", "3000")
        .spawn()
        .await;
    let ops = operator(&app, "ops", &[]).await;
    let console = sign_in(&app, &ops).await;
    smtp.fail_next(1);
    let r = app
        .http
        .post(app.url("accounts", "/auth/register"))
        .form(&[
            ("username", "ada"),
            ("email", "ada@example.com"),
            ("password", "correct horse battery"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let refused = keel_testkit::eventually_async(std::time::Duration::from_secs(20), || async {
        let (_, health) = console.get("/console/v1/health").await;
        let smtp = health["providers"]
            .as_array()?
            .iter()
            .find(|p| p["peer"] == "smtp")?
            .clone();
        (smtp["ok"] == false).then_some(smtp)
    })
    .await;
    assert_eq!(refused.unwrap()["what"], "refused (451)");
    let accepted = keel_testkit::eventually_async(std::time::Duration::from_secs(20), || async {
        let (_, health) = console.get("/console/v1/health").await;
        let smtp = health["providers"]
            .as_array()?
            .iter()
            .find(|p| p["peer"] == "smtp")?
            .clone();
        (smtp["ok"] == true).then_some(smtp)
    })
    .await;
    assert_eq!(
        accepted.unwrap()["what"],
        "accepted",
        "the retry went through"
    );
}

#[tokio::test]
async fn health_says_when_quotebot_does_not_answer_and_a_bad_quotebot_url_stops_the_start() {
    let app = TestApp::builder()
        .service("console")
        .env("KEEL_CONSOLE_QUOTEBOT_URL", "http://127.0.0.1:9")
        .spawn()
        .await;
    let ops = operator(&app, "ops", &[]).await;
    let console = sign_in(&app, &ops).await;
    let (status, health) = console.get("/console/v1/health").await;
    assert_eq!(status, 200);
    let gateway = &health["quotebot"];
    assert_eq!(gateway["answered"], false, "{health}");
    assert!(
        gateway["what"]
            .as_str()
            .is_some_and(|w| w.contains("127.0.0.1")),
        "{gateway}"
    );

    let src =
        keel_platform::config::Source::from_pairs([("KEEL_CONSOLE_QUOTEBOT_URL", "quotebot:3000")]);
    let refused = keel_console::config::Config::from_source(&src).unwrap_err();
    assert!(
        refused.to_string().contains("KEEL_CONSOLE_QUOTEBOT_URL"),
        "{refused}"
    );
}
