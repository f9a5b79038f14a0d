//! Shard child processes: `keel quotebot shard --id N --total M`, one per
//! shard, each with the manager's environment plus the gateway URL. A
//! child says `ready` on its standard output once its gateway session is
//! ready; its exit status says how it ended (see [`ExitKind`]).

use std::process::Stdio;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

/// The line a shard prints when it is ready.
pub const READY: &str = "ready";
/// The exit code of a fatal shard error (login failed, a gateway close
/// that must not be retried): `EX_CONFIG`.
pub const FATAL_EXIT: i32 = 78;
/// Where a child finds the gateway.
pub const GATEWAY_URL_VAR: &str = "KEEL_QUOTEBOT_GATEWAY_URL";
/// The program run for each shard, when not this one (tests; a wrapper).
pub const SHARD_PROGRAM_VAR: &str = "KEEL_QUOTEBOT_SHARD_PROGRAM";

#[derive(Debug)]
pub enum Event {
    Ready(u32),
    Exited(u32, ExitKind),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    /// Exit 0: stopped when asked.
    Clean,
    /// Exit 78: a fatal shard error.
    Fatal,
    /// Anything else: a crash, a kill, an error.
    Died,
}

impl ExitKind {
    fn of(status: Option<std::process::ExitStatus>) -> Self {
        match status.and_then(|s| s.code()) {
            Some(0) => Self::Clean,
            Some(FATAL_EXIT) => Self::Fatal,
            _ => Self::Died,
        }
    }
}

/// A running shard process.
pub struct Shard {
    pub id: u32,
    pid: Option<u32>,
}

impl Shard {
    /// Starts shard `id` of `total`; its events come on `events`.
    pub fn spawn(
        id: u32,
        total: u32,
        gateway_url: &str,
        events: mpsc::UnboundedSender<Event>,
    ) -> std::io::Result<Self> {
        let exe = match std::env::var_os(SHARD_PROGRAM_VAR) {
            Some(p) => std::path::PathBuf::from(p),
            None => std::env::current_exe()?,
        };
        let mut child: Child = Command::new(exe)
            .args([
                "quotebot",
                "shard",
                "--id",
                &id.to_string(),
                "--total",
                &total.to_string(),
            ])
            .env(GATEWAY_URL_VAR, gateway_url)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()?;
        let pid = child.id();
        let stdout = child.stdout.take();
        tokio::spawn(async move {
            if let Some(out) = stdout {
                let mut lines = BufReader::new(out).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if line.trim() == READY {
                        let _ = events.send(Event::Ready(id));
                    }
                }
            }
            let status = child.wait().await.ok();
            let _ = events.send(Event::Exited(id, ExitKind::of(status)));
        });
        Ok(Self { id, pid })
    }

    fn signal(&self, sig: Signal) {
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            let _ = kill(Pid::from_raw(pid), sig);
        }
    }

    /// Asks the shard to close (SIGTERM).
    pub fn stop(&self) {
        self.signal(Signal::SIGTERM);
    }

    /// Ends it (SIGKILL).
    pub fn kill(&self) {
        self.signal(Signal::SIGKILL);
    }
}
