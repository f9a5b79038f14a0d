//! `emotes.list`.

use serde::Serialize;
use utoipa::ToSchema;

use super::Ctx;
use crate::domain::emotes::{self, Emote};
use crate::error::Error;
use crate::trpc::{Access, Kind, Procedures, no_input};

#[derive(Debug, Serialize, ToSchema)]
pub struct EmoteList {
    /// Each name once: the channel's emotes over global ones; 7TV over
    /// BetterTTV over FrankerFaceZ.
    pub emotes: Vec<Emote>,
}

pub fn add(p: Procedures<Ctx>) -> Procedures<Ctx> {
    p.procedure(
        Kind::Query,
        "emotes.list",
        Access::Public,
        "The merged emote set (7TV, BetterTTV, FrankerFaceZ)",
        no_input(list),
    )
}

async fn list(ctx: Ctx) -> Result<EmoteList, Error> {
    Ok(EmoteList {
        emotes: emotes::merged(&ctx.state.platform.db).await?,
    })
}
