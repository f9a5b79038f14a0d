//! The fake Expo push service as a process, for the benchmark:
//! `fake-expo [ADDR] [RATE_PER_SECOND]` (defaults `127.0.0.1:9300`, 600;
//! a rate of 0 lifts the limit). Counts at `GET /_fake/stats`.

use std::net::SocketAddr;
use std::process::ExitCode;

use keel_testkit::FakeExpo;

fn args() -> Result<(SocketAddr, usize), String> {
    let mut args = std::env::args().skip(1);
    let addr = args
        .next()
        .unwrap_or_else(|| "127.0.0.1:9300".to_owned())
        .parse()
        .map_err(|e| format!("ADDR: {e}"))?;
    let rate = args
        .next()
        .map_or(Ok(600), |r| r.parse())
        .map_err(|e| format!("RATE_PER_SECOND: {e}"))?;
    Ok((addr, rate))
}

#[tokio::main]
async fn main() -> ExitCode {
    let (addr, rate) = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("usage: fake-expo [ADDR] [RATE_PER_SECOND]: {e}");
            return ExitCode::from(2);
        }
    };
    let expo = FakeExpo::start_on(addr, (rate > 0).then_some(rate)).await;
    println!("fake-expo {}", expo.url());
    let _ = tokio::signal::ctrl_c().await;
    ExitCode::SUCCESS
}
