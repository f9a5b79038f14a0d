//! The document says what the server enforces: schemathesis, driven by
//! `/openapi.json` alone, finds no request the server answers otherwise
//! than documented, as an admin (an application password) from an app
//! with a valid App Check token, the push module on.

use keel_svc::domain::settings::SettingsPatch;
use keel_testkit::Schemathesis;

use crate::helpers::Svc;

/// Changes what every other operation depends on (App Check, the forms
/// allow-list, the push module): run apart, after the rest.
const SETTINGS: &str = "patch_settings";

#[tokio::test]
async fn schemathesis_finds_nothing_the_document_does_not_say() {
    let svc = Svc::start().await;
    svc.configure(SettingsPatch {
        push_enabled: Some(true),
        ..Default::default()
    })
    .await;
    let (_, app_password) = svc.admin("schemathesis").await;
    let run = || {
        Schemathesis::new(
            svc.app.root(keel_svc::NAME, "/openapi.json"),
            svc.app.root(keel_svc::NAME, ""),
        )
        .basic("app_password", "schemathesis", &app_password)
        .api_key("app_check", svc.token())
    };
    run()
        .arg("--exclude-operation-id")
        .arg(SETTINGS)
        .passes()
        .await;
    run()
        .arg("--include-operation-id")
        .arg(SETTINGS)
        .passes()
        .await;
}
