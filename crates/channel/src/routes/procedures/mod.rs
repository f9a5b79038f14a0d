//! The tRPC procedures, one file per namespace, and the context they run
//! with.

mod analytics;
mod channel;
mod emotes;
mod panels;
pub(crate) mod setup;
mod stream;

use std::net::IpAddr;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::{Visitor, same_origin};
use crate::domain::owner::Owner;
use crate::error::{self, Error};
use crate::state::AppState;
use crate::trpc::{self, Access, Cookies, Procedures};

/// What a procedure runs with: the service's state and who calls.
#[derive(Clone)]
pub struct Ctx {
    pub state: AppState,
    pub owner: Option<Owner>,
    pub peer: IpAddr,
    /// Whether the request comes from another site.
    cross_site: bool,
    cookies: Cookies,
}

impl FromRequestParts<AppState> for Ctx {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let Visitor { owner, peer } = Visitor::from_request_parts(parts, state).await?;
        Ok(Self {
            state: state.clone(),
            owner,
            peer,
            cross_site: !same_origin(&state.cfg, &parts.headers),
            cookies: Cookies::default(),
        })
    }
}

impl trpc::Context for Ctx {
    /// Only the owner is ever signed in.
    fn authorize(&self, access: Access) -> Result<(), Error> {
        match (access, &self.owner) {
            (Access::SignedIn, None) => Err(error::not_signed_in()),
            _ => Ok(()),
        }
    }

    /// Every mutation, the owner's and the set-up alike, comes from the
    /// channel's own pages.
    fn may_mutate(&self) -> Result<(), Error> {
        if self.cross_site {
            Err(error::cross_site())
        } else {
            Ok(())
        }
    }

    fn cookies(&self) -> &Cookies {
        &self.cookies
    }
}

impl Ctx {
    /// What `channel.getInfo` answers has changed.
    fn info_changed(&self) {
        self.state.info.invalidate();
    }
}

/// `{"ok": true}`: done, nothing to say.
#[derive(Debug, Serialize, ToSchema)]
pub struct Acknowledged {
    pub ok: bool,
}

impl Acknowledged {
    pub const YES: Self = Self { ok: true };
}

/// Every procedure of the API.
pub fn all() -> Procedures<Ctx> {
    let p = Procedures::default();
    let p = setup::add(p);
    let p = channel::add(p);
    let p = stream::add(p);
    let p = panels::add(p);
    let p = analytics::add(p);
    emotes::add(p)
}
