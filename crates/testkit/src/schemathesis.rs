//! Runs schemathesis (pinned with hashes in `crates/testkit/schemathesis`,
//! installed by `scripts/test` into a virtual environment there) against a
//! service's `/openapi.json`: every check, every phase (examples, coverage,
//! fuzzing and the stateful phase the document's links allow), a fixed seed,
//! so a run is repeatable. A test sets up real authentication first and
//! passes it as headers; the run must end with no failure.

use std::path::{Path, PathBuf};

/// Where the tool, its lock file and its configuration live.
fn home() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemathesis")
}

/// One run against one document.
pub struct Schemathesis {
    schema: String,
    base_url: String,
    headers: Vec<(String, String)>,
    args: Vec<String>,
}

impl Schemathesis {
    /// `schema`: the document's URL; `base_url`: where its paths start.
    pub fn new(schema: impl Into<String>, base_url: impl Into<String>) -> Self {
        Self {
            schema: schema.into(),
            base_url: base_url.into(),
            headers: Vec::new(),
            args: Vec::new(),
        }
    }

    /// A header every request carries (the run's credentials).
    #[must_use]
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// Leaves out the operations on `path` (exactly as the document writes it).
    #[must_use]
    pub fn exclude_path(self, path: &str) -> Self {
        self.arg("--exclude-path").arg(path)
    }

    /// Tests only the operations on `path`.
    #[must_use]
    pub fn include_path(self, path: &str) -> Self {
        self.arg("--include-path").arg(path)
    }

    /// Any other `st run` argument.
    #[must_use]
    pub fn arg(mut self, a: impl Into<String>) -> Self {
        self.args.push(a.into());
        self
    }

    /// Runs it; panics with schemathesis's report unless it found nothing.
    pub async fn passes(self) {
        let st = home().join(".venv/bin/st");
        assert!(
            st.exists(),
            "schemathesis is not installed: scripts/test installs it into {}",
            home().join(".venv").display()
        );
        let mut cmd = tokio::process::Command::new(&st);
        cmd.arg("--config-file")
            .arg(home().join("schemathesis.toml"))
            .arg("--no-color")
            .arg("run")
            .arg(&self.schema)
            .args(["--url", &self.base_url])
            .args(["--checks", "all", "--seed", "42"])
            .args([
                "--generation-database",
                "none",
                "--output-sanitize",
                "false",
            ])
            .args(&self.args)
            .env("PYTHONUNBUFFERED", "1")
            .kill_on_drop(true);
        for (name, value) in &self.headers {
            cmd.arg("--header").arg(format!("{name}: {value}"));
        }
        let out = cmd.output().await.expect("run schemathesis");
        let report = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        println!("{report}");
        assert!(
            out.status.success(),
            "schemathesis found failures in {}:\n{report}",
            self.schema
        );
    }
}
