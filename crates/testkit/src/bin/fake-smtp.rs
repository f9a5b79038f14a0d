//! The fake SMTP server as a process, for the container test:
//! `fake-smtp ADDR` accepts mail on ADDR and prints a line per message,
//! `received to=<recipients> bytes=<size>`, so the test reads what keel
//! sent from the container's log.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use keel_testkit::FakeSmtp;

#[tokio::main]
async fn main() -> ExitCode {
    let Some(addr) = std::env::args().nth(1) else {
        eprintln!("usage: fake-smtp ADDR");
        return ExitCode::from(2);
    };
    let addr: SocketAddr = match addr.parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("fake-smtp: ADDR: {e}");
            return ExitCode::from(2);
        }
    };
    let smtp = FakeSmtp::start_on(addr).await;
    println!("fake-smtp {}", smtp.url());
    let mut shown = 0;
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => return ExitCode::SUCCESS,
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
        for m in smtp.messages().iter().skip(shown) {
            println!("received to={} bytes={}", m.to.join(","), m.data.len());
            shown += 1;
        }
    }
}
