//! The `keel` binary as a child process, for what only a process shows:
//! exit codes, signals, two processes at once.

use std::collections::HashMap;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::lock;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A running `keel` process with its output collected.
pub struct KeelProcess {
    child: Child,
    pub urls: HashMap<String, String>,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

/// Runs `keel` with exactly `env` (nothing inherited but `PATH`) in `dir`.
/// It stops at once on SIGTERM (no drain) unless `env` sets
/// `KEEL_SHUTDOWN_DRAIN_SECS`.
pub fn command(bin: &str, dir: &Path, env: &[(&str, String)], args: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("RUST_LOG", "info")
        .env("KEEL_SHUTDOWN_DRAIN_SECS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

impl KeelProcess {
    /// Spawns `cmd` and collects its output; does not wait for anything.
    pub fn spawn(mut cmd: Command) -> Self {
        crate::init();
        let mut child = cmd.spawn().expect("spawn keel");
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(out) = child.stdout.take() {
            tokio::spawn(collect(BufReader::new(out), stdout.clone()));
        }
        if let Some(err) = child.stderr.take() {
            tokio::spawn(collect(BufReader::new(err), stderr.clone()));
        }
        Self {
            child,
            urls: HashMap::new(),
            stdout,
            stderr,
        }
    }

    /// Spawns `keel serve ...` and waits until it prints its `metrics` line;
    /// `urls` then maps each service name to its base URL.
    pub async fn serve(cmd: Command) -> Self {
        Self::try_serve(cmd).await.unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`serve`](Self::serve), with the failure to start as an error
    /// (its stderr included).
    pub async fn try_serve(cmd: Command) -> Result<Self, String> {
        let mut p = Self::spawn(cmd);
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let out = loop {
            let out = p.stdout();
            if out.lines().any(|l| l.starts_with("metrics")) {
                break out;
            }
            let exited = p.child.try_wait().ok().flatten();
            if exited.is_some() || std::time::Instant::now() >= deadline {
                tokio::time::sleep(Duration::from_millis(100)).await;
                return Err(format!(
                    "keel did not start ({exited:?}); stderr:\n{}",
                    p.stderr()
                ));
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        };
        p.urls = out
            .lines()
            .filter_map(|l| l.split_once(char::is_whitespace))
            .map(|(name, url)| (name.to_owned(), url.trim().to_owned()))
            .collect();
        Ok(p)
    }

    pub fn url(&self, service: &str) -> &str {
        self.urls
            .get(service)
            .map_or_else(|| panic!("{service} not printed"), String::as_str)
    }

    pub fn stdout(&self) -> String {
        lock(&self.stdout).clone()
    }

    pub fn stderr(&self) -> String {
        lock(&self.stderr).clone()
    }

    pub fn pid(&self) -> i32 {
        self.child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .expect("a running child")
    }

    pub fn signal(&self, sig: Signal) {
        kill(Pid::from_raw(self.pid()), sig).expect("signal keel");
    }

    /// The exit status, if the process has exited.
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGKILL, and waits until the process is gone.
    pub async fn kill(&mut self) {
        self.signal(Signal::SIGKILL);
        let _ = self.child.wait().await;
    }

    /// Waits for the exit (at most `within`), then lets the output drain.
    pub async fn wait(&mut self, within: Duration) -> ExitStatus {
        let status = tokio::time::timeout(within, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("keel did not exit; stderr:\n{}", self.stderr()))
            .expect("wait for keel");
        tokio::time::sleep(Duration::from_millis(100)).await;
        status
    }
}

async fn collect<R: tokio::io::AsyncRead + Unpin>(reader: BufReader<R>, into: Arc<Mutex<String>>) {
    let mut lines = reader.lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut s = lock(&into);
        s.push_str(&line);
        s.push('\n');
    }
}

/// An operator as `keel operator add` printed it.
pub struct AddedOperator {
    pub password: String,
    /// The TOTP secret, decoded.
    pub secret: Vec<u8>,
}

/// Runs `keel operator add NAME --role R ...` (the binary `bin`, in `dir`
/// with `env`) as an operator of the machine does; what it printed.
pub async fn add_operator(
    bin: &str,
    dir: &Path,
    env: &[(&str, String)],
    name: &str,
    roles: &[&str],
) -> AddedOperator {
    let mut args = vec!["operator", "add", name];
    for r in roles {
        args.extend(["--role", r]);
    }
    let mut p = KeelProcess::spawn(command(bin, dir, env, &args));
    assert!(
        p.wait(Duration::from_secs(60)).await.success(),
        "{}",
        p.stderr()
    );
    let out = p.stdout();
    let line = |prefix: &str| {
        out.lines()
            .find_map(|l| l.split_once(prefix).map(|(_, v)| v.trim().to_owned()))
            .unwrap_or_else(|| panic!("no {prefix:?} in {out}"))
    };
    let secret = keel_platform::totp::from_base32(&line("it is not shown again): "))
        .unwrap_or_else(|| panic!("a TOTP secret in {out}"));
    AddedOperator {
        password: line("password: "),
        secret,
    }
}
