//! `GET /login`: the owner's sign-in form.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;

use super::{Head, layout, respond, site_header, status_region};
use crate::error::PageError;
use crate::web::WebState;

/// The sign-in page.
#[utoipa::path(get, path = "/login", tag = "pages", operation_id = "login_page",
    responses(
        (status = 200, description = "The sign-in form (HTML)", content_type = "text/html"),
        (status = 303, description = "To /setup while no owner exists; to /dashboard when signed in"),
    ))]
pub async fn page(State(s): State<WebState>, headers: HeaderMap) -> Result<Response, PageError> {
    if !s.set_up().await? {
        return Ok(Redirect::to("/setup").into_response());
    }
    if s.signed_in(&headers).await?.is_some() {
        return Ok(Redirect::to("/dashboard").into_response());
    }
    let info = s.info().await?;
    let main = html! {
        main #main.narrow {
            h1 { "Sign in" }
            (status_region())
            form #login-form.card {
                div.field {
                    label for="email" { "Email" }
                    input #email name="email" type="email" autocomplete="username" required;
                }
                div.field {
                    label for="password" { "Password" }
                    input #password name="password" type="password" autocomplete="current-password" required;
                }
                div.actions { button.primary type="submit" { "Sign in" } }
            }
        }
    };
    let head = Head {
        title: "Sign in",
        description: "Sign in to run the channel.",
        path: "/login",
        script: Some("login.js"),
        private: true,
    };
    let logo = info.logo_url.as_deref();
    let header = site_header(&info.title, logo, &html! { a href="/" { "Channel" } });
    Ok(respond(layout(&s, logo, &head, &header, &main), "no-store"))
}
