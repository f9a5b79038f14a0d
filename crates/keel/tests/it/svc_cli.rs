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

#[tokio::test]
async fn admins_are_disabled_reset_ended_and_removed_from_the_command_line_and_audited() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let env = env_for(&db, dir.path());
    let run = |args: &'static [&'static str]| keel_svc(dir.path(), &env, args);
    let (ok, out, err) = run(&["admin", "add", "chief", "--manage-admins"]).await;
    assert!(
        ok && out.contains("svc_manage svc_manage_admins"),
        "{out}{err}"
    );
    assert!(run(&["admin", "add", "clerk"]).await.0);
    let (ok, pw, _) = run(&["app-password", "add", "clerk", "ci"]).await;
    assert!(ok);
    let clerk_pw = pw.trim().rsplit(": ").next().unwrap().to_owned();

    let mut serve = KeelProcess::serve(command(KEEL, dir.path(), &env, &["serve", "svc"])).await;
    let url = format!("{}/admin/settings", serve.url("svc"));
    let http = reqwest::Client::new();
    let status = |pw: String| {
        let (http, url) = (http.clone(), url.clone());
        async move {
            let r = http
                .get(url)
                .basic_auth("clerk", Some(pw))
                .send()
                .await
                .unwrap();
            r.status().as_u16()
        }
    };
    assert_eq!(status(clerk_pw.clone()).await, 200);

    let (ok, out, _) = run(&["admin", "disable", "clerk"]).await;
    assert!(
        ok && out.contains("1 application passwords revoked"),
        "{out}"
    );
    assert_eq!(status(clerk_pw).await, 401, "refused once disabled");
    let (_, list, _) = run(&["admin", "list"]).await;
    assert!(
        list.lines()
            .any(|l| l.starts_with("clerk\t") && l.contains("disabled")),
        "{list}"
    );
    assert!(run(&["admin", "enable", "clerk"]).await.0);
    let (ok, out, _) = run(&["admin", "password", "clerk"]).await;
    assert!(ok && out.contains("(shown once)"), "{out}");
    let (ok, out, _) = run(&["admin", "end-sessions", "clerk"]).await;
    assert!(ok && out.contains("0 sessions ended"), "{out}");
    let (ok, out, _) = run(&["admin", "grant", "clerk", "svc_manage_admins"]).await;
    assert!(ok && out.contains("svc_manage_admins"), "{out}");
    let (ok, _, err) = run(&["admin", "grant", "clerk", "root"]).await;
    assert!(!ok && err.contains("No capability"), "{err}");
    assert!(
        run(&["admin", "revoke", "clerk", "svc_manage_admins"])
            .await
            .0
    );
    let (ok, out, _) = run(&["admin", "remove", "clerk"]).await;
    assert!(ok && out.contains("removed clerk"), "{out}");
    let (ok, _, err) = run(&["admin", "remove", "clerk"]).await;
    assert!(!ok && err.contains("No user"), "{err}");

    let platform = crate::process::platform_on(&db, dir.path()).await;
    let filter = keel_platform::audit::Filter {
        service: Some("svc"),
        actor: Some("cli".to_owned()),
        ..Default::default()
    };
    let (rows, _) = keel_platform::audit::page(&platform.db, &filter, 1, 100)
        .await
        .unwrap();
    let events: Vec<String> = rows
        .iter()
        .rev()
        .map(|r| format!("{} {}", r.action, r.subject.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        events,
        [
            "svc_admin_added chief",
            "svc_admin_added clerk",
            "svc_app_password_created clerk",
            "svc_admin_disabled clerk",
            "svc_admin_enabled clerk",
            "svc_admin_password_set clerk",
            "svc_admin_sessions_ended clerk",
            "svc_admin_capabilities_changed clerk",
            "svc_admin_capabilities_changed clerk",
            "svc_admin_removed clerk",
        ]
    );
    serve.signal(Signal::SIGTERM);
    assert!(serve.wait(Duration::from_secs(15)).await.success());
}
