//! `channel.getInfo`, `channel.update`, `profile.update`.

use super::Ctx;
use crate::domain::channel::{self, ChannelInfo, ChannelUpdate, Profile, ProfileUpdate};
use crate::error::Error;
use crate::trpc::{Access, Kind, Procedures, no_input};

pub fn add(p: Procedures<Ctx>) -> Procedures<Ctx> {
    p.procedure(Kind::Query, "channel.getInfo", Access::Public, "The channel: title, description, logo, profile, panels, social links, what a viewer's client needs; no secrets", no_input(get_info))
        .procedure(Kind::Mutation, "channel.update", Access::SignedIn, "Changes the title, description or social links (only those given)", update)
        .procedure(Kind::Mutation, "profile.update", Access::SignedIn, "Changes the profile (only the fields given; null clears an optional one)", update_profile)
}

pub async fn info(ctx: &Ctx) -> Result<ChannelInfo, Error> {
    let page = ctx
        .state
        .cfg
        .public_url
        .as_str()
        .trim_end_matches('/')
        .to_owned();
    let s = &ctx.state;
    Ok(s.info
        .get(|| channel::info(&s.platform.db, s.stream.api_key(), &page))
        .await?
        .as_ref()
        .clone())
}

async fn get_info(ctx: Ctx) -> Result<ChannelInfo, Error> {
    info(&ctx).await
}

async fn update(ctx: Ctx, input: ChannelUpdate) -> Result<ChannelInfo, Error> {
    channel::update(&ctx.state.platform.db, input).await?;
    ctx.info_changed();
    info(&ctx).await
}

async fn update_profile(ctx: Ctx, input: ProfileUpdate) -> Result<Profile, Error> {
    let profile = channel::update_profile(&ctx.state.platform.db, input).await?;
    ctx.info_changed();
    Ok(profile)
}
