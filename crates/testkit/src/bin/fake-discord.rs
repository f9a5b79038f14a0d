//! The fake Discord (REST and gateway) as a process, for the container
//! test: `fake-discord ADDR TOKEN [ADVERTISED_HOST:PORT]` serves on ADDR
//! and names ADVERTISED in its gateway URLs (where the bot reaches it).
//! Adds guild 1 so the bot has something to own. Prints its address, and
//! what the bot did at `GET /_fake/state`.

use std::net::SocketAddr;
use std::process::ExitCode;

use keel_testkit::FakeDiscordBot;

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(addr), Some(token)) = (args.next(), args.next()) else {
        eprintln!("usage: fake-discord ADDR TOKEN [ADVERTISED_HOST:PORT]");
        return ExitCode::from(2);
    };
    let addr: SocketAddr = match addr.parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("fake-discord: ADDR: {e}");
            return ExitCode::from(2);
        }
    };
    let advertised = args.next();
    let discord = FakeDiscordBot::start_on(addr, &token, advertised.as_deref()).await;
    discord.add_guild(1);
    println!("fake-discord http://{}", discord.addr);
    let _ = tokio::signal::ctrl_c().await;
    ExitCode::SUCCESS
}
