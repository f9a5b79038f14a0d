//! Every service's `/openapi.json` as a user's tooling sees it: valid
//! OpenAPI 3.1 (swagger-parser), no error under redocly's recommended
//! rules, and a TypeScript client generated from it (openapi-typescript +
//! openapi-fetch, pinned in tests/openapi) that compiles against a flow per
//! service and drives that flow against the live services.

use keel_svc::domain::settings::{SettingsPatch, SettingsStore};
use keel_testkit::{FakeJwks, TestApp};
use serde_json::json;

const PROJECT: &str = "123456789";
const APP_ID: &str = "1:123456789:ios:abcdef";
const FORM: &str = "12:3";
const SETUP_CODE: &str = "generated-client-code";

#[tokio::test]
async fn every_document_validates_and_a_client_generated_from_it_drives_its_service() {
    let tools = keel_testkit::node::package("crates/keel/tests/openapi");
    let jwks = FakeJwks::start().await;
    let app = TestApp::builder()
        .env("KEEL_APPCHECK_JWKS_URL", jwks.url())
        .env("KEEL_CHANNEL_SETUP_CODE", SETUP_CODE)
        .spawn()
        .await;
    let db = &app.platform().db;
    SettingsStore::new(db.clone())
        .update(SettingsPatch {
            appcheck_project_number: Some(PROJECT.into()),
            appcheck_app_ids: Some(vec![APP_ID.into()]),
            forms_allowlist: Some(vec![FORM.into()]),
            push_enabled: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let form = json!({"id": FORM, "title": "Contact",
        "fields": [{"id": "name", "label": "Name", "type": "text", "required": true}]});
    keel_svc::domain::site::put_form(db, &serde_json::from_value(form).unwrap())
        .await
        .unwrap();
    keel_svc::domain::admin::add_user(db, "generated", Some("login-password-1".into()), true)
        .await
        .unwrap();
    let app_password = keel_svc::domain::admin::add_app_password(db, "generated", "client")
        .await
        .unwrap();
    let now = chrono::Utc::now().timestamp();
    let appcheck = jwks.sign(
        "k1",
        &json!({"iss": format!("https://firebaseappcheck.googleapis.com/{PROJECT}"),
            "aud": [format!("projects/{PROJECT}")], "sub": APP_ID, "iat": now, "exp": now + 3600}),
    );

    let docs = tempfile::tempdir().unwrap();
    for s in keel::services::http() {
        let name = s.name;
        let doc = reqwest::get(app.root(name, "/openapi.json"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        std::fs::write(docs.path().join(format!("{name}.json")), doc).unwrap();
    }
    let origin = |s: &str| app.root(s, "");
    let out = tokio::process::Command::new("node")
        .arg("check.mjs")
        .arg(docs.path())
        .current_dir(&tools)
        .env("ACCOUNTS_URL", app.url(keel_accounts::NAME, ""))
        .env("USAGE_ALERTS_URL", app.url(keel_usage_alerts::NAME, ""))
        .env("SVC_ORIGIN", origin(keel_svc::NAME))
        .env("CHANNEL_API_URL", app.url(keel_channel::API, ""))
        .env("APPCHECK_TOKEN", appcheck)
        .env("FORM_ID", FORM)
        .env("ADMIN_USER", "generated")
        .env("ADMIN_APP_PASSWORD", app_password)
        .env("SETUP_CODE", SETUP_CODE)
        .output()
        .await
        .expect("run node");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(out.status.success(), "{text}");
    for flow in ["accounts:", "usage-alerts:", "svc:", "channel-api:"] {
        assert!(text.contains(flow), "{flow} did not run: {text}");
    }
}
