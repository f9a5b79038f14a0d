//! Runs schemathesis (pinned with hashes in `crates/testkit/schemathesis`,
//! installed by `scripts/test` into a virtual environment there) against a
//! service's `/openapi.json`: every check, every phase (examples, coverage,
//! fuzzing and the stateful phase the document's links allow), a fixed seed,
//! so a run is repeatable. A test sets up real authentication first and
//! names it by the document's security schemes (so schemathesis also knows
//! what a request without it is); the run must end with no failure.

use std::path::{Path, PathBuf};

/// Where the tool, its lock file and its configuration live.
fn home() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemathesis")
}

/// The virtual environment scripts/test installs schemathesis into.
fn venv() -> PathBuf {
    crate::tools_dir().join("schemathesis")
}

/// One run against one document.
pub struct Schemathesis {
    schema: String,
    base_url: String,
    headers: Vec<(String, String)>,
    /// `(scheme, [(field, value)])` for `[auth.openapi.<scheme>]`.
    auth: Vec<(String, Vec<(&'static str, String)>)>,
    args: Vec<String>,
}

impl Schemathesis {
    /// `schema`: the document's URL; `base_url`: where its paths start.
    pub fn new(schema: impl Into<String>, base_url: impl Into<String>) -> Self {
        Self {
            schema: schema.into(),
            base_url: base_url.into(),
            headers: Vec::new(),
            auth: Vec::new(),
            args: Vec::new(),
        }
    }

    /// The credential of the document's API-key scheme `scheme` (a header
    /// or cookie, as the scheme says).
    #[must_use]
    pub fn api_key(self, scheme: &str, value: impl Into<String>) -> Self {
        self.scheme(scheme, vec![("api_key", value.into())])
    }

    /// The token of the document's bearer scheme `scheme`.
    #[must_use]
    pub fn bearer(self, scheme: &str, token: impl Into<String>) -> Self {
        self.scheme(scheme, vec![("bearer", token.into())])
    }

    /// The user and password of the document's HTTP Basic scheme `scheme`.
    #[must_use]
    pub fn basic(self, scheme: &str, user: &str, password: &str) -> Self {
        self.scheme(
            scheme,
            vec![
                ("username", user.to_owned()),
                ("password", password.to_owned()),
            ],
        )
    }

    fn scheme(mut self, scheme: &str, fields: Vec<(&'static str, String)>) -> Self {
        self.auth.push((scheme.to_owned(), fields));
        self
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
        let st = venv().join("bin/st");
        assert!(
            st.exists(),
            "schemathesis is not installed: scripts/test installs it into {}",
            venv().display()
        );
        // The shared settings, then this run's credentials, each value
        // passed through the environment (no quoting in TOML to get wrong).
        let mut config = std::fs::read_to_string(home().join("schemathesis.toml"))
            .expect("read schemathesis.toml");
        let mut cmd = tokio::process::Command::new(&st);
        for (i, (scheme, fields)) in self.auth.iter().enumerate() {
            config.push_str(&format!("\n[auth.openapi.{scheme}]\n"));
            for (j, (field, value)) in fields.iter().enumerate() {
                let var = format!("KEEL_SCHEMATHESIS_{i}_{j}");
                config.push_str(&format!("{field} = \"${{{var}}}\"\n"));
                cmd.env(var, value);
            }
        }
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config_file = dir.path().join("schemathesis.toml");
        std::fs::write(&config_file, config).expect("write the run's configuration");
        cmd.arg("--config-file")
            .arg(&config_file)
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
