//! The fake gateway: one WebSocket session per shard connection, JSON
//! encoding, no compression (what twilight asks for without its zlib
//! feature).

use std::sync::Arc;

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{Conn, Control, Inner, lock, owner_shard, payloads};

/// Discord's usual interval.
const HEARTBEAT_MS: u64 = 41_250;

pub async fn upgrade(ws: WebSocketUpgrade, State(inner): State<Arc<Inner>>) -> Response {
    ws.on_upgrade(move |socket| session(inner, socket))
}

async fn send(socket: &mut WebSocket, v: &Value) -> bool {
    socket
        .send(Message::Text(Utf8Bytes::from(v.to_string())))
        .await
        .is_ok()
}

async fn close(socket: &mut WebSocket, code: u16) {
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: Utf8Bytes::from_static("closed by the fake"),
        })))
        .await;
}

struct Session {
    id: u64,
    seq: u64,
    shard: Option<[u32; 2]>,
}

async fn session(inner: Arc<Inner>, mut socket: WebSocket) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let id = {
        let mut n = lock(&inner.next_conn);
        *n += 1;
        *n
    };
    lock(&inner.conns).push(Conn {
        id,
        shard: None,
        tx,
    });
    let mut s = Session {
        id,
        seq: 0,
        shard: None,
    };
    if send(&mut socket, &payloads::hello(HEARTBEAT_MS)).await {
        loop {
            tokio::select! {
                msg = socket.recv() => match msg {
                    Some(Ok(Message::Text(t))) => {
                        let Ok(v) = serde_json::from_str::<Value>(t.as_str()) else {
                            close(&mut socket, 4002).await;
                            break;
                        };
                        if !on_payload(&inner, &mut s, &mut socket, &v).await {
                            break;
                        }
                    }
                    Some(Ok(Message::Close(_))) if *lock(&inner.ignore_close) => {
                        // Stall: hold the connection, answer nothing.
                        let _ = rx.recv().await;
                        break;
                    }
                    Some(Ok(Message::Close(_))) => {
                        // The close reply goes out (tungstenite queues it)
                        // while reading on until the peer hangs up.
                        let drain = async { while let Some(Ok(_)) = socket.recv().await {} };
                        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), drain).await;
                        break;
                    }
                    Some(Err(_)) | None => break,
                    Some(Ok(_)) => {}
                },
                ctl = rx.recv() => match ctl {
                    Some(Control::Dispatch(t, d)) => {
                        s.seq += 1;
                        if !send(&mut socket, &payloads::dispatch(s.seq, &t, d)).await {
                            break;
                        }
                    }
                    Some(Control::Close(code)) => {
                        close(&mut socket, code).await;
                        break;
                    }
                    None => break,
                },
            }
        }
    }
    lock(&inner.conns).retain(|c| c.id != s.id);
}

/// Handles one payload from the shard; false ends the session.
async fn on_payload(inner: &Inner, s: &mut Session, socket: &mut WebSocket, v: &Value) -> bool {
    match v["op"].as_u64() {
        Some(1) => send(socket, &payloads::heartbeat_ack()).await,
        Some(2) => identify(inner, s, socket, &v["d"]).await,
        Some(3) => {
            lock(&inner.presences).push(v["d"].clone());
            true
        }
        Some(6) => {
            // Resume: the session id names the shard.
            let shard = v["d"]["session_id"]
                .as_str()
                .and_then(parse_session)
                .filter(|_| token_ok(inner, &v["d"]));
            let Some(shard) = shard else {
                // Invalid session, not resumable: the shard identifies anew.
                return send(socket, &json!({"op": 9, "s": null, "t": null, "d": false})).await;
            };
            set_shard(inner, s, shard);
            s.seq += 1;
            send(socket, &payloads::dispatch(s.seq, "RESUMED", json!({}))).await
        }
        Some(_) => true,
        None => {
            close(socket, 4002).await;
            false
        }
    }
}

fn token_ok(inner: &Inner, d: &Value) -> bool {
    d["token"]
        .as_str()
        .is_some_and(|t| t.strip_prefix("Bot ").unwrap_or(t) == inner.token)
}

fn parse_session(id: &str) -> Option<[u32; 2]> {
    let mut parts = id.strip_prefix("session-")?.split('-');
    let shard = parts.next()?.parse().ok()?;
    let total = parts.next()?.parse().ok()?;
    Some([shard, total])
}

fn set_shard(inner: &Inner, s: &mut Session, shard: [u32; 2]) {
    s.shard = Some(shard);
    if let Some(c) = lock(&inner.conns).iter_mut().find(|c| c.id == s.id) {
        c.shard = Some(shard);
    }
}

async fn identify(inner: &Inner, s: &mut Session, socket: &mut WebSocket, d: &Value) -> bool {
    if s.shard.is_some() {
        close(socket, 4005).await;
        return false;
    }
    let scripted = *lock(&inner.close_on_identify);
    let code = if !token_ok(inner, d) {
        Some(4004)
    } else {
        scripted
    };
    if let Some(code) = code {
        close(socket, code).await;
        return false;
    }
    let shard = d["shard"]
        .as_array()
        .and_then(|a| Some([a.first()?.as_u64()?, a.get(1)?.as_u64()?]))
        .and_then(|[a, b]| Some([u32::try_from(a).ok()?, u32::try_from(b).ok()?]))
        .unwrap_or([0, 1]);
    if shard[0] >= shard[1] {
        close(socket, 4010).await;
        return false;
    }
    lock(&inner.identifies).push(shard);
    // A hanging gateway: READY comes only once the hold is lifted.
    while *lock(&inner.hold_identify) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    set_shard(inner, s, shard);
    let mine: Vec<u64> = lock(&inner.guilds)
        .iter()
        .copied()
        .filter(|g| owner_shard(*g, shard[1]) == shard[0])
        .collect();
    let addr = lock(&inner.advertised).clone();
    let session = format!("session-{}-{}-{}", shard[0], shard[1], s.id);
    s.seq += 1;
    let ready = payloads::ready(&session, &format!("ws://{addr}"), shard, &mine);
    if !send(socket, &payloads::dispatch(s.seq, "READY", ready)).await {
        return false;
    }
    for g in mine {
        s.seq += 1;
        if !send(
            socket,
            &payloads::dispatch(s.seq, "GUILD_CREATE", payloads::guild(g, 1)),
        )
        .await
        {
            return false;
        }
    }
    true
}
