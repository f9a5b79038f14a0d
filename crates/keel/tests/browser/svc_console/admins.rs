//! The Admins view: an admin holding svc_manage_admins disables another,
//! gives them a new password (shown once) and ends their sessions, at
//! phone and desktop width; the audit log shows each, by who did it.

use super::{Console, clean};
use crate::harness::{Browser, Screen};

#[tokio::test]
async fn an_admin_who_may_disables_resets_and_ends_another_admins_sessions() {
    let c = Console::start().await;
    for (screen, name) in [
        (Screen::Phone(390, 844), "phone"),
        (Screen::Desktop(1280, 900), "desktop"),
    ] {
        let b = Browser::on(screen).await;
        c.sign_in(&b, "boss", &c.password).await;
        b.wait_text("h1", "Sends").await;
        b.click("#nav-admins").await;
        b.wait_text("#admin-list caption", "2 users").await;
        assert!(b.text("#admin-list").await.contains("boss (you)"));
        clean(&b, &format!("admins ({name})")).await;
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
            "return document.querySelector(\"tr[data-user='clerk'] td:nth-child(5)\")?.innerText === '0' && !document.getElementById('admin-password')?.offsetParent",
            "the list drawn again after ending the sessions",
        )
        .await;
        clean(&b, &format!("admins after ({name})")).await;
        let no_remove_self = b
            .js("return !document.querySelector(\"button[aria-label='Remove boss']\")")
            .await;
        assert_eq!(no_remove_self, true, "no button removes yourself");
    }
    let b = Browser::start(1280, 900).await;
    c.sign_in(&b, "boss", &c.password).await;
    b.wait_text("h1", "Sends").await;
    b.goto(&format!("{}#/audit?actor=boss", c.url)).await;
    b.wait_text("#audit-list", "Admin disabled").await;
    let log = b.text("#audit-list").await;
    for what in [
        "Admin enabled",
        "Admin's password set",
        "Admin's sessions ended",
        "Signed in",
    ] {
        assert!(log.contains(what), "{what} in {log}");
    }
    clean(&b, "audit by admin").await;
    b.screenshot("svc-console-audit-by-admin").await;
}
