use reqwest::Method;
use serde_json::json;

use crate::helpers::{FORM, Svc, finish, good};

#[tokio::test]
async fn an_application_password_over_basic_auth_opens_the_admin_routes() {
    let svc = Svc::start().await;
    let (_, app_password) = svc.admin("boss").await;
    assert_eq!(app_password.len(), 29, "24 characters in groups of four");
    let r = svc
        .admin_call(
            Method::GET,
            "/admin/settings",
            ("boss", &app_password),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["forms_allowlist"], json!([FORM]));
    assert_eq!(r.body["push_enabled"], true);
    let squeezed = app_password.replace(' ', "");
    let r = svc
        .admin_call(Method::GET, "/admin/settings", ("boss", &squeezed), None)
        .await;
    assert_eq!(r.status, 200, "spaces do not matter");
}

#[tokio::test]
async fn wrong_missing_or_unprivileged_credentials_are_refused_in_the_rest_shape() {
    let svc = Svc::start().await;
    let (_, pw) = svc.admin("boss").await;
    let r = svc
        .admin_call(
            Method::GET,
            "/admin/settings",
            ("boss", "aaaa bbbb cccc dddd eeee ffff"),
            None,
        )
        .await;
    assert_eq!((r.status, r.code()), (401, "incorrect_password"));
    assert_eq!(r.body["data"]["status"], 401);
    let r = svc
        .admin_call(Method::GET, "/admin/settings", ("nobody", &pw), None)
        .await;
    assert_eq!(r.status, 401);
    let r = finish(
        svc.app
            .http
            .get(svc.url("/admin/settings"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((r.status, r.code()), (401, "rest_not_logged_in"));
    let clerk = svc.clerk().await;
    let r = svc
        .admin_call(Method::GET, "/admin/settings", ("clerk", &clerk), None)
        .await;
    assert_eq!((r.status, r.code()), (403, "rest_forbidden"));
    assert_eq!(r.body["data"]["status"], 403);
}

#[tokio::test]
async fn a_cookie_login_needs_the_nonce_on_every_request() {
    let svc = Svc::start().await;
    let (login, _) = svc.admin("boss").await;
    let r = finish(
        svc.app
            .http
            .post(svc.url("/admin/login"))
            .json(&json!({"username": "boss", "password": "wrong"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((r.status, r.code()), (401, "rest_invalid_credentials"));
    let r = finish(
        svc.app
            .http
            .post(svc.url("/admin/login"))
            .json(&json!({"username": "boss", "password": login}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let set_cookie = r.headers["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Strict"),
        "{set_cookie}"
    );
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let nonce = r.body["nonce"].as_str().unwrap().to_owned();
    assert_eq!(r.body["user"]["capabilities"], json!(["svc_manage"]));

    let get = finish(
        svc.app
            .http
            .get(svc.url("/admin/settings"))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (get.status, get.code()),
        (403, "rest_cookie_invalid_nonce"),
        "a cookie without its nonce is refused on reads too"
    );
    let get = finish(
        svc.app
            .http
            .get(svc.url("/admin/settings"))
            .header("cookie", &cookie)
            .header("X-Svc-Nonce", &nonce)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(get.status, 200, "{}", get.text);
    let link = finish(
        svc.app
            .http
            .get(svc.url(&format!("/admin/settings?_wpnonce={nonce}")))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(link.status, 200, "the nonce may come in the query string");
    let patch = json!({"submission_rate_limit": 20});
    let no_nonce = finish(
        svc.app
            .http
            .patch(svc.url("/admin/settings"))
            .header("cookie", &cookie)
            .json(&patch)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (no_nonce.status, no_nonce.code()),
        (403, "rest_cookie_invalid_nonce")
    );
    let bad_nonce = finish(
        svc.app
            .http
            .patch(svc.url("/admin/settings"))
            .header("cookie", &cookie)
            .header("X-Svc-Nonce", "guess")
            .json(&patch)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(bad_nonce.status, 403);
    let ok = finish(
        svc.app
            .http
            .patch(svc.url("/admin/settings"))
            .header("cookie", &cookie)
            .header("X-Svc-Nonce", &nonce)
            .json(&patch)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    assert_eq!(ok.body["submission_rate_limit"], 20);

    let out = finish(
        svc.app
            .http
            .post(svc.url("/admin/logout"))
            .header("cookie", &cookie)
            .header("X-Svc-Nonce", &nonce)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(out.status, 200);
    let after = finish(
        svc.app
            .http
            .get(svc.url("/admin/settings"))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(after.status, 401);
}

#[tokio::test]
async fn logout_ends_a_cookie_session_and_an_application_password_is_none() {
    let svc = Svc::start().await;
    let (_, app_password) = svc.admin("ada").await;
    let r = svc
        .admin_call(Method::POST, "/admin/logout", ("ada", &app_password), None)
        .await;
    assert_eq!(
        (r.status, r.code()),
        (401, "rest_not_logged_in"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn settings_changed_over_rest_take_effect_at_once_and_are_validated() {
    let svc = Svc::start().await;
    let (_, pw) = svc.admin("boss").await;
    assert_eq!(svc.submit(Some(&svc.token()), good()).await.status, 200);
    let r = svc
        .admin_call(
            Method::PATCH,
            "/admin/settings",
            ("boss", &pw),
            Some(json!({"forms_allowlist": []})),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(svc.submit(Some(&svc.token()), good()).await.status, 404);
    for bad in [
        json!({"allowed_origins": ["not an origin"]}),
        json!({"forms_allowlist": ["abc"]}),
        json!({"submission_rate_limit": 0}),
        json!({"appcheck_project_number": "my-project"}),
        json!({"nonsense": 1}),
    ] {
        let r = svc
            .admin_call(
                Method::PATCH,
                "/admin/settings",
                ("boss", &pw),
                Some(bad.clone()),
            )
            .await;
        assert_eq!(r.status, 400, "{bad}: {}", r.text);
        assert!(r.body["code"].is_string() && r.body["data"]["status"] == 400);
    }
    let r = svc
        .admin_call(
            Method::PATCH,
            "/admin/settings",
            ("boss", &pw),
            Some(json!({"appcheck_debug_tokens": ["a", "b"]})),
        )
        .await;
    assert_eq!(
        r.body["appcheck_debug_tokens"], 2,
        "shown as a count, stored hashed"
    );
}

#[tokio::test]
async fn forms_are_managed_over_rest() {
    let svc = Svc::start().await;
    let (_, pw) = svc.admin("boss").await;
    let auth = ("boss", pw.as_str());
    let def = json!({"id": "40", "title": "Survey", "fields": [{"id": "q", "label": "Q", "type": "radio", "choices": ["y", "n"], "required": true}]});
    let r = svc
        .admin_call(Method::POST, "/admin/forms", auth, Some(def.clone()))
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        svc.admin_call(Method::POST, "/admin/forms", auth, Some(def.clone()))
            .await
            .code(),
        "form_exists"
    );
    let r = svc
        .admin_call(Method::GET, "/admin/forms/40", auth, None)
        .await;
    assert_eq!(r.body, def);
    let mut changed = def.clone();
    changed["title"] = json!("Survey 2");
    assert_eq!(
        svc.admin_call(Method::PUT, "/admin/forms/40", auth, Some(changed))
            .await
            .status,
        200
    );
    assert_eq!(
        svc.admin_call(Method::GET, "/admin/forms", auth, None)
            .await
            .body["forms"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let bad = json!({"id": "41", "title": "Bad", "fields": [{"id": "q", "label": "Q", "type": "select"}]});
    assert_eq!(
        svc.admin_call(Method::POST, "/admin/forms", auth, Some(bad))
            .await
            .status,
        400,
        "select needs choices"
    );
    assert_eq!(
        svc.admin_call(
            Method::PUT,
            "/admin/forms/40",
            auth,
            Some(json!({"id": "41", "title": "x", "fields": []}))
        )
        .await
        .status,
        400
    );
    assert_eq!(
        svc.admin_call(Method::DELETE, "/admin/forms/40", auth, None)
            .await
            .status,
        200
    );
    assert_eq!(
        svc.admin_call(Method::GET, "/admin/forms/40", auth, None)
            .await
            .code(),
        "form_not_found"
    );
}

#[tokio::test]
async fn submissions_are_listed_by_page_and_exported_as_neutralised_csv() {
    let svc = Svc::start().await;
    svc.configure(keel_svc::domain::settings::SettingsPatch {
        submission_rate_limit: Some(100),
        ..Default::default()
    })
    .await;
    let (_, pw) = svc.admin("boss").await;
    let token = svc.token();
    for i in 0..5 {
        let r = svc
            .submit(
                Some(&token),
                json!({"fields": {"name": format!("n{i}"), "email": "a@example.com"}}),
            )
            .await;
        assert_eq!(r.status, 200);
    }
    let evil = json!({"fields": {"name": "=HYPERLINK(\"http://evil\")", "email": "b@example.com", "note": "+1, \"quoted\""}});
    assert_eq!(svc.submit(Some(&token), evil).await.status, 200);
    let r = svc
        .admin_call(
            Method::GET,
            &format!("/admin/forms/{FORM}/submissions?page=2&per_page=4"),
            ("boss", &pw),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["total"], 6);
    assert_eq!(r.body["total_pages"], 2);
    assert_eq!(r.headers["x-wp-total"], "6");
    let page = r.body["submissions"].as_array().unwrap();
    assert_eq!(page.len(), 2);
    assert_eq!(page[0]["values"]["name"], "n1", "newest first");
    assert_eq!(page[0]["app_id"], crate::helpers::APP_ID);
    for query in [
        "per_page=1000",
        "per_page=0",
        "page=0",
        "page=1000001",
        "page=18446744073709551616",
        "page=-1",
    ] {
        for path in [
            format!("/admin/forms/{FORM}/submissions"),
            "/admin/audit".to_owned(),
        ] {
            let bad = svc
                .admin_call(Method::GET, &format!("{path}?{query}"), ("boss", &pw), None)
                .await;
            assert_eq!(
                (bad.status, bad.code()),
                (400, "rest_invalid_param"),
                "{path}?{query}"
            );
        }
    }

    let r = svc
        .admin_call(
            Method::GET,
            &format!("/admin/forms/{FORM}/submissions/export"),
            ("boss", &pw),
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(
        r.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let mut rows = csv::Reader::from_reader(r.text.as_bytes());
    assert_eq!(
        rows.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "id",
            "created_at",
            "app_id",
            "name",
            "email",
            "topic",
            "note"
        ]
    );
    let records: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 6);
    let last = &records[5];
    assert_eq!(&last[3], "'=HYPERLINK(\"http://evil\")");
    assert_eq!(&last[6], "'+1, \"quoted\"");
}

#[tokio::test]
async fn the_audit_log_lists_verified_tokens_by_hash() {
    let svc = Svc::start().await;
    let (_, pw) = svc.admin("boss").await;
    let token = svc.token();
    svc.submit(Some(&token), good()).await;
    let r = svc
        .admin_call(Method::GET, "/admin/audit", ("boss", &pw), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["total"], 1);
    let e = &r.body["entries"][0];
    assert_eq!(e["event"], "svc_forms_appcheck_verified");
    assert_eq!(e["form_id"], FORM);
    assert!(!r.text.contains(&token));
}

#[tokio::test]
async fn every_route_is_documented_and_errors_keep_the_rest_shape() {
    let svc = Svc::start().await;
    let doc = finish(
        svc.app
            .http
            .get(svc.app.root(keel_svc::NAME, "/openapi.json"))
            .send()
            .await
            .unwrap(),
    )
    .await
    .body;
    for (path, method) in [
        ("/svc/v1/forms/{form_id}/fields", "get"),
        ("/svc/v1/forms/{form_id}/fields", "options"),
        ("/svc/v1/submit/{form_id}", "post"),
        ("/svc/v1/submit/{form_id}", "options"),
        ("/svc/v1/admin/login", "post"),
        ("/svc/v1/admin/logout", "post"),
        ("/svc/v1/admin/settings", "get"),
        ("/svc/v1/admin/settings", "patch"),
        ("/svc/v1/admin/forms", "get"),
        ("/svc/v1/admin/forms", "post"),
        ("/svc/v1/admin/forms/{form_id}", "get"),
        ("/svc/v1/admin/forms/{form_id}", "put"),
        ("/svc/v1/admin/forms/{form_id}", "delete"),
        ("/svc/v1/admin/forms/{form_id}/submissions", "get"),
        ("/svc/v1/admin/forms/{form_id}/submissions/export", "get"),
        ("/svc/v1/admin/audit", "get"),
        ("/svc/v1/admin/app-passwords", "get"),
        ("/svc/v1/admin/app-passwords", "post"),
        ("/svc/v1/admin/app-passwords/{uuid}", "delete"),
        ("/svc/v1/devices", "get"),
    ] {
        assert!(doc["paths"][path][method].is_object(), "{method} {path}");
    }
    let r = finish(svc.app.http.get(svc.url("/nope")).send().await.unwrap()).await;
    assert_eq!((r.status, r.code()), (404, "rest_no_route"));
    let r = finish(
        svc.app
            .http
            .post(svc.url("/admin/login"))
            .header("content-type", "application/json")
            .body("{")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["data"]["status"], 400);
}

#[tokio::test]
async fn the_submissions_export_reads_whole_in_every_encoding_a_client_may_ask_for() {
    use keel_testkit::encoding::{ENCODINGS, fetch};
    let svc = Svc::start().await;
    let (_, pw) = svc.admin("boss").await;
    // More than two pages of the export's 500, straight into the database.
    let db = &svc.app.platform().db;
    for chunk in 0..3 {
        let items = (0..400)
            .map(|i| keel_svc::domain::site::NewSubmission {
                values: json!({"name": format!("n{chunk}-{i}"), "email": "a@example.com"})
                    .as_object()
                    .cloned()
                    .unwrap(),
                verified: keel_svc::domain::hooks::AppCheckVerified {
                    app_id: "app".to_owned(),
                    form_id: FORM.to_owned(),
                    token: format!("token {i}"),
                },
            })
            .collect();
        keel_svc::domain::site::store_submissions(db, items)
            .await
            .unwrap();
    }
    let mut bodies = Vec::new();
    for enc in ENCODINGS {
        let req = svc
            .app
            .http
            .get(svc.url(&format!("/admin/forms/{FORM}/submissions/export")))
            .basic_auth("boss", Some(&pw));
        let d = fetch(req, enc).await;
        assert_eq!(d.status, 200, "{enc}");
        let text = d.text();
        let names: Vec<String> = csv::Reader::from_reader(text.as_bytes())
            .records()
            .map(|r| r.unwrap()[3].to_owned())
            .collect();
        assert_eq!(names.len(), 1200, "{enc}");
        assert_eq!(names[0], "n0-0");
        assert_eq!(names[1199], "n2-399");
        bodies.push(text);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]));
}

#[tokio::test]
async fn a_malformed_id_in_a_path_is_the_id_of_nothing() {
    let svc = Svc::start().await;
    let (_, pw) = svc.admin("boss").await;
    let auth = ("boss", pw.as_str());
    for (method, path, code) in [
        (Method::GET, "/admin/forms/not-a-form", "form_not_found"),
        (Method::DELETE, "/admin/forms/40;drop", "form_not_found"),
        (Method::GET, "/admin/forms/x/submissions", "form_not_found"),
        (
            Method::GET,
            "/admin/forms/x/submissions/export",
            "form_not_found",
        ),
        (
            Method::DELETE,
            "/admin/app-passwords/not-a-uuid",
            "rest_application_password_not_found",
        ),
    ] {
        let r = svc.admin_call(method, path, auth, None).await;
        assert_eq!((r.status, r.code()), (404, code), "{path}");
    }
    let def = json!({"id": "41", "title": "Survey", "fields": [{"id": "q", "label": "Q", "type": "text"}]});
    let r = svc
        .admin_call(Method::PUT, "/admin/forms/4x1", auth, Some(def))
        .await;
    assert_eq!(
        r.status, 400,
        "the body's id differs from a malformed path id"
    );
}
