//! The live call's HLS playlist URL, for `stream.viewerToken`: asked of the
//! provider at most once per live session on each node, however many
//! viewers arrive (a burst at the start of a stream waits for one answer),
//! and after a failed or empty answer at most every [`RETRY_AFTER`]. An
//! anonymous visitor can no longer spend the provider's rate limit.

use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a failed or empty answer is kept before the provider is asked
/// again.
pub const RETRY_AFTER: Duration = Duration::from_secs(5);

struct Known {
    session: String,
    url: Option<String>,
    at: Instant,
}

#[derive(Default)]
pub struct Playlist {
    known: Mutex<Option<Known>>,
    asking: tokio::sync::Mutex<()>,
}

impl Playlist {
    fn cached(&self, session: &str) -> Option<Option<String>> {
        let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known
            .as_ref()
            .filter(|k| k.session == session)
            .filter(|k| k.url.is_some() || k.at.elapsed() < RETRY_AFTER)
            .map(|k| k.url.clone())
    }

    /// The playlist of live session `session`, from `ask` (the provider)
    /// only when this node does not know it yet.
    pub async fn of<F, Fut>(&self, session: &str, ask: F) -> Option<String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Option<String>>,
    {
        if let Some(url) = self.cached(session) {
            return url;
        }
        let _one_at_a_time = self.asking.lock().await;
        if let Some(url) = self.cached(session) {
            return url;
        }
        let url = ask().await;
        *self.known.lock().unwrap_or_else(PoisonError::into_inner) = Some(Known {
            session: session.to_owned(),
            url: url.clone(),
            at: Instant::now(),
        });
        url
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn a_session_is_asked_once_and_a_new_session_again() {
        let p = Playlist::default();
        let asked = AtomicUsize::new(0);
        let ask = |url: &'static str| {
            let asked = &asked;
            move || async move {
                asked.fetch_add(1, Ordering::SeqCst);
                Some(url.to_owned())
            }
        };
        let burst = (0..50).map(|_| p.of("s1", ask("a")));
        let got = futures::future::join_all(burst).await;
        assert!(got.iter().all(|u| u.as_deref() == Some("a")));
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert_eq!(p.of("s2", ask("b")).await.as_deref(), Some("b"));
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn an_empty_answer_is_kept_only_briefly() {
        let p = Playlist::default();
        assert_eq!(p.of("s", || async { None }).await, None);
        assert_eq!(p.of("s", || async { Some("x".to_owned()) }).await, None);
    }
}
