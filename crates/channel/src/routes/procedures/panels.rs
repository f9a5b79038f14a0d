//! `panels.list`, `panels.create`, `panels.update`, `panels.delete`,
//! `panels.reorder`.

use serde::Deserialize;
use utoipa::ToSchema;

use super::{Acknowledged, Ctx};
use crate::domain::panels::{self, NewPanel, Panel, PanelUpdate};
use crate::error::Error;
use crate::trpc::{Access, Kind, Procedures, no_input};

#[derive(Debug, Deserialize, ToSchema)]
pub struct PanelId {
    pub id: String,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct PanelOrder {
    /// Every panel's id, in the new order.
    pub ids: Vec<String>,
}

/// The panels, in display order.
#[derive(Debug, serde::Serialize, ToSchema)]
pub struct PanelList {
    pub panels: Vec<Panel>,
}

pub fn add(p: Procedures<Ctx>) -> Procedures<Ctx> {
    p.procedure(
        Kind::Query,
        "panels.list",
        Access::SignedIn,
        "Every panel, in display order",
        no_input(list),
    )
    .procedure(
        Kind::Mutation,
        "panels.create",
        Access::SignedIn,
        "Adds a panel at the end (at most 50)",
        create,
    )
    .procedure(
        Kind::Mutation,
        "panels.update",
        Access::SignedIn,
        "Changes the fields given of a panel",
        update,
    )
    .procedure(
        Kind::Mutation,
        "panels.delete",
        Access::SignedIn,
        "Deletes a panel",
        delete,
    )
    .procedure(
        Kind::Mutation,
        "panels.reorder",
        Access::SignedIn,
        "Puts the panels in the order given (every id once)",
        reorder,
    )
}

async fn list(ctx: Ctx) -> Result<PanelList, Error> {
    Ok(PanelList {
        panels: panels::list(&ctx.state.platform.db).await?,
    })
}

async fn create(ctx: Ctx, input: NewPanel) -> Result<Panel, Error> {
    let panel = panels::create(&ctx.state.platform.db, input).await?;
    ctx.info_changed();
    Ok(panel)
}

async fn update(ctx: Ctx, input: PanelUpdate) -> Result<Panel, Error> {
    let panel = panels::update(&ctx.state.platform.db, input).await?;
    ctx.info_changed();
    Ok(panel)
}

async fn delete(ctx: Ctx, input: PanelId) -> Result<Acknowledged, Error> {
    panels::delete(&ctx.state.platform.db, &input.id).await?;
    ctx.info_changed();
    Ok(Acknowledged::YES)
}

async fn reorder(ctx: Ctx, input: PanelOrder) -> Result<PanelList, Error> {
    let panels = panels::reorder(&ctx.state.platform.db, &input.ids).await?;
    ctx.info_changed();
    Ok(PanelList { panels })
}
