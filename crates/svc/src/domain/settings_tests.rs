//! The settings' tests.
use super::*;

#[test]
fn origins_are_scheme_host_and_port_only() {
    assert!(valid_origin("https://app.example.com"));
    assert!(valid_origin("http://localhost:3000"));
    assert!(!valid_origin("https://app.example.com/"));
    assert!(!valid_origin("https://app.example.com/path"));
    assert!(!valid_origin("app.example.com"));
    assert!(!valid_origin("ftp://x.example"));
}

#[test]
fn command_line_pairs_parse_by_key() {
    let p = SettingsPatch::from_pair("allowed_origins", "https://a.example, https://b.example")
        .unwrap();
    assert_eq!(p.allowed_origins.map(|v| v.len()), Some(2));
    assert!(
        SettingsPatch::from_pair("push_enabled", "off")
            .unwrap()
            .push_enabled
            == Some(false)
    );
    assert!(SettingsPatch::from_pair("nope", "1").is_err());
    assert!(SettingsPatch::from_pair("submission_rate_limit", "ten").is_err());
}

#[test]
fn debug_tokens_are_kept_as_hashes() {
    let p = SettingsPatch {
        appcheck_debug_tokens: Some(vec!["secret-debug".into()]),
        ..Default::default()
    };
    let rows = p.rows().unwrap();
    assert_eq!(rows[0].1, serde_json::json!([sha256_hex(b"secret-debug")]));
}
