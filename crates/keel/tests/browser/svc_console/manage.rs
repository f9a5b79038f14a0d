//! Statistics as charts, the device search, forms and their submissions,
//! and the audit log's filter.

use serde_json::json;

use super::{Console, clean};
use crate::harness::{Browser, Screen};

impl Console {
    fn client(&self) -> reqwest::Client {
        reqwest::Client::new()
    }

    /// Accepts the debug App Check token `debug-token-1` and allows form 42.
    async fn allow_submissions(&self) {
        let r = self
            .client()
            .patch(format!("{}/admin/settings", self.api))
            .basic_auth("boss", Some(&self.app_password))
            .json(&json!({"appcheck_debug_tokens": ["debug-token-1"], "forms_allowlist": ["42"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    }

    /// What an app does: POST /submit/42 with its App Check token.
    async fn submit(&self, message: &str) {
        let r = self
            .client()
            .post(format!("{}/submit/42", self.api))
            .header("X-Vendor-AppCheck", "debug-token-1")
            .json(&json!({"fields": {"message": message, "rating": "5"}}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    }

    /// A push to every device through the API, waited on until Expo's
    /// receipts are counted.
    async fn send_to_all_and_wait(&self) {
        let r = self
            .client()
            .post(format!("{}/send", self.api))
            .basic_auth("boss", Some(&self.app_password))
            .json(&json!({"title": "To all", "body": "b"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 202, "{}", r.text().await.unwrap());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let stats: serde_json::Value = self
                .client()
                .get(format!("{}/stats", self.api))
                .basic_auth("boss", Some(&self.app_password))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let receipts = &stats["deliveries"]["receipts"];
            if receipts["ok"] == 4 && receipts["error"]["MessageRateExceeded"] == 1 {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "receipts never came: {stats}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}

/// A statistic's numbers as `key=n,...`, read from its table.
async fn numbers(b: &Browser, id: &str) -> String {
    let js = format!(
        "return [...document.querySelectorAll('#{id}-numbers tbody tr')].map(r => r.cells[0].textContent + '=' + r.cells[1].textContent).join(',')"
    );
    b.js(&js).await.as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn statistics_are_drawn_as_charts_with_their_numbers_and_devices_are_searched() {
    let c = Console::start().await;
    c.expo
        .ticket_error("ExponentPushToken[console0001]", "DeviceNotRegistered");
    c.expo
        .receipt_error("ExponentPushToken[console0002]", "MessageRateExceeded");
    c.send_to_all_and_wait().await;
    for (screen, tag) in [
        (Screen::Phone(390, 844), "phone"),
        (Screen::Desktop(1280, 900), "desktop"),
    ] {
        let b = Browser::on(screen).await;
        c.sign_in(&b, "boss", &c.password).await;
        b.wait_text("h1", "Sends").await;
        b.goto(&format!("{}#/stats", c.url)).await;
        b.wait_js(
            "return document.querySelectorAll('figure.stat svg').length >= 4",
            "the charts are drawn",
        )
        .await;
        let by_type = b.text("#by-type-numbers").await;
        assert!(
            by_type.contains("ios") && by_type.contains('3'),
            "{by_type}"
        );
        assert_eq!(numbers(&b, "by-state").await, "active=5,inactive=1");
        assert_eq!(
            numbers(&b, "errors").await,
            "DeviceNotRegistered=1,MessageRateExceeded=1"
        );
        assert_eq!(
            numbers(&b, "deliveries").await,
            "queued=0,sent=5,receipts ok=4"
        );
        assert!(b.text("#by-version-numbers").await.contains("1.0.0"));
        let label = b
            .js("return document.querySelector('#by-type svg').getAttribute('aria-label')")
            .await;
        assert_eq!(label, "Devices by type: android 3, ios 3");
        clean(&b, "statistics").await;
        b.screenshot(&format!("svc-console-stats-{tag}")).await;

        b.goto(&format!("{}#/devices", c.url)).await;
        b.wait_text("#device-list caption", "6 devices").await;
        b.fill("#search", "CONSOLE0003").await;
        b.click("#device-search button[type=submit]").await;
        b.wait_text("#device-list caption", "1 device matching")
            .await;
        assert!(
            b.text("#device-list tbody")
                .await
                .contains("ExponentPushToken[console0003]")
        );
        clean(&b, "device search").await;
        b.screenshot(&format!("svc-console-devices-{tag}")).await;
        b.close().await;
    }
    let b = Browser::start(1280, 900).await;
    c.sign_in(&b, "boss", &c.password).await;
    b.wait_text("h1", "Sends").await;
    b.goto(&format!("{}#/devices?search=nothing-like-this", c.url))
        .await;
    b.wait_text("main", "No device's token or label contains")
        .await;
    b.close().await;
}

#[tokio::test]
async fn a_form_is_made_submitted_to_read_exported_and_removed() {
    let c = Console::start().await;
    c.allow_submissions().await;
    let b = Browser::start(1280, 900).await;
    c.sign_in(&b, "boss", &c.password).await;
    b.wait_text("h1", "Sends").await;
    b.goto(&format!("{}#/forms", c.url)).await;
    b.wait_text("main", "No forms yet.").await;
    b.click("#new-form").await;
    b.wait_text("h1", "New form").await;
    b.fill("#form-id", "42").await;
    b.fill("#form-title", "Feedback").await;
    b.click("#add-field").await;
    b.click("#add-field").await;
    b.js("const rows = document.querySelectorAll('.field-row');
          const set = (row, css, v) => { const e = row.querySelector(css); e.value = v; e.dispatchEvent(new Event('change')); };
          set(rows[0], '.field-id', 'message'); set(rows[0], '.field-label', 'Message'); set(rows[0], '.field-type', 'textarea');
          rows[0].querySelector('.field-required').checked = true;
          set(rows[1], '.field-id', 'rating'); set(rows[1], '.field-label', 'Rating'); set(rows[1], '.field-type', 'radio');
          set(rows[1], '.field-choices', '1\\n2\\n3\\n4\\n5');")
        .await;
    clean(&b, "form editor").await;
    b.screenshot("svc-console-form-editor").await;
    b.click("#form-editor button[type=submit]").await;
    b.wait_text("h1", "Feedback").await;
    assert_eq!(
        b.js("return document.querySelector('.field-row:nth-child(2) .field-choices').value")
            .await,
        "1\n2\n3\n4\n5",
        "the choices were saved"
    );

    c.submit("Hello from the app").await;
    c.submit("=cmd|' /C calc'!A0").await;
    b.goto(&format!("{}#/forms/42/submissions", c.url)).await;
    b.wait_text("#submission-list caption", "2 submissions")
        .await;
    let rows = b.text("#submission-list tbody").await;
    assert!(
        rows.contains("Hello from the app") && rows.contains("debug"),
        "{rows}"
    );
    clean(&b, "submissions").await;
    b.screenshot("svc-console-submissions").await;
    // The session's CSRF token never goes in a URL: no link on the page
    // carries it.
    let token_in_a_url = b
        .js("const n = sessionStorage.getItem('console-csrf'); return !n || [...document.querySelectorAll('[href],[src]')].some(e => (e.getAttribute('href') || e.getAttribute('src')).includes(n))")
        .await;
    assert_eq!(
        token_in_a_url, false,
        "a URL on the page carries the CSRF token"
    );
    b.js("window.saved = null; const make = URL.createObjectURL; URL.createObjectURL = (blob) => { blob.text().then(t => { window.saved = t; }); return make(blob); };")
        .await;
    b.click("#export-submissions").await;
    b.wait_js(
        "return typeof window.saved === 'string'",
        "the export downloaded",
    )
    .await;
    let exported = b.js("return window.saved").await;
    let exported = exported.as_str().unwrap_or_default();
    assert!(
        exported.starts_with("id,created_at,app_id,message,rating")
            && exported.contains("Hello from the app")
            && exported.contains("'=cmd"),
        "{exported}"
    );

    b.goto(&format!("{}#/audit?subject=42", c.url)).await;
    // The form's creation (the operator's) and the two App Check checks
    // of its submissions, in words.
    b.wait_js(
        "return document.querySelectorAll('main tbody tr').length === 3",
        "three entries on form 42",
    )
    .await;
    let log = b.text("main tbody").await;
    assert!(
        log.contains("Form created")
            && log.contains("operator:boss")
            && log.contains("App Check token verified"),
        "{log}"
    );
    b.goto(&format!("{}#/audit?subject=7", c.url)).await;
    b.wait_text("main", "No entry.").await;
    clean(&b, "audit filtered").await;

    b.goto(&format!("{}#/forms/42", c.url)).await;
    b.wait_text("h1", "Feedback").await;
    b.fill("#form-title", "Feedback form").await;
    b.click("#form-editor button[type=submit]").await;
    b.wait_text("#form-saved", "Saved.").await;
    b.js("window.confirm = (m) => { window.asked = m; return true; };")
        .await;
    b.click("#remove-form").await;
    b.wait_text("main", "No forms yet.").await;
    let asked = b.js("return window.asked").await;
    assert!(
        asked
            .as_str()
            .unwrap_or_default()
            .contains("Its 2 submissions go with it"),
        "{asked}"
    );
    b.close().await;
}

#[tokio::test]
async fn a_push_is_sent_with_the_keyboard_alone() {
    use fantoccini::key::Key;
    let enter = char::from(Key::Enter).to_string();
    let c = Console::start().await;
    let b = Browser::start(1280, 900).await;
    b.goto(&format!("{}#/sends", c.url)).await;
    b.wait_text("h1", "Sign in").await;
    b.tab_to("#name", false).await;
    b.keys("boss").await;
    b.tab_to("#password", false).await;
    b.keys(&c.password).await;
    b.tab_to("#code", false).await;
    b.keys(&c.code("boss").await).await;
    b.keys(&enter).await;
    b.wait_text("h1", "Sends").await;

    b.tab_to("nav a[href='#/compose']", true).await;
    b.keys(&enter).await;
    b.wait_text("#recipients", "6 devices").await;
    b.tab_to("#title", false).await;
    b.keys("Typed, not clicked").await;
    b.tab_to("#body", false).await;
    b.keys("Sent from the keyboard").await;
    b.tab_to("#compose button[type=submit]", false).await;
    b.keys(&enter).await;
    b.wait_text("#confirm-text", "to 6 devices, now").await;
    b.wait_js(
        "return document.activeElement?.id === 'send-now'",
        "the confirmation has the focus",
    )
    .await;
    b.keys(&enter).await;
    b.wait_js(
        "return document.querySelector('#status')?.dataset.status === 'sent'",
        "the send reached sent",
    )
    .await;
    b.close().await;
    assert_eq!(c.expo.delivered().len(), 6);
}
