//! The set-up code. While no owner exists, whoever completes the set-up
//! becomes the owner, so completing it takes a one-time code that keel
//! prints in its log at start (the way Jupyter prints its access token):
//! a visitor who finds a fresh instance cannot claim it.
//!
//! Each node that starts without an owner makes up a code and stores its
//! SHA-256; any stored code works on any node, and all are deleted in the
//! transaction that creates the owner. `KEEL_CHANNEL_SETUP_CODE` sets the
//! code instead (compared in constant time, nothing stored). Codes are
//! compared ignoring case, spaces and dashes.

use chrono::Utc;
use keel_platform::config::Secret;
use keel_platform::crypto::{constant_time_eq, random_code, sha256_hex};
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::OnConflict;
use keel_platform::sea_orm::{ConnectionTrait, DbErr, EntityTrait, PaginatorTrait, Set};

use crate::entity::{owner, setup_code};

/// What a node tells its operator at start.
#[derive(Debug, PartialEq, Eq)]
pub enum Issued {
    /// An owner exists: no code.
    NotNeeded,
    /// `KEEL_CHANNEL_SETUP_CODE` is the code.
    Configured,
    /// This code was made up and stored.
    Made(String),
}

fn normalized(code: &str) -> String {
    code.chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .flat_map(char::to_uppercase)
        .collect()
}

/// A code for this node's start, unless an owner exists.
pub async fn issue(db: &Db, configured: Option<&Secret>) -> Result<Issued, DbErr> {
    // Read from the table: this module is below the owner's, which uses it.
    if owner::Entity::find().count(db.read()).await? > 0 {
        return Ok(Issued::NotNeeded);
    }
    if configured.is_some() {
        return Ok(Issued::Configured);
    }
    let code = random_code(3);
    setup_code::Entity::insert(setup_code::ActiveModel {
        code_hash: Set(sha256_hex(normalized(&code).as_bytes())),
        created_at: Set(Utc::now()),
    })
    .on_conflict(
        OnConflict::column(setup_code::Column::CodeHash)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(db.write())
    .await?;
    Ok(Issued::Made(code))
}

/// Whether `code` is a valid set-up code.
pub async fn valid<C: ConnectionTrait>(
    conn: &C,
    configured: Option<&Secret>,
    code: &str,
) -> Result<bool, DbErr> {
    let given = normalized(code);
    if given.is_empty() {
        return Ok(false);
    }
    if let Some(c) = configured {
        return Ok(constant_time_eq(
            normalized(c.expose()).as_bytes(),
            given.as_bytes(),
        ));
    }
    let found = setup_code::Entity::find_by_id(sha256_hex(given.as_bytes()))
        .one(conn)
        .await?;
    Ok(found.is_some())
}

/// Forgets every code (an owner now exists).
pub async fn clear<C: ConnectionTrait>(conn: &C) -> Result<(), DbErr> {
    setup_code::Entity::delete_many().exec(conn).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_compared_ignoring_case_spaces_and_dashes() {
        assert_eq!(normalized("ab2c-d3ef - gh4k"), "AB2CD3EFGH4K");
    }
}
