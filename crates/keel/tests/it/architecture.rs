//! docs/ARCHITECTURE.md stays true to the tree: every file or folder it
//! names by its path from the repository's root exists, and it stays short
//! enough to read in one sitting.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The paths in backticks that start at the repository's root.
fn named_paths(doc: &str) -> Vec<String> {
    doc.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            ["crates/", "docs/", "scripts/", "deploy/", "bench/"]
                .iter()
                .any(|p| s.starts_with(p))
                && !s.contains('<')
                && !s.contains(' ')
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_path_the_architecture_names_exists_and_it_stays_short() {
    let doc = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let paths = named_paths(&doc);
    assert!(paths.len() >= 10, "{paths:?}");
    let missing: Vec<&String> = paths
        .iter()
        .filter(|p| !root().join(p.trim_end_matches('/')).exists())
        .collect();
    assert!(missing.is_empty(), "named but missing: {missing:?}");
    let lines = doc.lines().count();
    assert!(lines <= 350, "docs/ARCHITECTURE.md has {lines} lines");
    // The recipes' per-service files, in every HTTP service crate.
    for service in ["accounts", "usage-alerts", "svc", "channel"] {
        for file in [
            "lib.rs",
            "config.rs",
            "state.rs",
            "error.rs",
            "input.rs",
            "auth.rs",
            "schema.rs",
            "routes/mod.rs",
            "entity/mod.rs",
            "jobs/mod.rs",
        ] {
            let path = root().join("crates").join(service).join("src").join(file);
            let alt = root()
                .join("crates")
                .join(service)
                .join("src")
                .join(file.replace(".rs", "/mod.rs"));
            assert!(path.exists() || alt.exists(), "crates/{service}/src/{file}");
        }
    }
}
