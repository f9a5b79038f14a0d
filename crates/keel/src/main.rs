use std::process::ExitCode;

use keel::cli::{Command, Invocation};
use keel_platform::config::{PlatformConfig, Source};
use keel_platform::telemetry;

mod allocator;

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
        return probe(url.as_deref()).await;
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
        Invocation::Service(service, matches) => {
            println!("{}", service.run_command(&src, &matches).await?);
            Ok(())
        }
        Invocation::Builtin(Command::Probe { url }) => probe(url.as_deref()).await,
    }
}

/// `keel probe URL`: one GET, 2xx or an error.
/// quotebot's liveness URL from `PORT` and `HOST`, as its listener binds.
fn default_probe_url() -> String {
    let port = std::env::var("PORT")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "3000".to_owned());
    let host = std::env::var("HOST")
        .ok()
        .and_then(|h| h.trim().parse::<std::net::IpAddr>().ok())
        .filter(|ip| !ip.is_unspecified())
        .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));
    let host = match host {
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        std::net::IpAddr::V4(v4) => v4.to_string(),
    };
    format!("http://{host}:{}/api/health/live", port.trim())
}

async fn probe(url: Option<&str>) -> anyhow::Result<()> {
    let url = url.map_or_else(default_probe_url, str::to_owned);
    let url = url.as_str();
    keel_platform::outbound::install_crypto_provider();
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(3))
        .build()?;
    let status = client.get(url).send().await?.status();
    anyhow::ensure!(status.is_success(), "{url} answered {status}");
    Ok(())
}

fn names(services: &[String]) -> Vec<&str> {
    services.iter().map(String::as_str).collect()
}

async fn serve(src: &Source, services: &[&str]) -> anyhow::Result<()> {
    let running = keel::start(src, services).await?;
    for l in &running.listening {
        println!("{:<12} {}", l.service, l.base_url);
    }
    println!("{:<12} http://{}/metrics", "metrics", running.metrics_addr);
    let token = running.shutdown_token();
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("shutting down");
        token.cancel();
    });
    Ok(running.wait().await?)
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
