//! svc's own admins (who sign in to svc's API), managed from the console
//! by an operator with the operators role: disables one, gives them a new
//! password (shown once) and ends their sessions, at phone and desktop
//! width; the audit log shows each, by the operator who did it.

use super::{Console, clean};
use crate::harness::{Browser, Screen};

#[tokio::test]
async fn an_operator_disables_resets_and_ends_an_svc_admins_sessions() {
    let c = Console::start().await;
    for (screen, name) in [
        (Screen::Phone(390, 844), "phone"),
        (Screen::Desktop(1280, 900), "desktop"),
    ] {
        let b = Browser::on(screen).await;
        c.sign_in(&b, "boss", &c.password).await;
        b.wait_text("h1", "Sends").await;
        b.click("nav a[href='#/svc-admins']").await;
        b.wait_text("#admin-list caption", "2 users").await;
        clean(&b, &format!("svc admins ({name})")).await;
        b.screenshot(&format!("svc-console-admins-{name}")).await;
        b.js("window.confirm = () => true;").await;
        let (act, state) = if name == "phone" {
            ("Disable", "Disabled")
        } else {
            ("Enable", "Active")
        };
        b.click(&format!("button[aria-label='{act} clerk']")).await;
        b.wait_text("tr[data-user='clerk'] .state", state).await;
        b.click("button[aria-label='New password clerk']").await;
        b.wait_text("#admin-password", "not shown again").await;
        let shown = b.text("#admin-password-value").await;
        assert!(shown.len() >= 20, "{shown}");
        b.click("button[aria-label='End sessions clerk']").await;
        b.wait_js(
            "return document.querySelector(\"tr[data-user='clerk'] td:nth-child(4)\")?.innerText.endsWith('0') && !document.getElementById('admin-password')?.offsetParent",
            "the list drawn again after ending the sessions",
        )
        .await;
        clean(&b, &format!("svc admins after ({name})")).await;
        b.close().await;
    }
    let b = Browser::start(1280, 900).await;
    c.sign_in(&b, "boss", &c.password).await;
    b.wait_text("h1", "Sends").await;
    b.goto(&format!("{}#/audit?actor=operator:boss", c.url))
        .await;
    b.wait_text("main tbody", "svc admin disabled").await;
    let log = b.text("main tbody").await;
    for what in [
        "svc admin enabled",
        "svc admin's password set",
        "svc admin's sessions ended",
        "operator_signed_in",
    ] {
        assert!(log.contains(what), "{what} in {log}");
    }
    clean(&b, "audit by operator").await;
    b.screenshot("svc-console-audit-by-admin").await;
}
