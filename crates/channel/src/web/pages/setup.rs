//! `GET /setup`: the set-up wizard, while no owner exists (every page sends
//! visitors here until then; afterwards this sends them to the dashboard).

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;
use serde_json::json;

use super::{Head, data, layout, respond, site_header, status_region};
use crate::error::PageError;
use crate::web::WebState;

/// The set-up wizard.
#[utoipa::path(get, path = "/setup", tag = "pages", operation_id = "setup_page",
    responses(
        (status = 200, description = "The set-up wizard (HTML): account, channel, provider check", content_type = "text/html"),
        (status = 303, description = "To /dashboard once set-up is done"),
    ))]
pub async fn page(State(s): State<WebState>) -> Result<Response, PageError> {
    if s.set_up().await? {
        return Ok(Redirect::to("/dashboard").into_response());
    }
    let missing = s.cfg.stream.missing();
    let main = html! {
        main #main.narrow {
            h1 { "Set up your channel" }
            ol.steps aria-label="Steps" {
                li aria-current="step" { "Account" }
                li { "Channel" }
                li { "Streaming" }
            }
            (status_region())
            form #step-account.card {
                h2 { "Your account" }
                div.field {
                    label for="code" { "Set-up code" }
                    input #code name="code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" required aria-describedby="code-hint";
                    span #code-hint.hint { "keel printed it in its log when it started; only whoever runs keel has it." }
                }
                p.muted { "You sign in with these to run the channel." }
                div.field {
                    label for="email" { "Email" }
                    input #email name="email" type="email" autocomplete="username" required;
                }
                div.field {
                    label for="password" { "Password" }
                    input #password name="password" type="password" autocomplete="new-password" minlength="10" maxlength="200" required aria-describedby="password-hint";
                    span #password-hint.hint { "At least 10 characters." }
                }
                div.field {
                    label for="confirm" { "Password again" }
                    input #confirm name="confirm" type="password" autocomplete="new-password" required;
                }
                div.actions { button.primary type="submit" { "Next" } }
            }
            form #step-channel.card hidden {
                h2 { "Your channel" }
                div.field {
                    label for="title" { "Title" }
                    input #title name="title" type="text" maxlength="120" required;
                }
                div.field {
                    label for="description" { "Description" }
                    textarea #description name="description" rows="4" maxlength="2000" {}
                }
                div.actions {
                    button #back type="button" { "Back" }
                    button.primary type="submit" { "Create the channel" }
                }
            }
            section #step-provider.card hidden aria-labelledby="provider-title" {
                h2 #provider-title { "Streaming provider" }
                @if missing.is_empty() {
                    p { "GetStream is configured. Create the livestream now (or later, from the dashboard)." }
                    button #provision.primary type="button" { "Set up streaming" }
                    div #provisioned hidden {
                        p { "Point OBS at this server; the stream key is on the dashboard." }
                        code #rtmps-url.value {}
                    }
                } @else {
                    p { "To stream, set these variables and restart keel:" }
                    ul.missing { @for v in &missing { li { code { (v) } } } }
                    p.muted { "Everything else works without them." }
                }
                div.actions { a.button.primary href="/dashboard" { "Go to the dashboard" } }
            }
            (data("setup-state", &json!({ "provider": { "configured": missing.is_empty(), "missing": missing } })))
        }
    };
    let head = Head {
        title: "Set up your channel",
        description: "Create the channel's owner account and name the channel.",
        path: "/setup",
        script: Some("setup.js"),
        private: true,
    };
    let header = site_header("New channel", None, &html! {});
    Ok(respond(layout(&s, None, &head, &header, &main), "no-store"))
}
