//! svc's part of the operator console over HTTP: svc's own admin routes
//! (sending, the device list, forms, settings) served under
//! `/console/v1/svc` behind the console's sign-in, the push role standing
//! for svc's capability on sends and devices and the forms role on forms
//! and settings; every change is the operator's in the audit log; svc's
//! own listener takes no console session, and its old console address
//! says where its pages went.

use keel_platform::console::Role;
use keel_testkit::TestApp;
use reqwest::Method;
use serde_json::{Value, json};

use crate::console_kit::{Console, operator, sign_in};

async fn app() -> TestApp {
    TestApp::builder()
        .service("svc")
        .service("console")
        .spawn()
        .await
}

const SVC: &str = "/console/v1/svc";

/// Imports `n` devices through the console, as its Devices page does.
pub async fn import(console: &Console<'_>, n: usize) -> (u16, Value) {
    let mut csv = String::from("push_token,device_type\n");
    for i in 0..n {
        let kind = if i % 2 == 0 { "ios" } else { "android" };
        csv.push_str(&format!("ExponentPushToken[operator{i:04}],{kind}\n"));
    }
    let part = reqwest::multipart::Part::bytes(csv.into_bytes())
        .file_name("devices.csv")
        .mime_str("text/csv")
        .unwrap();
    let resp = console
        .app
        .http
        .post(
            console
                .app
                .root("console", &format!("{SVC}/devices/import")),
        )
        .header("cookie", &console.cookie)
        .header("x-console-csrf", &console.csrf)
        .multipart(reqwest::multipart::Form::new().part("file", part))
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap())
}

#[tokio::test]
async fn an_operator_with_the_push_role_imports_devices_sends_and_cancels_through_the_console() {
    let app = app().await;
    let ada = operator(&app, "ada", &[Role::Push]).await;
    let console = sign_in(&app, &ada).await;
    let (_, me) = console.get("/console/v1/session").await;
    let areas: Vec<&str> = (me["areas"].as_array().unwrap().iter())
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert_eq!(areas, ["push", "forms", "svc-admins"]);

    let (status, report) = import(&console, 4).await;
    assert_eq!(
        (status, report["imported"].clone()),
        (200, json!(4)),
        "{report}"
    );
    let (status, count) = console
        .post(
            &format!("{SVC}/recipients/count"),
            json!({"target": {"device_type": "ios"}}),
        )
        .await;
    assert_eq!((status, count["recipients"].clone()), (200, json!(2)));

    let later = (chrono::Utc::now() + chrono::Duration::hours(2)).to_rfc3339();
    let (status, made) = console
        .post(
            &format!("{SVC}/send"),
            json!({"title": "Hello", "body": "From the console", "target": "all", "send_at": later}),
        )
        .await;
    assert_eq!(status, 202, "{made}");
    let id = made["id"].as_str().unwrap().to_owned();
    assert_eq!(made["recipients"], 4);
    let (status, list) = console.get(&format!("{SVC}/sends")).await;
    assert_eq!((status, list["total"].clone()), (200, json!(1)), "{list}");
    let (status, cancelled) = console
        .call(Method::DELETE, &format!("{SVC}/send/{id}"), None)
        .await;
    assert_eq!(status, 200, "{cancelled}");
    let (_, send) = console.get(&format!("{SVC}/send/{id}")).await;
    assert_eq!(send["status"], "cancelled");
    let (status, devices) = console
        .get(&format!("{SVC}/devices?search=operator0003"))
        .await;
    assert_eq!((status, devices["total"].clone()), (200, json!(1)));
    let (status, stats) = console.get(&format!("{SVC}/stats")).await;
    assert_eq!((status, stats["devices"]["total"].clone()), (200, json!(4)));

    // A retry with the same Idempotency-Key (the console sends one with
    // every send) is answered from the first: one send.
    let keyed = || {
        console
            .app
            .http
            .post(console.app.root("console", &format!("{SVC}/send")))
            .header("cookie", &console.cookie)
            .header("x-console-csrf", &console.csrf)
            .header("idempotency-key", "operator-retry")
            .json(&json!({"title": "Once", "body": "only", "target": "all", "send_at": later}))
            .send()
    };
    let first = keyed().await.unwrap();
    assert_eq!(first.status(), 202);
    let again = keyed().await.unwrap();
    assert_eq!(again.status(), 202);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    let (_, list) = console.get(&format!("{SVC}/sends")).await;
    assert_eq!(list["total"], 2, "the retry made no send: {list}");

    let created = console.audit("svc_send_created").await;
    assert_eq!(created[0]["actor"], "operator:ada", "{created:?}");
    assert_eq!(created.len(), 2, "{created:?}");
    assert_eq!(created[1]["subject"], id.as_str());
}

#[tokio::test]
async fn an_operator_with_the_forms_role_keeps_forms_and_settings_and_is_named_in_the_audit_log() {
    let app = app().await;
    let fay = operator(&app, "fay", &[Role::Forms]).await;
    let console = sign_in(&app, &fay).await;
    let form = json!({"id": "12", "title": "Contact", "fields": [{"id": "email", "label": "Email", "type": "email", "required": true}]});
    let (status, made) = console.post(&format!("{SVC}/admin/forms"), form).await;
    assert_eq!(status, 201, "{made}");
    let (status, list) = console.get(&format!("{SVC}/admin/forms")).await;
    assert_eq!((status, list["forms"][0]["id"].clone()), (200, json!("12")));
    let (status, subs) = console
        .get(&format!("{SVC}/admin/forms/12/submissions"))
        .await;
    assert_eq!((status, subs["total"].clone()), (200, json!(0)), "{subs}");
    let (status, settings) = console
        .call(
            Method::PATCH,
            &format!("{SVC}/admin/settings"),
            Some(json!({"forms_allowlist": ["12"]})),
        )
        .await;
    assert_eq!(
        (status, settings["forms_allowlist"].clone()),
        (200, json!(["12"]))
    );
    let (status, refused) = console
        .call(
            Method::PATCH,
            &format!("{SVC}/admin/settings"),
            Some(json!({"submission_rate_limit": 0})),
        )
        .await;
    assert_eq!(
        (status, refused["code"].clone()),
        (400, json!("rest_invalid_param")),
        "svc's refusal, in svc's words: {refused}"
    );
    let changed = console.audit("svc_settings_changed").await;
    assert_eq!(changed[0]["actor"], "operator:fay", "{changed:?}");
}

#[tokio::test]
async fn an_operator_with_the_operators_role_manages_svcs_own_admins_whose_scripts_then_stop() {
    let app = app().await;
    let db = &app.platform().db;
    keel_svc::domain::admin::add_user(db, "scripter", Some("login-password-1".into()), true)
        .await
        .unwrap();
    let app_password = keel_svc::domain::admin::add_app_password(db, "scripter", "ci")
        .await
        .unwrap();
    let by_script = || {
        app.http
            .get(app.root("svc", "/svc/v1/admin/settings"))
            .basic_auth("scripter", Some(&app_password))
            .send()
    };
    assert_eq!(
        by_script().await.unwrap().status(),
        200,
        "svc's API as scripts call it"
    );

    let root = operator(&app, "root", &[Role::Operators]).await;
    let console = sign_in(&app, &root).await;
    let (status, users) = console.get(&format!("{SVC}/admin/users")).await;
    assert_eq!(
        (status, users[0]["username"].clone()),
        (200, json!("scripter"))
    );
    let (status, done) = console
        .post(&format!("{SVC}/admin/users/scripter/disable"), json!({}))
        .await;
    assert_eq!(
        (status, done["disabled"].clone()),
        (200, json!(true)),
        "{done}"
    );
    assert_eq!(
        by_script().await.unwrap().status(),
        401,
        "its application passwords end"
    );
    let disabled = console.audit("svc_admin_disabled").await;
    assert_eq!(disabled[0]["actor"], "operator:root");
}

#[tokio::test]
async fn each_role_opens_only_its_part_of_svc_and_nothing_without_a_session_or_its_token() {
    let app = app().await;
    let fay = operator(&app, "fay", &[Role::Forms]).await;
    let pat = operator(&app, "pat", &[Role::Push]).await;
    let forms_only = sign_in(&app, &fay).await;
    let push_only = sign_in(&app, &pat).await;

    let (status, body) = forms_only.get(&format!("{SVC}/sends")).await;
    assert_eq!(
        (status, body["code"].clone()),
        (403, json!("svc_push_forbidden"))
    );
    let (status, body) = push_only.get(&format!("{SVC}/admin/settings")).await;
    assert_eq!(
        (status, body["code"].clone()),
        (403, json!("rest_forbidden"))
    );
    let (status, body) = forms_only.get(&format!("{SVC}/admin/users")).await;
    assert_eq!(
        (status, body["code"].clone()),
        (403, json!("rest_forbidden")),
        "svc's users are the operators role's"
    );
    for own in ["/admin/app-passwords", "/admin/audit", "/admin/login"] {
        let (status, _) = forms_only.get(&format!("{SVC}{own}")).await;
        assert_eq!(status, 404, "{own}: svc's users' own, not the console's");
    }

    let anonymous = app
        .http
        .get(app.root("console", &format!("{SVC}/sends")))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    let body: Value = anonymous.json().await.unwrap();
    assert_eq!(body["code"], "not_signed_in");
    let no_token = app
        .http
        .post(app.root("console", &format!("{SVC}/recipients/count")))
        .header("cookie", &push_only.cookie)
        .json(&json!({"target": "all"}))
        .send()
        .await
        .unwrap();
    assert_eq!(no_token.status(), 403);
    let body: Value = no_token.json().await.unwrap();
    assert_eq!(body["code"], "csrf_token_invalid");

    // svc's own listener knows nothing of the console's session.
    let on_svc = app
        .http
        .get(app.root("svc", "/svc/v1/sends"))
        .header("cookie", &push_only.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(
        on_svc.status(),
        403,
        "svc's push routes answer 403 without svc's credentials"
    );
}

#[tokio::test]
async fn the_old_console_address_says_where_svcs_pages_went() {
    let app = app().await;
    for at in ["/svc/admin/", "/svc/admin"] {
        let resp = app.http.get(app.root("svc", at)).send().await.unwrap();
        assert_eq!(resp.status(), 410, "{at}");
        let text = resp.text().await.unwrap();
        assert!(text.contains("operator console"), "{text}");
    }
    let index = app.http.get(app.root("svc", "/")).send().await.unwrap();
    let html = index.text().await.unwrap();
    assert!(!html.contains("/svc/admin/"), "{html}");
}

/// The schemas `value` refers to, and theirs, by name.
fn refs(value: &Value, schemas: &serde_json::Map<String, Value>, into: &mut Vec<String>) {
    match value {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                let name = r.trim_start_matches("#/components/schemas/").to_owned();
                if !into.contains(&name) {
                    into.push(name.clone());
                    if let Some(s) = schemas.get(&name) {
                        refs(s, schemas, into);
                    }
                }
            }
            m.values().for_each(|v| refs(v, schemas, into));
        }
        Value::Array(a) => a.iter().for_each(|v| refs(v, schemas, into)),
        _ => {}
    }
}

#[tokio::test]
async fn svcs_operations_in_the_consoles_document_mean_what_they_mean_in_svcs() {
    let app = crate::console_kit::every_area().await;
    let doc = |service: &'static str| {
        let url = app.root(service, "/openapi.json");
        let http = app.http.clone();
        async move {
            http.get(url)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let (console, svc) = (doc("console").await, doc("svc").await);
    let schemas = |d: &Value| d["components"]["schemas"].as_object().cloned().unwrap();
    let (in_console, in_svc) = (schemas(&console), schemas(&svc));
    let mut used = Vec::new();
    for (path, item) in console["paths"].as_object().unwrap() {
        if path.starts_with(SVC) {
            refs(item, &in_console, &mut used);
        }
    }
    assert!(used.contains(&"SendView".to_owned()), "{used:?}");
    for name in used {
        if name == "ErrorBody" {
            // The console's: svc's bodies are it plus `data`.
            let props = in_console[&name]["properties"].as_object().unwrap();
            assert_eq!(props.keys().collect::<Vec<_>>(), ["code", "message"]);
        } else {
            assert_eq!(
                in_console[&name], in_svc[&name],
                "{name}: another schema of that name won"
            );
        }
    }
}
