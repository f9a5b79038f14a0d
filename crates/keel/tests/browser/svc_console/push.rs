//! Sending: compose, watch, cancel; settings; devices imported; an
//! operator without the push role.

use super::{Console, clean};
use crate::harness::{Browser, Screen};

#[tokio::test]
async fn an_operator_composes_a_push_to_some_devices_and_watches_it_go_out() {
    let c = Console::start().await;
    for (screen, tag) in [
        (Screen::Phone(390, 844), "phone"),
        (Screen::Desktop(1280, 900), "desktop"),
    ] {
        let b = Browser::on(screen).await;
        c.sign_in(&b, "boss", "not the password").await;
        b.wait_js(
            "const e = document.querySelector('#sign-in-error'); return !!e && !e.hidden && e.innerText.length > 0",
            "a wrong password is said",
        )
        .await;
        clean(&b, "sign in").await;
        b.screenshot(&format!("svc-console-sign-in-{tag}")).await;

        c.sign_in(&b, "boss", &c.password).await;
        b.wait_text("h1", "Sends").await;
        clean(&b, "sends").await;

        b.goto(&format!("{}#/compose", c.url)).await;
        b.wait_text("#recipients", "6 devices").await;
        b.fill("#title", &format!("Hello from the {tag}")).await;
        b.fill("#body", "A push from the console").await;
        b.js("const s = document.querySelector('#device-type'); s.value = 'ios'; s.dispatchEvent(new Event('input', {bubbles: true}));")
            .await;
        b.wait_text("#recipients", "3 devices").await;
        clean(&b, "compose").await;
        b.screenshot(&format!("svc-console-compose-{tag}")).await;
        b.click("#compose button[type=submit]").await;
        b.wait_text("#confirm-text", "to 3 devices, now").await;
        b.screenshot(&format!("svc-console-confirm-{tag}")).await;
        b.click("#send-now").await;

        b.wait_js(
            "return document.querySelector('#status')?.dataset.status === 'sent'",
            "the send reached sent",
        )
        .await;
        b.wait_text("#n-receipts_ok", "3").await;
        assert!(
            b.text("#status").await.contains("to 3 devices (iOS)"),
            "the audience is said: {}",
            b.text("#status").await
        );
        assert!(b.text("#message").await.contains("A push from the console"));
        assert_eq!(b.text("#n-sent").await, "3");
        assert!(
            b.js("return document.querySelector('#cancel').hidden")
                .await
                == true
        );
        clean(&b, "send").await;
        b.screenshot(&format!("svc-console-send-{tag}")).await;

        b.goto(&format!("{}#/sends", c.url)).await;
        b.wait_text("table", &format!("Hello from the {tag}")).await;
        b.screenshot(&format!("svc-console-sends-{tag}")).await;
        b.click("#sign-out").await;
        b.wait_text("h1", "Sign in").await;
        b.close().await;
    }
    let ios: Vec<_> = c.expo.delivered();
    assert_eq!(ios.len(), 6, "three devices, twice");
    drop(c.keel);
}

#[tokio::test]
async fn a_scheduled_send_is_cancelled_from_its_page() {
    let c = Console::start().await;
    let b = Browser::start(1280, 900).await;
    c.sign_in(&b, "boss", &c.password).await;
    b.wait_text("h1", "Sends").await;
    b.goto(&format!("{}#/compose", c.url)).await;
    b.wait_text("#recipients", "6 devices").await;
    b.fill("#title", "Later").await;
    b.fill("#body", "Tomorrow's news").await;
    b.click("input[name=when][value=local]").await;
    b.js("document.querySelector('#local-time').value = '09:30';")
        .await;
    b.click("#compose button[type=submit]").await;
    b.wait_text("#confirm-text", "at 09:30 in each device's zone")
        .await;
    b.click("#send-now").await;
    b.wait_js(
        "return document.querySelector('#status')?.dataset.status === 'scheduled'",
        "scheduled",
    )
    .await;
    b.js("window.confirm = () => true;").await;
    b.click("#cancel").await;
    b.wait_js(
        "return document.querySelector('#status')?.dataset.status === 'cancelled'",
        "cancelled",
    )
    .await;
    assert_eq!(b.text("#n-cancelled").await, "6");
    clean(&b, "cancelled send").await;
    b.close().await;
    assert!(c.expo.delivered().is_empty());
}

#[tokio::test]
async fn an_operator_without_the_push_role_is_told_what_they_may_not_do() {
    let c = Console::start().await;
    let b = Browser::start(1280, 900).await;
    c.sign_in(&b, "clerk", &c.clerk).await;
    b.wait_text(
        "main .alert",
        "needs the push role, which clerk does not have",
    )
    .await;
    let nav = b.text("nav").await;
    assert!(!nav.contains("Sends") && !nav.contains("Forms"), "{nav}");
    clean(&b, "no push role").await;
    b.screenshot("svc-console-no-capability").await;
    b.close().await;
}

#[tokio::test]
async fn settings_are_changed_from_a_form_and_a_bad_value_is_named() {
    let c = Console::start().await;
    let b = Browser::start(1280, 900).await;
    c.sign_in(&b, "boss", &c.password).await;
    b.wait_text("h1", "Sends").await;
    b.goto(&format!("{}#/settings", c.url)).await;
    b.wait_text("h1", "Settings").await;
    clean(&b, "settings").await;
    b.fill("#setting-payload_limit_bytes", "100").await;
    b.click("#settings button[type=submit]").await;
    b.wait_text("#settings-error", "Largest submission, in bytes:")
        .await;
    assert!(
        !b.text("#settings-error")
            .await
            .contains("payload_limit_bytes"),
        "a refusal names the setting in its own words"
    );
    assert_eq!(
        b.js("return document.activeElement.id").await,
        "setting-payload_limit_bytes"
    );
    b.fill("#setting-payload_limit_bytes", "4096").await;
    b.fill("#setting-allowed_origins", "https://app.example.com")
        .await;
    b.click("#settings button[type=submit]").await;
    b.wait_text(
        "#settings-saved",
        "Saved: Origins whose browsers may call the form API; Largest submission, in bytes.",
    )
    .await;
    b.screenshot("svc-console-settings").await;
    b.goto(&format!("{}#/sends", c.url)).await;
    b.wait_text("h1", "Sends").await;
    b.goto(&format!("{}#/settings", c.url)).await;
    b.wait_js(
        "return document.querySelector('#setting-payload_limit_bytes')?.value === '4096'",
        "the saved value is read back",
    )
    .await;
    b.goto(&format!("{}#/audit", c.url)).await;
    b.wait_text("h1", "Audit log").await;
    clean(&b, "audit log").await;
    b.close().await;
}

#[tokio::test]
async fn devices_are_imported_with_a_preview_and_every_refused_line_with_its_reason() {
    let c = Console::start().await;
    let b = Browser::start(1280, 900).await;
    c.sign_in(&b, "boss", &c.password).await;
    b.wait_text("h1", "Sends").await;
    b.goto(&format!("{}#/devices", c.url)).await;
    b.wait_text("h1", "Devices").await;
    clean(&b, "devices").await;
    let csv = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
    std::fs::write(
        csv.path(),
        "push_token,device_type,locale\n\
         ExponentPushToken[imported01],ios,fr-FR\n\
         not-a-token,android,en-US\n\
         ExponentPushToken[imported02],windows,en-US\n\
         \"ExponentPushToken[imported03]\",android,\"de-DE\"\n",
    )
    .unwrap();
    b.element("#import-file")
        .await
        .send_keys(&csv.path().display().to_string())
        .await
        .unwrap();
    b.wait_text("#import-preview", "ExponentPushToken[imported01]")
        .await;
    assert!(
        b.text("#import-preview thead")
            .await
            .contains("device_type")
    );
    clean(&b, "import preview").await;
    b.screenshot("svc-console-import-preview").await;
    b.click("#import-go").await;
    b.wait_text("#import-counts", "2 new, 0 updated, 0 unchanged, 2 refused")
        .await;
    let refused = b.text("#import-errors tbody").await;
    assert!(refused.contains('3') && refused.contains('4'), "{refused}");
    assert!(
        refused.contains("push_token:") && refused.contains("device_type:"),
        "each refusal says which column and why: {refused}"
    );
    // The list above is drawn again with what was imported.
    b.wait_text("#device-list", "ExponentPushToken[imported01]")
        .await;
    clean(&b, "import report").await;
    b.screenshot("svc-console-import-report").await;
    b.js("window.saved = null; window.savedAs = null; const make = URL.createObjectURL; URL.createObjectURL = (blob) => { blob.text().then(t => { window.saved = t; }); return make(blob); }; document.addEventListener('click', (e) => { if (e.target.download) window.savedAs = e.target.download; }, true);")
        .await;
    b.click("#export").await;
    b.wait_js(
        "return typeof window.saved === 'string'",
        "the export downloaded",
    )
    .await;
    assert_eq!(
        b.js("return window.savedAs").await,
        "push-devices.csv",
        "the name the button says"
    );
    let exported = b.js("return window.saved").await;
    let exported = exported.as_str().unwrap_or_default();
    assert!(
        exported.contains("ExponentPushToken[imported03]") && exported.contains("console0000"),
        "{exported}"
    );
    b.close().await;
}
