use std::process::ExitCode;

use keel::cli::{Command, DbCommand, Invocation};
use keel_platform::config::{PlatformConfig, Source};
use keel_platform::telemetry;

mod allocator;
mod startup_pages;

fn main() -> ExitCode {
    private_files();
    let cli = keel::cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_park(allocator::on_park)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("keel: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // On a runtime thread, not this one: start-up's working memory is then
    // freed on a thread that collects when it goes idle (see allocator).
    let outcome = runtime.block_on(async {
        match tokio::spawn(run(cli)).await {
            Ok(r) => r,
            Err(e) => Err(anyhow::anyhow!("the main task failed: {e}")),
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let message = format!("{e:#}");
            tracing::error!("{message}");
            eprintln!("keel: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Every file and directory keel makes is its user's alone (0600, 0700):
/// the SQLite database and its log, backups and copies, generated keys,
/// mail files. SQLite gives its -wal and -shm files the database's mode.
fn private_files() {
    #[cfg(unix)]
    {
        use nix::sys::stat::{Mode, umask};
        umask(Mode::from_bits_truncate(0o077));
    }
}

/// Runs the command, then sends the spans it ended (every command, not
/// only `serve`: quotebot's and the `keel svc` commands trace too) before
/// the process ends; nothing when traces are off.
async fn run(cli: Invocation) -> anyhow::Result<()> {
    let outcome = command(cli).await;
    telemetry::otel::flush(std::time::Duration::from_secs(5)).await;
    outcome
}

async fn command(cli: Invocation) -> anyhow::Result<()> {
    let command = match cli {
        Invocation::Service(service, matches) => {
            let (src, _) = configured()?;
            println!("{}", (service.run)(&src, &matches).await?);
            return Ok(());
        }
        Invocation::Builtin(command) => command,
    };
    match command {
        // Reads no configuration: a container's health check.
        Command::Probe { url } => keel::probe::run(url.as_deref()).await,
        Command::Serve { services } => {
            let (src, _) = configured()?;
            serve(&src, &names(&services)).await
        }
        Command::Migrate { services } => {
            let (src, _) = configured()?;
            let applied = keel::migrate(&src, &names(&services)).await?;
            if applied.is_empty() {
                println!("nothing to migrate");
            }
            for a in applied {
                println!("applied {} {:04} {}", a.component, a.version, a.name);
            }
            Ok(())
        }
        Command::Backup { path } => {
            let (_, cfg) = configured()?;
            let url = cfg.database.url.clone();
            let b =
                tokio::task::spawn_blocking(move || keel_platform::db::backup::backup(&url, &path))
                    .await??;
            println!(
                "backed up to {} ({} bytes) in {:.2?}; integrity check ok",
                b.path.display(),
                b.bytes,
                b.took
            );
            Ok(())
        }
        Command::Restore {
            from,
            at,
            to,
            force,
        } => {
            let (src, cfg) = configured()?;
            let ask = keel_platform::db::restore::Restore {
                from,
                at,
                to,
                force,
            };
            let r = keel_platform::db::restore::run(&src, &cfg, ask).await?;
            let when = r
                .last_write
                .as_deref()
                .unwrap_or("a time the replica does not say");
            println!(
                "restored to {} (transaction {}, written {when}); integrity check ok",
                r.path.display(),
                r.txid
            );
            Ok(())
        }
        Command::Db(DbCommand::Copy { from, to }) => {
            let (src, cfg) = configured()?;
            let from = from.or_else(|| src.get(keel::db_copy::FROM).map(str::to_owned));
            let to = to
                .or_else(|| src.get(keel::db_copy::TO).map(str::to_owned))
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "keel db copy: name the target with --to URL or {} (or {}_FILE)",
                        keel::db_copy::TO,
                        keel::db_copy::TO
                    )
                })?;
            keel::db_copy::run(&src, &cfg, from, to).await
        }
    }
}

/// The configuration (environment over `keel.toml`), checked, and logging
/// set up as it says.
fn configured() -> anyhow::Result<(Source, PlatformConfig)> {
    let src = Source::load()?;
    let cfg = PlatformConfig::from_source(&src)?;
    telemetry::init_tracing(&src, cfg.log_format)?;
    Ok((src, cfg))
}

fn names(services: &[String]) -> Vec<&str> {
    services.iter().map(String::as_str).collect()
}

async fn serve(src: &Source, services: &[&str]) -> anyhow::Result<()> {
    let running = keel::start(src, services).await?;
    // Before the base URLs are printed: whoever reads them may signal at
    // once, and a SIGTERM arriving before the handler is registered would
    // kill keel without draining.
    running.stop_on(keel_platform::signals::ShutdownSignals::listen());
    for l in &running.listening {
        println!("{:<12} {}", l.service, l.base_url);
    }
    println!("{:<12} http://{}/metrics", "metrics", running.metrics_addr);
    // Off this path: handing back a large binary's pages takes a moment.
    tokio::task::spawn_blocking(|| {
        let released = startup_pages::release();
        tracing::debug!(bytes = released, "start-up's code pages handed back");
    });
    Ok(running.wait().await?)
}
