//! The tRPC procedures, one file per namespace.

mod analytics;
mod channel;
mod emotes;
mod panels;
mod setup;
mod stream;

use crate::trpc::Procedures;

/// Every procedure of the API.
pub fn all() -> Procedures {
    let p = Procedures::default();
    let p = setup::add(p);
    let p = channel::add(p);
    let p = stream::add(p);
    let p = panels::add(p);
    let p = analytics::add(p);
    emotes::add(p)
}
