//! What the operator console shares with the services that add a part to
//! it. The console (its own crate) signs operators in; a service adds an
//! [`Area`] (accounts: users) through [`crate::service::Build::console`],
//! whose handlers take the signed-in [`Operator`] and answer in the
//! console's error shape ([`Error`]). Services never depend on the console,
//! nor the console on them: the binary builds the console last, with the
//! areas the services offered.

mod error;
pub mod input;
mod operator;

pub use error::{Error, ErrorBody, Wire, code, invalid, not_found, render};
pub use operator::{Operator, Role, Roles};

use utoipa_axum::router::OpenApiRouter;

/// A part of the console a service adds: its routes (under the console's
/// `/console/v1`, their state already given), the role an operator needs
/// for them, and its name in the navigation.
pub struct Area {
    /// The navigation's key and the page's path (`users`).
    pub name: &'static str,
    /// What the navigation shows (`Users`).
    pub title: &'static str,
    /// The role every route of the area needs.
    pub role: Role,
    pub routes: OpenApiRouter,
}
