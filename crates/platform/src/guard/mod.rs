//! The one guard in front of every credential check: a password sign-in,
//! the second factor or passkey step that follows one, a password re-typed
//! before a sensitive change. Every service's such route asks it first:
//!
//! 1. [`Guard::knock`] counts the attempt per address and per login name
//!    in the shared cache (every node, with Redis) before anything is
//!    hashed, and refuses beyond the door's limits with [`Throttled`]
//!    (each service answers 429 with `Retry-After` in its own shape);
//! 2. [`Knock::verify`] checks the password on the hashing slots, shared
//!    fairly between services (`password::slots`), so one service's flood cannot
//!    starve another's sign-ins;
//! 3. each outcome is counted on `/metrics`
//!    (`keel_sign_in_attempts_total{door, outcome}`) and a refused or
//!    throttled attempt is logged at WARN, naming the login by its keyed
//!    pseudonym, never as typed.
//!
//! [`crate::password::verify`] is private to the platform: a service can
//! only check a password through a [`Knock`].

use std::net::IpAddr;
use std::time::Duration;

use crate::cache::Cache;

/// A route that checks a credential, and how often it may be tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Door {
    /// The service (its hashing lane, its metrics label's prefix).
    pub service: &'static str,
    /// The door's own name: `login`, `passkey`, `proof`.
    pub name: &'static str,
    /// Its routes (method, path relative to the service's base): what the
    /// test that walks the services' route tables looks for.
    pub routes: &'static [(&'static str, &'static str)],
    /// Attempts a minute from one address (0: no limit).
    pub per_address: u64,
    /// Attempts a minute for one login name, from anywhere (0: no limit).
    pub per_name: u64,
}

impl Door {
    /// `service:name`, as logs and metrics label it.
    pub fn label(&self) -> String {
        format!("{}:{}", self.service, self.name)
    }

    /// The same door with other limits (a service's configuration).
    #[must_use]
    pub const fn limited(self, per_address: u64, per_name: u64) -> Self {
        Self {
            per_address,
            per_name,
            ..self
        }
    }
}

/// Too many attempts: try again after `retry_after` (at least a second).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many attempts; try again in {} s", retry_after.as_secs())]
pub struct Throttled {
    pub retry_after: Duration,
}

impl Throttled {
    /// Whole seconds, for `Retry-After`.
    pub fn secs(&self) -> u64 {
        self.retry_after.as_secs().max(1)
    }
}

/// The process's guard: the shared cache it counts in, and the hash a
/// login that names no one is checked against, so both cost the same.
#[derive(Clone)]
pub struct Guard {
    cache: Cache,
    dummy_hash: std::sync::Arc<str>,
}

/// Why an attempt ended, as the metric labels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Accepted,
    Refused,
    Throttled,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Self::Accepted => "accepted",
            Self::Refused => "refused",
            Self::Throttled => "throttled",
        }
    }
}

impl Guard {
    pub fn new(cache: Cache) -> Result<Self, crate::password::HashError> {
        Ok(Self {
            cache,
            dummy_hash: crate::password::dummy_hash()?.into(),
        })
    }

    /// Counts an attempt at `door` from `address` as `name` (when the door
    /// takes one; trimmed and compared without case). Refused beyond the
    /// door's limits, before anything is hashed; the refused attempt
    /// counts too, so a client that keeps knocking stays out.
    pub async fn knock(
        &self,
        door: Door,
        address: IpAddr,
        name: Option<&str>,
    ) -> Result<Knock<'_>, Throttled> {
        let name = name.map(|n| n.trim().to_lowercase());
        let knock = Knock {
            guard: self,
            door,
            address,
            pseudonym: name.as_deref().map(|n| self.cache.pseudonym(n)),
            done: false,
        };
        let by_address = self
            .cache
            .per_minute(&scope(&door, "ip"), &address.to_string(), door.per_address)
            .await;
        let by_name = match &name {
            Some(n) => {
                self.cache
                    .per_minute(&scope(&door, "name"), n, door.per_name)
                    .await
            }
            None => None,
        };
        match by_address.max(by_name) {
            Some(wait) => {
                let mut knock = knock;
                knock.finish(Outcome::Throttled);
                Err(Throttled {
                    retry_after: wait.max(Duration::from_secs(1)),
                })
            }
            None => Ok(knock),
        }
    }
}

fn scope(door: &Door, by: &str) -> String {
    format!("guard:{}:{}:{by}", door.service, door.name)
}

/// An attempt let in: check its password with [`Knock::verify`], and say
/// how the attempt ended ([`Knock::accepted`], [`Knock::refused`]).
/// Dropped without an outcome (a step still missing, such as the second
/// factor, or a failure of keel's own), it is not counted.
pub struct Knock<'a> {
    guard: &'a Guard,
    door: Door,
    address: IpAddr,
    pseudonym: Option<String>,
    done: bool,
}

impl Knock<'_> {
    /// Whether `password` matches `hash` (the guard's own hash, which
    /// nothing matches, when the login names no one: the same cost). A
    /// mismatch ends the attempt as refused; a match is not yet an
    /// acceptance (a second factor may follow): say how it ended with
    /// [`Knock::accepted`] or [`Knock::refused`].
    /// Too many checks waiting for the hashing slots already
    /// (`password::slots::MAX_WAITING` in this service's lane) is [`Throttled`]
    /// for a second.
    pub async fn verify(
        &mut self,
        password: String,
        hash: Option<String>,
    ) -> Result<bool, Throttled> {
        let hash = hash.unwrap_or_else(|| self.guard.dummy_hash.to_string());
        let ok = crate::password::verify(self.door.service, password, hash)
            .await
            .map_err(|_| {
                self.finish(Outcome::Throttled);
                Throttled {
                    retry_after: Duration::from_secs(1),
                }
            })?;
        if !ok {
            self.finish(Outcome::Refused);
        }
        Ok(ok)
    }

    /// The attempt succeeded.
    pub fn accepted(mut self) {
        self.finish(Outcome::Accepted);
    }

    /// The attempt failed (a wrong password, code or passkey).
    pub fn refused(mut self) {
        self.finish(Outcome::Refused);
    }

    fn finish(&mut self, outcome: Outcome) {
        if self.done {
            return;
        }
        self.done = true;
        let door = self.door.label();
        metrics::counter!("keel_sign_in_attempts_total", "door" => door.clone(), "outcome" => outcome.label())
            .increment(1);
        let name = self.pseudonym.as_deref().unwrap_or("-");
        match outcome {
            Outcome::Accepted => {}
            Outcome::Refused => tracing::warn!(
                door, address = %self.address, name,
                "sign-in refused (the name is its pseudonym)"
            ),
            Outcome::Throttled => tracing::warn!(
                door, address = %self.address, name,
                "sign-in throttled: too many attempts (the name is its pseudonym)"
            ),
        }
    }
}
