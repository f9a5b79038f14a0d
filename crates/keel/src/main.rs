use std::process::ExitCode;

use keel::cli::{Command, DbCommand, Invocation};
use keel_platform::config::{PlatformConfig, Source};
use keel_platform::telemetry;

mod allocator;
mod startup_pages;

fn main() -> ExitCode {
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

async fn run(cli: Invocation) -> anyhow::Result<()> {
    if let Invocation::Builtin(Command::Probe { url }) = &cli {
        return keel::probe::run(url.as_deref()).await;
    }
    let src = Source::load()?;
    let cfg = PlatformConfig::from_source(&src)?;
    telemetry::init_tracing(cfg.log_format);
    match cli {
        Invocation::Builtin(Command::Serve { services }) => serve(&src, &names(&services)).await,
        Invocation::Builtin(Command::Migrate { services }) => {
            let applied = keel::migrate(&src, &names(&services)).await?;
            if applied.is_empty() {
                println!("nothing to migrate");
            }
            for a in applied {
                println!("applied {} {:04} {}", a.component, a.version, a.name);
            }
            Ok(())
        }
        Invocation::Builtin(Command::Backup { path }) => {
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
        Invocation::Builtin(Command::Db(DbCommand::Copy { from, to })) => {
            keel::db_copy::run(&src, &cfg, from, to).await
        }
        Invocation::Service(service, matches) => {
            println!("{}", (service.run)(&src, &matches).await?);
            Ok(())
        }
        Invocation::Builtin(Command::Probe { url }) => keel::probe::run(url.as_deref()).await,
    }
}

fn names(services: &[String]) -> Vec<&str> {
    services.iter().map(String::as_str).collect()
}

async fn serve(src: &Source, services: &[&str]) -> anyhow::Result<()> {
    let running = keel::start(src, services).await?;
    // Before the base URLs are printed: whoever reads them may signal at
    // once, and a SIGTERM arriving before the handler is registered would
    // kill keel without draining.
    let mut signals = keel_platform::signals::ShutdownSignals::listen();
    for l in &running.listening {
        println!("{:<12} {}", l.service, l.base_url);
    }
    println!("{:<12} http://{}/metrics", "metrics", running.metrics_addr);
    let token = running.shutdown_token();
    let draining = running.platform.draining.clone();
    let drain = running.platform.config.http.shutdown_drain;
    tokio::spawn(async move {
        signals.next().await;
        if !drain.is_zero() {
            // Load balancers see /readyz fail and stop sending requests,
            // which are all still served meanwhile.
            draining.start();
            tracing::info!(
                ?drain,
                "draining: /readyz answers 503 while requests are still served (a second signal stops at once)"
            );
            tokio::select! {
                () = tokio::time::sleep(drain) => {}
                () = signals.next() => {}
            }
        }
        tracing::info!("shutting down");
        token.cancel();
    });
    // Off this path: handing back a large binary's pages takes a moment.
    tokio::task::spawn_blocking(|| {
        let released = startup_pages::release();
        tracing::debug!(bytes = released, "start-up's code pages handed back");
    });
    Ok(running.wait().await?)
}
