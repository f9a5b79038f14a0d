//! The signed-in operator, as every console route sees it: who, from
//! where, with which roles. The console's sign-in layer puts it in the
//! request; a handler takes it as an extractor and asks for its role.

use std::net::IpAddr;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use super::error::{Error, code};
use crate::audit::{Actor, Entry};
use crate::db::Db;

/// What an operator may do, by area. Health and the audit log are every
/// operator's.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Find users, ban them, end their sessions, remove a second factor.
    Users,
    /// See jobs, retry or discard the failed.
    Jobs,
    /// svc's push notifications.
    Push,
    /// svc's forms and settings.
    Forms,
    /// Add, disable and remove operators, and give roles.
    Operators,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Users,
        Role::Jobs,
        Role::Push,
        Role::Forms,
        Role::Operators,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Users => "users",
            Role::Jobs => "jobs",
            Role::Push => "push",
            Role::Forms => "forms",
            Role::Operators => "operators",
        }
    }

    /// The role named `name` (as stored, as typed on the command line).
    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(name.trim()))
    }
}

/// A set of roles, stored as their names separated by spaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roles(Vec<Role>);

impl Roles {
    /// The roles of the stored text (an unknown name is skipped).
    pub fn from_stored(text: &str) -> Self {
        Self::of(text.split_whitespace().filter_map(Role::parse))
    }

    pub fn of(roles: impl IntoIterator<Item = Role>) -> Self {
        let mut all: Vec<Role> = Vec::new();
        for r in roles {
            if !all.contains(&r) {
                all.push(r);
            }
        }
        all.sort_by_key(|r| Role::ALL.iter().position(|a| a == r));
        Self(all)
    }

    pub fn has(&self, role: Role) -> bool {
        self.0.contains(&role)
    }

    pub fn iter(&self) -> impl Iterator<Item = Role> + '_ {
        self.0.iter().copied()
    }

    /// As stored: `users jobs`.
    pub fn stored(&self) -> String {
        self.names().join(" ")
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|r| r.as_str()).collect()
    }
}

/// The operator of a console request.
#[derive(Debug, Clone)]
pub struct Operator {
    pub id: i64,
    pub name: String,
    pub roles: Roles,
    /// Where the request came from (through trusted proxies).
    pub address: IpAddr,
}

impl Operator {
    /// 403 unless the operator has `role`.
    pub fn require(&self, role: Role) -> Result<(), Error> {
        if self.roles.has(role) {
            Ok(())
        } else {
            Err(Error::forbidden(
                code::FORBIDDEN,
                format!(
                    "This needs the {} role, which {} does not have.",
                    role.as_str(),
                    self.name
                ),
            ))
        }
    }

    /// Who acts, as the audit log names them: `operator:<name>`.
    pub fn actor(&self) -> Actor {
        Actor::at(format!("operator:{}", self.name), self.address)
    }

    /// Records `entry` as done by this operator.
    pub async fn record(&self, db: &Db, entry: Entry) {
        crate::audit::record(db, &self.actor(), entry).await;
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Operator {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Error> {
        parts.extensions.get::<Operator>().cloned().ok_or_else(|| {
            Error::unauthorized(code::NOT_SIGNED_IN, "Sign in to the console first.")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_stored_once_each_in_a_fixed_order() {
        let roles = Roles::from_stored("jobs users  JOBS nonsense");
        assert_eq!(roles.stored(), "users jobs");
        assert!(roles.has(Role::Jobs));
        assert!(!roles.has(Role::Operators));
    }
}
