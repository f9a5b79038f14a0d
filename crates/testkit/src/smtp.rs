//! A fake SMTP server (RFC 5321, plain text, no auth): records every
//! message it accepts, and can answer the next messages with a temporary
//! failure (451) to exercise retries.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// One accepted message.
#[derive(Debug, Clone)]
pub struct SmtpMessage {
    pub from: String,
    pub to: Vec<String>,
    pub data: String,
}

#[derive(Default)]
struct Inner {
    messages: Mutex<Vec<SmtpMessage>>,
    fail_next: AtomicUsize,
}

#[derive(Clone)]
pub struct FakeSmtp {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
}

impl FakeSmtp {
    pub async fn start() -> Self {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Listens on `addr`.
    pub async fn start_on(addr: SocketAddr) -> Self {
        let listener = TcpListener::bind(addr)
            .await
            .expect("bind the fake SMTP server");
        let addr = listener.local_addr().expect("fake SMTP address");
        let inner = Arc::new(Inner::default());
        let shared = inner.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(session(stream, shared.clone()));
            }
        });
        Self { addr, inner }
    }

    /// `smtp://127.0.0.1:<port>` for `KEEL_SMTP_URL`.
    pub fn url(&self) -> String {
        format!("smtp://{}", self.addr)
    }

    pub fn messages(&self) -> Vec<SmtpMessage> {
        self.inner
            .messages
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Answers the next `n` messages with `451` (try again later).
    pub fn fail_next(&self, n: usize) {
        self.inner.fail_next.store(n, Ordering::SeqCst);
    }
}

async fn session(stream: TcpStream, inner: Arc<Inner>) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    write.write_all(b"220 fake.test ESMTP\r\n").await?;
    let mut from = String::new();
    let mut to = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let upper = line.to_ascii_uppercase();
        let reply: &[u8] = if upper.starts_with("EHLO") {
            b"250-fake.test\r\n250 8BITMIME\r\n"
        } else if upper.starts_with("HELO") || upper.starts_with("NOOP") {
            b"250 OK\r\n"
        } else if upper.starts_with("RSET") {
            from.clear();
            to.clear();
            b"250 OK\r\n"
        } else if upper.starts_with("MAIL FROM:") {
            from = address(&line);
            b"250 OK\r\n"
        } else if upper.starts_with("RCPT TO:") {
            to.push(address(&line));
            b"250 OK\r\n"
        } else if upper.starts_with("DATA") {
            write
                .write_all(b"354 End data with <CR><LF>.<CR><LF>\r\n")
                .await?;
            let data = read_data(&mut lines).await?;
            let failing = inner
                .fail_next
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if failing {
                b"451 4.3.0 Try again later\r\n"
            } else {
                inner
                    .messages
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(SmtpMessage {
                        from: from.clone(),
                        to: std::mem::take(&mut to),
                        data,
                    });
                b"250 OK queued\r\n"
            }
        } else if upper.starts_with("QUIT") {
            write.write_all(b"221 Bye\r\n").await?;
            return Ok(());
        } else {
            b"502 Command not implemented\r\n"
        };
        write.write_all(reply).await?;
    }
}

async fn read_data(
    lines: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
) -> std::io::Result<String> {
    let mut data = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 || line == ".\r\n" {
            return Ok(data);
        }
        // Undo dot-stuffing.
        data.push_str(line.strip_prefix('.').unwrap_or(&line));
    }
}

fn address(line: &str) -> String {
    line.split_once('<')
        .and_then(|(_, rest)| rest.split_once('>'))
        .map(|(a, _)| a.to_owned())
        .unwrap_or_default()
}
