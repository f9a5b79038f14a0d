//! Where svc's admin console was (`<REST root>/svc/admin/`): a line
//! saying where it went. svc's pages are part of keel's operator console
//! (its own listener, `KEEL_CONSOLE_ADDR`), for operators with the push or
//! forms role. (`/` is the platform's index of svc's documents.)

use axum::Router;
use axum::http::{StatusCode, header};
use axum::routing::get;

/// What the old console's address answers.
pub const MOVED: &str = "svc's admin pages are now part of keel's operator console (the console service, KEEL_CONSOLE_ADDR): an operator with the push or forms role signs in there. svc's API is unchanged.\n";

/// The old console's addresses, `at` being `<REST root>/svc/admin`.
pub fn router(at: &str) -> Router {
    let moved = || async {
        (
            StatusCode::GONE,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            MOVED,
        )
    };
    Router::new()
        .route(at, get(moved))
        .route(&format!("{at}/"), get(moved))
}
