//! What a first-time admin trips on: a send's time left empty, an audience
//! that matches no one, a session ended elsewhere.

use super::{Console, clean};
use crate::harness::{Browser, Screen};

fn disabled(css: &str) -> String {
    format!("return document.querySelector('{css}').disabled")
}

#[tokio::test]
async fn a_send_is_reviewed_only_with_its_time_chosen_and_someone_to_reach() {
    let c = Console::start().await;
    for (screen, tag) in [
        (Screen::Phone(390, 844), "phone"),
        (Screen::Desktop(1280, 900), "desktop"),
    ] {
        let b = Browser::on(screen).await;
        c.sign_in(&b, "boss", &c.password).await;
        b.wait_text("h1", "Sends").await;
        b.goto(&format!("{}#/compose", c.url)).await;
        b.wait_text("#recipients", "6 devices").await;
        b.fill("#title", "Timed").await;
        b.fill("#body", "When it says").await;
        // "Now": neither box can be filled in.
        assert_eq!(b.js(&disabled("#send-at")).await, true);
        assert_eq!(b.js(&disabled("#local-time")).await, true);

        b.click("input[name=when][value=at]").await;
        assert_eq!(b.js(&disabled("#send-at")).await, false);
        assert_eq!(b.js(&disabled("#local-time")).await, true);
        b.click("#compose button[type=submit]").await;
        b.wait_text("#compose-error", "Choose the date and time")
            .await;
        b.js("document.querySelector('#send-at').value = '2001-01-01T09:00';")
            .await;
        b.click("#compose button[type=submit]").await;
        b.wait_text("#compose-error", "That time has passed").await;

        b.click("input[name=when][value=local]").await;
        assert_eq!(b.js(&disabled("#send-at")).await, true);
        b.click("#compose button[type=submit]").await;
        b.wait_text("#compose-error", "Choose the time of day")
            .await;
        clean(&b, "compose with its time missing").await;
        b.screenshot(&format!("svc-console-compose-no-time-{tag}"))
            .await;

        b.click("input[name=when][value=now]").await;
        b.fill("#push-tokens", "ExponentPushToken[nobody-has-this]")
            .await;
        b.js("document.querySelector('#push-tokens').dispatchEvent(new Event('input', {bubbles: true}));")
            .await;
        b.wait_text("#recipients", "0 devices").await;
        b.click("#compose button[type=submit]").await;
        b.wait_text("#compose-error", "would reach no one").await;
        assert_eq!(
            b.js("return document.querySelector('#confirm').hidden")
                .await,
            true,
            "no review of a send to no one"
        );
        b.close().await;
    }
    assert!(c.expo.delivered().is_empty());
}

#[tokio::test]
async fn when_the_session_ends_elsewhere_each_page_returns_to_sign_in() {
    let c = Console::start().await;
    let b = Browser::start(1280, 900).await;
    for page in ["#/sends", "#/stats", "#/devices", "#/forms"] {
        c.sign_in(&b, "boss", &c.password).await;
        b.wait_text("h1", "Sends").await;
        c.end_sessions("boss").await;
        b.goto(&format!("{}{page}", c.url)).await;
        // The same hash again is no navigation: ask for the view anyway.
        b.js("window.dispatchEvent(new HashChangeEvent('hashchange'));")
            .await;
        b.wait_text("h1", "Sign in").await;
        b.wait_text("#sign-in-note", "Your session has ended").await;
    }
    // Signing out on purpose is said as a plain line, not an alert.
    c.sign_in(&b, "boss", &c.password).await;
    b.wait_text("h1", "Sends").await;
    b.click("#sign-out").await;
    b.wait_text("#sign-in-note", "Signed out.").await;
    assert_eq!(
        b.js("return document.querySelector('#sign-in-error').hidden")
            .await,
        true
    );
    clean(&b, "signed out").await;
    b.close().await;
}

#[tokio::test]
async fn at_phone_width_no_page_runs_off_the_screen() {
    let c = Console::start().await;
    let b = Browser::on(Screen::Phone(390, 844)).await;
    c.sign_in(&b, "boss", &c.password).await;
    b.wait_text("h1", "Sends").await;
    let fits = "return document.documentElement.scrollWidth <= window.innerWidth";
    for (page, title) in [
        ("#/sends", "Sends"),
        ("#/compose", "New send"),
        ("#/stats", "Statistics"),
        ("#/devices", "Devices"),
        ("#/forms", "Forms"),
        ("#/settings", "Settings"),
        ("#/svc-admins", "svc admins"),
        ("#/audit", "Audit log"),
    ] {
        b.goto(&format!("{}{page}", c.url)).await;
        b.wait_text("h1", title).await;
        assert_eq!(b.js(fits).await, true, "{page} is wider than the phone");
    }
    b.goto(&format!("{}#/devices", c.url)).await;
    b.wait_text("h1", "Devices").await;
    let csv = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
    let wide = "x".repeat(60);
    std::fs::write(
        csv.path(),
        format!("token,kind,device_model,os_version,app_version,locale,timezone,user_label\nExponentPushToken[a],ios,{wide},18.1,2.0.0,en-US,Europe/Berlin,{wide}\n"),
    )
    .unwrap();
    b.element("#import-file")
        .await
        .send_keys(&csv.path().display().to_string())
        .await
        .unwrap();
    b.wait_text(
        "#preview-warning",
        "no push_token and no device_type column",
    )
    .await;
    assert_eq!(
        b.js(fits).await,
        true,
        "the import preview is wider than the phone"
    );
    clean(&b, "import preview with no header").await;
    b.screenshot("svc-console-import-no-header-phone").await;
    b.close().await;
}

#[tokio::test]
async fn a_new_form_says_the_api_does_not_serve_it_until_it_is_allow_listed() {
    let c = Console::start().await;
    let b = Browser::start(1280, 900).await;
    c.sign_in(&b, "boss", &c.password).await;
    b.wait_text("h1", "Sends").await;
    b.goto(&format!("{}#/forms/new", c.url)).await;
    b.wait_text("h1", "New form").await;
    b.fill("#form-id", "7").await;
    b.fill("#form-title", "Contact").await;
    b.click("#add-field").await;
    b.js("const r = document.querySelector('.field-row'); r.querySelector('.field-id').value = 'email';")
        .await;
    b.click("#form-editor button[type=submit]").await;
    b.wait_text("h1", "Contact").await;
    b.wait_text("#not-served", "Apps get 404 from the form API for form 7")
        .await;
    clean(&b, "a form not served").await;
    b.screenshot("svc-console-form-not-served").await;
    b.click("#serve-form").await;
    b.wait_text("#served", "Form 7 is served").await;
    let settings: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/admin/settings", c.api))
        .basic_auth("boss", Some(&c.app_password))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(settings["forms_allowlist"], serde_json::json!(["7"]));
    // A second editor numbers its fields from 1 again.
    b.goto(&format!("{}#/forms/new", c.url)).await;
    b.wait_text("h1", "New form").await;
    b.click("#add-field").await;
    b.wait_text("#fields", "Remove field 1").await;
    b.close().await;
}

#[tokio::test]
async fn with_push_switched_off_the_push_pages_say_where_to_turn_it_on() {
    let c = Console::start().await;
    let r = reqwest::Client::new()
        .patch(format!("{}/admin/settings", c.api))
        .basic_auth("boss", Some(&c.app_password))
        .json(&serde_json::json!({"push_enabled": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let b = Browser::start(1280, 900).await;
    c.sign_in(&b, "boss", &c.password).await;
    for page in ["#/sends", "#/stats", "#/devices"] {
        b.goto(&format!("{}{page}", c.url)).await;
        b.js("window.dispatchEvent(new HashChangeEvent('hashchange'));")
            .await;
        b.wait_text("main", "The push API is switched off").await;
    }
    clean(&b, "push switched off").await;
    b.close().await;
}
