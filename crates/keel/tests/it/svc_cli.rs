//! `keel svc ...` administers the host site the HTTP routes serve.

use std::time::Duration;

use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};
use nix::sys::signal::Signal;

use crate::KEEL;

async fn keel_svc(
    dir: &std::path::Path,
    env: &[(&'static str, String)],
    args: &[&str],
) -> (bool, String, String) {
    let mut all = vec!["svc"];
    all.extend_from_slice(args);
    let mut p = KeelProcess::spawn(command(KEEL, dir, env, &all));
    let ok = p.wait(Duration::from_secs(60)).await.success();
    (ok, p.stdout(), p.stderr())
}

fn env_for(db: &TestDb, dir: &std::path::Path) -> Vec<(&'static str, String)> {
    let mut env = vec![
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("DATABASE_URL", db.url.clone()),
        ("KEEL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("KEEL_SVC_ADDR", "127.0.0.1:0".to_owned()),
    ];
    env.push(("RUST_LOG", "warn".to_owned()));
    env
}

#[tokio::test]
async fn admins_app_passwords_settings_and_forms_are_managed_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let env = env_for(&db, dir.path());

    let (ok, out, err) = keel_svc(dir.path(), &env, &["admin", "add", "boss"]).await;
    assert!(ok, "{err}");
    assert!(out.contains("login password (shown once)"), "{out}");
    let (ok, _, err) = keel_svc(
        dir.path(),
        &env,
        &["admin", "add", "clerk", "--no-capability"],
    )
    .await;
    assert!(ok, "{err}");
    let (ok, out, err) = keel_svc(dir.path(), &env, &["app-password", "add", "boss", "ci"]).await;
    assert!(ok, "{err}");
    let password = out.trim().rsplit(": ").next().unwrap().to_owned();
    assert_eq!(
        password.split(' ').map(str::len).collect::<Vec<_>>(),
        [4; 6],
        "{out}"
    );
    let (_, out, _) = keel_svc(dir.path(), &env, &["app-password", "add", "clerk", "ci"]).await;
    let clerk = out.trim().rsplit(": ").next().unwrap().to_owned();
    let (ok, out, _) = keel_svc(dir.path(), &env, &["app-password", "list", "boss"]).await;
    assert!(ok && out.starts_with("ci\t") && !out.contains(&password));

    let form = dir.path().join("form.json");
    std::fs::write(&form, r#"{"id": "8", "title": "Feedback", "fields": [{"id": "msg", "label": "Message", "type": "textarea", "required": true}]}"#).unwrap();
    let (ok, out, err) = keel_svc(dir.path(), &env, &["form", "put", form.to_str().unwrap()]).await;
    assert!(ok && out.contains("saved form 8"), "{out}{err}");
    let (ok, out, err) = keel_svc(
        dir.path(),
        &env,
        &["settings", "set", "forms_allowlist", "8"],
    )
    .await;
    assert!(ok, "{err}");
    assert!(out.contains("\"8\""));
    let (ok, _, err) = keel_svc(
        dir.path(),
        &env,
        &["settings", "set", "submission_rate_limit", "lots"],
    )
    .await;
    assert!(!ok && err.contains("submission_rate_limit"), "{err}");

    let mut serve = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;
    let base = serve.url("svc").to_owned();
    let http = reqwest::Client::new();
    let get = |user: &'static str, pw: String| {
        let (http, url) = (http.clone(), format!("{base}/admin/forms/8"));
        async move {
            http.get(url)
                .basic_auth(user, Some(pw))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(get("boss", password.clone()).await, 200);
    assert_eq!(get("clerk", clerk).await, 403, "no svc_manage");
    let (ok, _, err) = keel_svc(dir.path(), &env, &["app-password", "revoke", "boss", "ci"]).await;
    assert!(ok, "{err}");
    assert_eq!(get("boss", password).await, 401, "revoked");
    serve.signal(Signal::SIGTERM);
    assert!(serve.wait(Duration::from_secs(15)).await.success());
}
