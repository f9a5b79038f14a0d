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
        b.wait_text("#sign-in-error", "Your session has ended")
            .await;
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
