//! Screenshots of every page at desktop and phone widths (test artifacts:
//! look at them), each page checked with axe-core.

use crate::harness::{Browser, Screen, Site, artifacts};

const SIZES: [(&str, Screen); 2] = [
    ("desktop", Screen::Desktop(1280, 900)),
    ("phone", Screen::Phone(390, 844)),
];

async fn shoot(b: &Browser, name: &str, problems: &mut Vec<String>) {
    b.screenshot(name).await;
    for p in b.accessibility_problems().await {
        problems.push(format!("{name}: {p}"));
    }
}

#[tokio::test]
async fn every_page_at_desktop_and_phone_widths_has_no_serious_accessibility_problem() {
    let site = Site::start().await;
    let mut problems = Vec::new();
    for (size, screen) in SIZES {
        let b = Browser::on(screen).await;
        b.goto(&site.page("/setup")).await;
        b.wait_text("h1", "Set up").await;
        shoot(&b, &format!("wizard-{size}"), &mut problems).await;
        b.close().await;
    }
    let cookie = site.set_up().await;
    site.mutate(
        &cookie,
        "panels.create",
        serde_json::json!({"title": "Schedule", "body": "Weeknights at 9 pm, Saturdays at noon.", "linkUrl": "https://example.com/schedule"}),
    )
    .await;
    site.mutate(
        &cookie,
        "profile.update",
        serde_json::json!({"displayName": "Owl", "bio": "Plays records, writes code.", "location": "Lisbon"}),
    )
    .await;
    for (size, screen) in SIZES {
        let b = Browser::on(screen).await;
        b.goto(&site.page("/")).await;
        b.wait_text("h1", "Night Owl Radio").await;
        b.wait_text(".chat-status", "No messages yet").await;
        shoot(&b, &format!("channel-offline-{size}"), &mut problems).await;
        b.goto(&site.page("/login")).await;
        b.wait_text("h1", "Sign in").await;
        shoot(&b, &format!("login-{size}"), &mut problems).await;
        b.fill("#email", crate::harness::EMAIL).await;
        b.fill("#password", crate::harness::PASSWORD).await;
        b.click("#login-form button[type=submit]").await;
        b.wait_path("/dashboard").await;
        b.wait_js(
            "return !!document.querySelector('#chart-current .uplot, #chart-current p')",
            "the charts",
        )
        .await;
        shoot(&b, &format!("dashboard-{size}"), &mut problems).await;
        b.close().await;
    }
    site.go_live(&cookie).await;
    for (size, screen) in SIZES {
        let b = Browser::on(screen).await;
        b.goto(&site.page("/")).await;
        b.wait_js(
            "return document.querySelector('[data-channel]').dataset.live === 'true'",
            "live",
        )
        .await;
        shoot(&b, &format!("channel-live-{size}"), &mut problems).await;
        b.close().await;
    }
    eprintln!("screenshots in {}", artifacts().display());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[tokio::test]
async fn the_accessibility_check_does_find_problems() {
    let b = Browser::start(800, 600).await;
    b.goto("data:text/html,<html><body><img src='x.png'><input></body></html>")
        .await;
    let problems = b.accessibility_problems().await;
    assert!(
        problems.iter().any(|p| p.contains("image-alt")),
        "axe-core runs and reports: {problems:?}"
    );
    b.close().await;
}
