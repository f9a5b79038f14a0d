//! Runs a Node script of the repository's (the real client libraries a
//! test drives: the tRPC client, generated OpenAPI clients, the providers'
//! SDKs). `scripts/test` installs each package's dependencies with `npm ci`
//! into the build directory (`<target dir>/tools/npm/<package path>`), not
//! beside its scripts, and the scripts run from there: each call copies the
//! package's own files over first, so an edited script is what runs.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// What a package directory holds that is not its own: installed or
/// written by its scripts.
const NOT_COPIED: [&str; 3] = ["node_modules", "generated", "build"];

/// The installed copy of the npm package at `dir` (relative to the
/// workspace), with the package's current files.
pub fn package(dir: &str) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(dir);
    let installed = crate::tools_dir().join("npm").join(dir);
    assert!(
        installed.join("node_modules").is_dir(),
        "the npm packages of {dir} are not installed in {}: scripts/test installs them",
        installed.display()
    );
    copy_files(&source, &installed);
    installed
}

/// Copies `from`'s files into `to` (recursively, but for [`NOT_COPIED`]),
/// each written whole under a temporary name and renamed, so tests copying
/// at once never run a half-written script.
fn copy_files(from: &Path, to: &Path) {
    let entries = std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    for entry in entries.flatten() {
        let name = entry.file_name();
        if NOT_COPIED.iter().any(|n| name == *n) {
            continue;
        }
        let (src, dest) = (entry.path(), to.join(&name));
        if src.is_dir() {
            std::fs::create_dir_all(&dest).expect("create a package directory");
            copy_files(&src, &dest);
            continue;
        }
        let bytes = std::fs::read(&src).expect("read a package file");
        if std::fs::read(&dest).is_ok_and(|old| old == bytes) {
            continue;
        }
        let tmp = to.join(format!(
            ".{}.{}.{:?}",
            name.to_string_lossy(),
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&tmp, &bytes).expect("write a package file");
        std::fs::rename(&tmp, &dest).expect("put a package file in place");
    }
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
