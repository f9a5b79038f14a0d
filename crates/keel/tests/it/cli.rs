use clap::CommandFactory;
use keel::cli::Cli;

use crate::KEEL;

#[test]
fn the_cli_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn help_describes_every_command_service_and_the_configuration() {
    let help = std::process::Command::new(KEEL)
        .arg("--help")
        .output()
        .unwrap();
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for word in [
        "serve",
        "migrate",
        "KEEL_DATA_DIR",
        "DATABASE_URL",
        "REDIS_URL",
    ] {
        assert!(text.contains(word), "--help lacks {word}:\n{text}");
    }
    let help = std::process::Command::new(KEEL)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    for word in [
        "accounts",
        "usage-alerts",
        "svc",
        "channel-web",
        "channel-api",
        "SKIP_MIGRATIONS",
    ] {
        assert!(text.contains(word), "serve --help lacks {word}:\n{text}");
    }
}

#[test]
fn an_unknown_service_name_is_a_usage_error() {
    let out = std::process::Command::new(KEEL)
        .args(["serve", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
}
