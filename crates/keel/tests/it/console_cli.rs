//! `keel operator ...` on the machine: add (the secret printed once),
//! list, role, end-sessions, disable, enable, password, remove; a wrong
//! role or name is refused naming it; each change in the audit log as done
//! by `cli`.

use keel_testkit::db::TestDb;
use keel_testkit::process::{KeelProcess, command};

use crate::KEEL;

async fn operator(dir: &std::path::Path, db: &TestDb, args: &[&str]) -> (bool, String) {
    let env = vec![
        ("KEEL_DATA_DIR", dir.display().to_string()),
        ("DATABASE_URL", db.url.clone()),
    ];
    let mut all = vec!["operator"];
    all.extend_from_slice(args);
    let mut p = KeelProcess::spawn(command(KEEL, dir, &env, &all));
    let ok = p.wait(std::time::Duration::from_secs(60)).await.success();
    (ok, format!("{}{}", p.stdout(), p.stderr()))
}

#[tokio::test]
async fn operators_are_managed_from_the_command_line_and_each_change_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::create(dir.path()).await;
    let (ok, out) = operator(dir.path(), &db, &["add", "ada", "--role", "users,jobs"]).await;
    assert!(ok, "{out}");
    assert!(
        out.contains("roles: users, jobs") && out.contains("otpauth://totp/"),
        "{out}"
    );
    assert!(
        out.contains("\npassword: "),
        "a generated password is printed once: {out}"
    );
    let (ok, out) = operator(dir.path(), &db, &["add", "ada"]).await;
    assert!(!ok && out.contains("exists already"), "{out}");
    let (ok, out) = operator(dir.path(), &db, &["role", "ada", "--role", "wizard"]).await;
    assert!(!ok && out.contains("wizard"), "{out}");
    let (ok, out) = operator(dir.path(), &db, &["role", "ada", "--role", "operators"]).await;
    assert!(ok && out.contains("roles: operators"), "{out}");
    for args in [
        ["disable", "ada"],
        ["enable", "ada"],
        ["end-sessions", "ada"],
        ["password", "ada"],
    ] {
        let (ok, out) = operator(dir.path(), &db, &args).await;
        assert!(ok, "{args:?}: {out}");
    }
    let (_, out) = operator(dir.path(), &db, &["list"]).await;
    assert!(out.contains("ada\troles: operators\tactive"), "{out}");
    let (ok, _) = operator(dir.path(), &db, &["remove", "ada"]).await;
    assert!(ok);
    let (_, out) = operator(dir.path(), &db, &["list"]).await;
    assert!(out.contains("no operators"), "{out}");
    let (ok, out) = operator(dir.path(), &db, &["disable", "nobody"]).await;
    assert!(!ok && out.contains("nobody"), "{out}");

    let platform = crate::process::platform_on(&db, dir.path()).await;
    let filter = keel_platform::audit::Filter {
        actor: Some("cli".to_owned()),
        ..Default::default()
    };
    let (rows, _) = keel_platform::audit::page(&platform.db, &filter, 1, 100)
        .await
        .unwrap();
    let actions: Vec<&str> = rows.iter().rev().map(|r| r.action.as_str()).collect();
    assert_eq!(
        actions,
        [
            "operator_added",
            "operator_roles_set",
            "operator_disabled",
            "operator_enabled",
            "operator_sessions_ended",
            "operator_password_set",
            "operator_removed"
        ]
    );
    assert!(
        rows.iter()
            .all(|r| !r.detail.clone().unwrap_or_default().contains("password\":"))
    );
}
