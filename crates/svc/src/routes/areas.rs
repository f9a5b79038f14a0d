//! svc's parts of the operator console: the same routes svc's admins and
//! scripts call (the same handlers, checks and answers), also served by
//! the console under `/console/v1/svc`, behind its sign-in. There the
//! operator's role stands for the capability: `push` for sending and the
//! device list, `forms` for settings, forms and submissions, `operators`
//! for svc's own users (who sign in to its API). Errors keep svc's shape,
//! which is the console's (`code`, `message`) plus `data`.

use axum::middleware;
use keel_platform::console::Area;
use keel_platform::utoipa_axum::router::OpenApiRouter;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{Content, OpenApi, Ref, RefOr, ResponseBuilder};

use crate::auth::roles;
use crate::state::AppState;

/// Where svc's routes sit in the console.
pub const PREFIX: &str = "/console/v1/svc";

/// The push, forms and svc admins areas, their routes given their state.
pub fn areas(state: &AppState) -> [Area; 3] {
    let push = super::push_admin(state).layer(middleware::from_fn_with_state(
        state.clone(),
        super::push_switch,
    ));
    [
        Area {
            name: "push",
            title: "Push",
            role: roles::PUSH,
            routes: in_console(push, "push", state),
        },
        Area {
            name: "forms",
            title: "Forms",
            role: roles::SITE,
            routes: in_console(super::forms_admin(), "forms", state),
        },
        Area {
            name: "svc-admins",
            title: "svc admins",
            role: roles::ADMINS,
            routes: in_console(super::users_admin(), "svc-admins", state),
        },
    ]
}

/// `routes` under [`PREFIX`], documented as the console's: its session
/// (and CSRF token on changes) instead of svc's credentials, its error
/// body, the area's tag.
fn in_console(routes: OpenApiRouter<AppState>, tag: &str, state: &AppState) -> OpenApiRouter {
    let mut nested = OpenApiRouter::new()
        .nest(PREFIX, routes)
        .with_state(state.clone());
    as_console(nested.get_openapi_mut(), tag);
    nested
}

fn as_console(doc: &mut OpenApi, tag: &str) {
    for item in doc.paths.paths.values_mut() {
        let reads = [&mut item.get];
        for op in reads.into_iter().flatten() {
            document(op, tag, &["console_session"]);
        }
        let changes = [
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ];
        for op in changes.into_iter().flatten() {
            document(op, tag, &["console_session", "console_csrf"]);
        }
    }
    // The console's own `ErrorBody` (code and message) describes svc's
    // bodies too; svc's, of the same name, would replace it.
    if let Some(c) = doc.components.as_mut() {
        c.schemas.remove("ErrorBody");
    }
}

fn document(op: &mut Operation, tag: &str, schemes: &[&str]) {
    let mut need = SecurityRequirement::default();
    for scheme in schemes {
        need = need.add::<&str, [&str; 0], &str>(scheme, []);
    }
    op.security = Some(vec![need]);
    op.tags = Some(vec![tag.to_owned()]);
    // The console's sign-in layer answers before svc's checks do.
    let not_signed_in = ResponseBuilder::new()
        .description("not_signed_in: no live console session")
        .content(
            "application/json",
            Content::new(Some(Ref::from_schema_name("ErrorBody"))),
        )
        .build();
    (op.responses.responses).insert("401".to_owned(), RefOr::T(not_signed_in));
}
