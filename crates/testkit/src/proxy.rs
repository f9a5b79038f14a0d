//! A loopback TCP proxy that can cut, refuse, slow or black-hole the
//! connection to a real dependency (PostgreSQL, Redis), to test outages
//! without mocks.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::lock;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Forward everything.
    Pass,
    /// Accept and immediately close new connections.
    Refuse,
    /// Forward, holding back each answer from upstream this long (applies
    /// to live connections too).
    Delay(Duration),
    /// A network that drops packets: nothing goes through in either
    /// direction, on live connections or new ones, and nothing is closed
    /// or refused either. What was sent meanwhile goes on when the mode
    /// changes back, as TCP's retransmissions deliver it after a partition
    /// heals.
    BlackHole,
}

struct State {
    mode: Mode,
    /// Cancelled to cut every live connection.
    cut: CancellationToken,
    /// Answers being held back by `Delay` right now.
    held: usize,
}

pub struct TcpProxy {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: CancellationToken,
}

impl TcpProxy {
    /// Proxies 127.0.0.1:<random> to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the proxy");
        let addr = listener.local_addr().expect("proxy address");
        let state = Arc::new(Mutex::new(State {
            mode: Mode::Pass,
            cut: CancellationToken::new(),
            held: 0,
        }));
        let stop = CancellationToken::new();
        tokio::spawn(accept_loop(listener, upstream, state.clone(), stop.clone()));
        Self { addr, state, stop }
    }

    pub fn set_mode(&self, mode: Mode) {
        lock(&self.state).mode = mode;
    }

    /// Closes every live connection (new ones follow the mode).
    pub fn cut(&self) {
        let mut s = lock(&self.state);
        s.cut.cancel();
        s.cut = CancellationToken::new();
    }

    /// Refuses new connections and cuts live ones: the dependency is "down".
    pub fn go_down(&self) {
        self.set_mode(Mode::Refuse);
        self.cut();
    }

    pub fn come_back(&self) {
        self.set_mode(Mode::Pass);
    }

    /// How many answers `Delay` is holding back now: a test waits for a
    /// request to be in flight with this, not with a sleep.
    pub fn held(&self) -> usize {
        lock(&self.state).held
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.stop.cancel();
        lock(&self.state).cut.cancel();
    }
}

async fn accept_loop(
    listener: TcpListener,
    upstream: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            a = listener.accept() => a,
        };
        let Ok((client, _)) = accepted else { continue };
        let (mode, cut) = {
            let s = lock(&state);
            (s.mode, s.cut.clone())
        };
        if mode == Mode::Refuse {
            drop(client);
            continue;
        }
        let state = state.clone();
        tokio::spawn(async move {
            flowing(&state).await;
            let Ok(server) = TcpStream::connect(upstream).await else {
                return;
            };
            tokio::select! {
                () = cut.cancelled() => {}
                () = pipe(client, server, state) => {}
            }
        });
    }
}

/// Waits while the mode is [`Mode::BlackHole`].
async fn flowing(state: &Mutex<State>) {
    while lock(state).mode == Mode::BlackHole {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn pipe(client: TcpStream, server: TcpStream, state: Arc<Mutex<State>>) {
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let up = async {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match cr.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            flowing(&state).await;
            if sw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = sw.shutdown().await;
    };
    let down = async {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match sr.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            flowing(&state).await;
            let mode = lock(&state).mode;
            if let Mode::Delay(delay) = mode {
                lock(&state).held += 1;
                tokio::time::sleep(delay).await;
                lock(&state).held -= 1;
            }
            if cw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = cw.shutdown().await;
    };
    tokio::join!(up, down);
}
