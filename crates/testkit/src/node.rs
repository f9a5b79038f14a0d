//! Runs a Node script of the repository's (the real client libraries a
//! test drives: the tRPC client, generated OpenAPI clients, the providers'
//! SDKs), installed by `scripts/test` with `npm ci`.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The npm package at `dir` (relative to the workspace), checked to be
/// installed.
pub fn package(dir: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(dir);
    assert!(
        root.join("node_modules").is_dir(),
        "the npm packages of {dir} are not installed: run `npm ci` there (scripts/test does)"
    );
    root
}

/// Runs `node <script> <args>` in `dir`; the JSON its last line printed.
pub async fn run_json(dir: &Path, script: &str, args: &[&str]) -> Value {
    let out = tokio::process::Command::new("node")
        .arg(script)
        .args(args)
        .current_dir(dir)
        .output()
        .await
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim().lines().last().unwrap_or("null"))
        .unwrap_or_else(|e| panic!("{script} printed no JSON ({e}): {stdout}"))
}
