use std::process::ExitCode;

use clap::Parser;
use keel::cli::{Cli, Command};
use keel_platform::config::{PlatformConfig, Source};
use keel_platform::telemetry;

// Returns freed memory to the OS promptly (glibc keeps large freed blocks,
// such as argon2's 19 MiB, per thread arena) and is faster under load.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("keel: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("keel: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), String> {
    let src = Source::load().map_err(|e| e.to_string())?;
    let cfg = PlatformConfig::from_source(&src).map_err(|e| e.to_string())?;
    telemetry::init_tracing(cfg.log_format);
    match cli.command {
        Command::Serve { services } => serve(&src, &services).await,
        Command::Migrate { services } => {
            let applied = keel::migrate(&src, &services)
                .await
                .map_err(|e| e.to_string())?;
            if applied.is_empty() {
                println!("nothing to migrate");
            }
            for a in applied {
                println!("applied {} {:04} {}", a.component, a.version, a.name);
            }
            Ok(())
        }
        Command::Svc(cmd) => {
            println!("{}", keel::svc_cli::run(&src, cmd).await?);
            Ok(())
        }
    }
}

async fn serve(src: &Source, services: &[keel::ServiceName]) -> Result<(), String> {
    let running = keel::start(src, services)
        .await
        .map_err(|e| e.to_string())?;
    for l in &running.listening {
        println!("{:<12} {}", l.service.as_str(), l.base_url);
    }
    println!("{:<12} http://{}/metrics", "metrics", running.metrics_addr);
    let token = running.shutdown_token();
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("shutting down");
        token.cancel();
    });
    running.wait().await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
