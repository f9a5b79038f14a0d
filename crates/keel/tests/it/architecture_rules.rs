//! docs/ARCHITECTURE.md's rules, held by reading the code: each test
//! fails naming the file and line that breaks its rule.

use std::path::{Path, PathBuf};

const SERVICES: [&str; 5] = ["accounts", "usage-alerts", "svc", "channel", "console"];

fn root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).to_path_buf()
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// A file's production lines (numbered from 1): no comment lines, nothing
/// from its `#[cfg(test)]` module on, no `*_tests.rs` file.
fn production_lines(path: &Path) -> Vec<(usize, String)> {
    if path.to_string_lossy().ends_with("_tests.rs") || path.ends_with("tests.rs") {
        return Vec::new();
    }
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l.to_owned()))
        .collect()
}

/// The production lines of `files` holding any of `needles`.
fn offending(files: &[PathBuf], needles: &[&str]) -> Vec<String> {
    let root = &root();
    files
        .iter()
        .flat_map(|f| {
            production_lines(f).into_iter().filter_map(move |(n, l)| {
                needles.iter().any(|needle| l.contains(needle)).then(|| {
                    let shown = f.strip_prefix(root).unwrap_or(f).display().to_string();
                    format!("{shown}:{n}: {}", l.trim())
                })
            })
        })
        .collect()
}

fn service_src(service: &str) -> PathBuf {
    root().join("crates").join(service).join("src")
}

#[test]
fn a_domain_names_no_status_code_no_error_type_and_no_http_input() {
    let files: Vec<PathBuf> = SERVICES
        .iter()
        .flat_map(|s| rust_files(&service_src(s).join("domain")))
        .collect();
    assert!(files.len() > 20, "{files:?}");
    let found = offending(
        &files,
        &["StatusCode", "crate::error", "http::input", "axum"],
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn a_route_calls_its_domain_and_never_queries_an_entity() {
    let files: Vec<PathBuf> = SERVICES
        .iter()
        .flat_map(|s| {
            let src = service_src(s);
            let mut f = rust_files(&src.join("routes"));
            f.extend(rust_files(&src.join("web")));
            f.extend(rust_files(&src.join("console")));
            f.extend(["auth.rs", "console.rs"].map(|n| src.join(n)));
            f
        })
        .filter(|f| f.exists())
        .collect();
    let found = offending(&files, &["Entity::", "find_by_id("]);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn a_job_is_enqueued_only_by_its_own_file() {
    let files: Vec<PathBuf> = SERVICES
        .iter()
        .flat_map(|s| rust_files(&service_src(s)))
        .filter(|f| !f.components().any(|c| c.as_os_str() == "jobs"))
        .collect();
    let found = offending(
        &files,
        &[
            "jobs::enqueue",
            "enqueue_unique",
            "enqueue_at(",
            "jobs::insert",
        ],
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// `"KEEL_..."` / `"OTEL_..."` as a whole string literal.
fn variable_literals(line: &str) -> Vec<&str> {
    line.split('"')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            (s.starts_with("KEEL_") || s.starts_with("OTEL_"))
                && s.len() > 5
                && s.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        })
        .collect()
}

#[test]
fn every_configuration_name_is_a_constant() {
    let files = rust_files(&root().join("crates"));
    let root = root();
    let found: Vec<String> = files
        .iter()
        .filter(|f| {
            let p = f
                .strip_prefix(&root)
                .unwrap_or(f)
                .to_string_lossy()
                .to_string();
            p.contains("/src/") && !p.starts_with("crates/testkit/")
        })
        .flat_map(|f| {
            production_lines(f).into_iter().filter_map(move |(n, l)| {
                let named = !variable_literals(&l).is_empty();
                let declared = l.trim_start().starts_with("const ")
                    || l.trim_start().starts_with("pub const ")
                    || l.trim_start().starts_with("pub(crate) const ");
                (named && !declared).then(|| format!("{}:{n}: {}", f.display(), l.trim()))
            })
        })
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The variables README's configuration tables list.
fn documented_variables() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap_or_default();
    readme
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
        .filter(|name| {
            name.len() > 3
                && name
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_documented_variable_can_come_from_a_file() {
    let names = documented_variables();
    assert!(names.len() > 40, "README's tables: {names:?}");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("value");
    std::fs::write(&file, "from-a-file\n").unwrap_or_else(|e| panic!("{e}"));
    let file = file.to_string_lossy().to_string();
    let refused: Vec<&String> = names
        .iter()
        // The file's own name, and the log filter: logging starts before
        // the configuration is read, so that its errors are logged.
        .filter(|name| {
            ![keel_platform::config::CONFIG_FILE_VAR, "RUST_LOG"].contains(&name.as_str())
        })
        .filter(|name| {
            let pairs = [(format!("{name}_FILE"), file.clone())];
            let source = keel_platform::config::Source::from_environment(pairs);
            source.ok().and_then(|s| s.get(name).map(str::to_owned))
                != Some("from-a-file".to_owned())
        })
        .collect();
    assert!(refused.is_empty(), "not read from NAME_FILE: {refused:?}");
}

/// The fixed waits left in the tests, each where ARCHITECTURE lists it.
const FIXED_WAITS: [&str; 5] = [
    "crates/platform/tests/it/jobs.rs",
    "crates/platform/tests/it/cache.rs",
    "crates/keel/tests/it/process.rs",
    "crates/keel/tests/quotebot/supervision.rs",
    "crates/keel/tests/quotebot/supervision.rs",
];

/// How a fixed wait is marked in a test (written in two parts so this
/// file does not mark one).
const MARK: &str = concat!("A fixed", " wait:");

/// Every test file of every crate: its path from the root, and its text.
fn test_sources(root: &Path) -> Vec<(String, String)> {
    let crates = std::fs::read_dir(root.join("crates"));
    crates
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|dir| rust_files(&dir.path().join("tests")))
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let shown = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .display()
                .to_string();
            (shown, text)
        })
        .collect()
}

#[test]
fn the_fixed_waits_in_the_tests_are_the_ones_listed() {
    let root = root();
    let sources = test_sources(&root);
    let mut marked: Vec<String> = sources
        .iter()
        .flat_map(|(shown, text)| text.matches(MARK).map(move |_| shown.clone()))
        .collect();
    marked.sort();
    let unmarked: Vec<String> = sources
        .iter()
        .flat_map(|(shown, text)| unmarked_sleeps(shown, text))
        .collect();
    assert!(
        unmarked.is_empty(),
        "a sleep that is not a poll, a fixture's work or a listed fixed wait:\n{}",
        unmarked.join("\n")
    );
    let mut listed = FIXED_WAITS.map(str::to_owned).to_vec();
    listed.sort();
    assert_eq!(marked, listed, "tests marked `A fixed wait` vs the list");
    let doc = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap_or_default();
    for file in FIXED_WAITS {
        assert!(
            doc.contains(file),
            "docs/ARCHITECTURE.md does not list {file}"
        );
    }
}

/// The sleeps of one test file that are neither inside a loop (a poll's
/// interval, a load generator's pace) or an async block (a fixture's
/// simulated work), nor marked as a fixed wait just above.
fn unmarked_sleeps(shown: &str, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let sleeps = (line.contains("sleep(") || line.contains("sleep_until("))
            && !line.contains("pg_sleep(");
        if !sleeps || line.trim_start().starts_with("//") {
            continue;
        }
        let in_loop_or_block = enclosing_blocks(&lines[..i], 3).iter().any(|l| {
            ["loop {", "while ", "for ", "async move {", "async {"]
                .iter()
                .any(|k| l.contains(k))
        });
        let marked = lines[i.saturating_sub(4)..i]
            .iter()
            .any(|l| l.contains(MARK));
        if !in_loop_or_block && !marked {
            found.push(format!("{shown}:{}: {}", i + 1, line.trim()));
        }
    }
    found
}

/// The lines opening the `levels` innermost blocks around the end of
/// `lines`, innermost first (braces counted, good enough for formatted
/// code).
fn enclosing_blocks<'a>(lines: &[&'a str], levels: usize) -> Vec<&'a str> {
    let mut openers = Vec::new();
    let mut depth: i64 = 0;
    for line in lines.iter().rev() {
        let opens = line.matches('{').count() as i64;
        let closes = line.matches('}').count() as i64;
        depth += closes - opens;
        if depth < 0 {
            openers.push(*line);
            if openers.len() == levels {
                break;
            }
            depth = 0;
        }
    }
    openers
}
