//! The device list as CSV: export and import.

use keel_platform::sea_orm::Set;
use reqwest::multipart::{Form, Part};
use serde_json::json;

use crate::helpers::{Resp, Svc, finish};
use crate::push_kit::{Admin, device, token};

async fn export(svc: &Svc, admin: &Admin) -> (Resp, String) {
    let r = svc
        .app
        .http
        .get(svc.url("/devices/export"))
        .basic_auth(&admin.user, Some(&admin.password))
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    let text = r.text.clone();
    (r, text)
}

async fn import(svc: &Svc, admin: &Admin, name: &str, mime: &str, bytes: Vec<u8>) -> Resp {
    let part = Part::bytes(bytes)
        .file_name(name.to_owned())
        .mime_str(mime)
        .unwrap();
    let r = svc
        .app
        .http
        .post(svc.url("/devices/import"))
        .basic_auth(&admin.user, Some(&admin.password))
        .multipart(Form::new().part("file", part))
        .send()
        .await
        .unwrap();
    finish(r).await
}

#[tokio::test]
async fn the_export_is_csv_with_a_header_and_neutralised_cells() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..3).map(|i| {
        let mut d = device(i);
        if i == 1 {
            d.user_label = Set(Some("=HYPERLINK(\"http://evil\")".to_owned()));
            d.active = Set(false);
        }
        d
    }))
    .await;
    let (r, text) = export(&svc, &admin).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "text/csv; charset=utf-8");
    assert!(
        r.headers["content-disposition"]
            .to_str()
            .unwrap()
            .contains("attachment")
    );
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        header,
        [
            "push_token",
            "device_type",
            "device_model",
            "os_version",
            "app_version",
            "locale",
            "timezone",
            "user_label",
            "active",
            "registered_at",
            "updated_at"
        ]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(&rows[1][0], token(1));
    assert_eq!(&rows[1][7], "'=HYPERLINK(\"http://evil\")");
    assert_eq!(&rows[1][8], "false");
    assert_eq!(&rows[0][8], "true");
}

#[tokio::test]
async fn exporting_and_importing_the_same_file_changes_nothing() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..1200).map(|i| {
        let mut d = device(i);
        if i % 100 == 0 {
            d.user_label = Set(Some(format!("-{i} @home, \"quoted\"")));
            d.timezone = Set(None);
            d.active = Set(false);
        }
        d
    }))
    .await;
    let before = svc.all_devices().await;
    let (_, text) = export(&svc, &admin).await;
    assert_eq!(text.lines().count(), 1201);
    let r = import(&svc, &admin, "devices.csv", "text/csv", text.into_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({
            "imported": 0, "updated": 0, "skipped": 1200, "errors": [], "errors_not_listed": 0,
            "complete": true, "stopped_at_line": null, "stopped_because": null
        })
    );
    assert_eq!(svc.all_devices().await, before);
}

#[tokio::test]
async fn an_import_adds_new_devices_updates_changed_ones_and_reports_bad_rows() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    svc.seed((0..2).map(device)).await;
    let file = format!(
        "push_token,device_type,app_version,timezone,active\n\
         {},ios,1.0.0,UTC,true\n\
         {},android,2.0.0,UTC,true\n\
         {},android,,Europe/Paris,false\n\
         NotAToken,ios,,,\n\
         {},windows,,,\n\
         {},ios,,Mars/Base,\n\
         {},ios,,,maybe\n\
         {},ios,,,\n",
        token(0),
        token(1),
        token(5),
        token(6),
        token(7),
        token(8),
        token(5),
    );
    let r = import(
        &svc,
        &admin,
        "devices.CSV",
        "text/csv; charset=utf-8",
        file.into_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (
            r.body["imported"].as_i64(),
            r.body["updated"].as_i64(),
            r.body["skipped"].as_i64()
        ),
        (Some(1), Some(1), Some(1))
    );
    let lines: Vec<i64> = r.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["line"].as_i64().unwrap())
        .collect();
    assert_eq!(lines, vec![5, 6, 7, 8, 9]);
    for e in r.body["errors"].as_array().unwrap() {
        assert!(!e["reason"].as_str().unwrap().is_empty());
    }
    assert!(
        r.body["errors"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("push_token")
    );
    assert!(
        r.body["errors"][1]["reason"]
            .as_str()
            .unwrap()
            .contains("device_type")
    );
    let d1 = svc.device_row(&token(1)).await.unwrap();
    assert_eq!(
        (d1.device_type.as_str(), d1.app_version.as_deref()),
        ("android", Some("2.0.0"))
    );
    let d5 = svc.device_row(&token(5)).await.unwrap();
    assert!(!d5.active);
    assert_eq!(d5.timezone.as_deref(), Some("Europe/Paris"));
    assert!(svc.device_row(&token(6)).await.is_none());
    assert_eq!(svc.all_devices().await.len(), 3);
}

#[tokio::test]
async fn only_csv_files_are_accepted() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    let csv = format!("push_token,device_type\n{},ios\n", token(1)).into_bytes();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    let cases = [
        ("devices.txt", "text/csv", csv.clone()),
        ("devices.csv", "application/json", csv.clone()),
        ("devices.csv", "text/csv", png.clone()),
        ("image.png", "image/png", png),
        ("devices.csv", "text/csv", b"name,age\nada,36\n".to_vec()),
    ];
    for (name, mime, bytes) in cases {
        let r = import(&svc, &admin, name, mime, bytes).await;
        assert_eq!(
            (r.status, r.code()),
            (400, "invalid_file_type"),
            "{name} {mime}: {}",
            r.text
        );
    }
    // Not multipart at all, or no field named file.
    let r = svc
        .admin_call(
            reqwest::Method::POST,
            "/devices/import",
            admin.auth(),
            Some(json!({"file": "x"})),
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (400, "invalid_file_type"),
        "{}",
        r.text
    );
    let part = Part::bytes(csv)
        .file_name("devices.csv")
        .mime_str("text/csv")
        .unwrap();
    let r = svc
        .app
        .http
        .post(svc.url("/devices/import"))
        .basic_auth(&admin.user, Some(&admin.password))
        .multipart(Form::new().part("upload", part))
        .send()
        .await
        .unwrap();
    let r = finish(r).await;
    assert_eq!(
        (r.status, r.code()),
        (400, "invalid_file_type"),
        "{}",
        r.text
    );
    assert!(svc.all_devices().await.is_empty());
}

#[tokio::test]
async fn an_upload_over_the_size_limit_is_413() {
    let svc = Svc::with(&[("KEEL_SVC_IMPORT_LIMIT_BYTES", "2048".into())]).await;
    let admin = svc.push_admin().await;
    let mut file = String::from("push_token,device_type\n");
    for i in 0..200 {
        file.push_str(&format!("{},ios\n", token(i)));
    }
    let r = import(&svc, &admin, "devices.csv", "text/csv", file.into_bytes()).await;
    assert_eq!(r.status, 413, "{}", r.text);
    assert!(!r.code().is_empty());
    assert!(svc.all_devices().await.is_empty());
}

#[tokio::test]
async fn the_export_reads_whole_in_every_encoding_a_client_may_ask_for() {
    use keel_testkit::encoding::{ENCODINGS, fetch};
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    // More than two pages of the export's 1000.
    svc.seed((0..2500).map(device)).await;
    let mut bodies = Vec::new();
    for enc in ENCODINGS {
        let req = svc
            .app
            .http
            .get(svc.url("/devices/export"))
            .basic_auth(&admin.user, Some(&admin.password));
        let d = fetch(req, enc).await;
        assert_eq!(d.status, 200, "{enc}");
        // Gzipped as it streams; brotli is only for static files.
        let expected = (enc == "gzip").then_some("gzip");
        assert_eq!(d.encoding.as_deref(), expected, "{enc}");
        let text = d.text();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let tokens: Vec<String> = reader.records().map(|r| r.unwrap()[0].to_owned()).collect();
        assert_eq!(tokens.len(), 2500, "{enc}");
        let mut expected: Vec<String> = (0..2500).map(token).collect();
        expected.sort();
        assert_eq!(tokens, expected, "{enc}: every device once, in order");
        bodies.push(text);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]));
}

#[tokio::test]
async fn an_import_reads_at_most_its_rows_and_says_where_it_stopped() {
    let svc = Svc::with(&[("KEEL_SVC_IMPORT_MAX_ROWS", "3".into())]).await;
    let admin = svc.push_admin().await;
    let mut file = String::from("push_token,device_type\n");
    for i in 0..5 {
        file.push_str(&format!("{},ios\n", token(i)));
    }
    let r = import(&svc, &admin, "devices.csv", "text/csv", file.into_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["imported"], 3);
    assert_eq!(r.body["complete"], false);
    assert_eq!(r.body["stopped_at_line"], 5, "lines 5 and 6 were not read");
    let why = r.body["stopped_because"].as_str().unwrap();
    assert!(
        why.contains("at most 3 rows") && why.contains("from 5"),
        "{why}"
    );
    assert_eq!(svc.all_devices().await.len(), 3);
}

#[tokio::test]
async fn only_the_first_hundred_refused_lines_are_listed_and_the_rest_counted() {
    let svc = Svc::start().await;
    let admin = svc.push_admin().await;
    let mut file = String::from("push_token,device_type\n");
    for i in 0..250 {
        file.push_str(&format!("bad{i},ios\n"));
    }
    file.push_str(&format!("{},ios\n", token(1)));
    let r = import(&svc, &admin, "devices.csv", "text/csv", file.into_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["errors"].as_array().unwrap().len(), 100);
    assert_eq!(r.body["errors"][99]["line"], 101);
    assert_eq!(r.body["errors_not_listed"], 150);
    assert_eq!(
        (r.body["imported"].clone(), r.body["complete"].clone()),
        (json!(1), json!(true))
    );
}
