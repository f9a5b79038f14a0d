//! `GET /dashboard`: the owner's controls (streaming, viewers, the channel,
//! the profile, panels, the logo), each wired to the API by the page's
//! script.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use serde_json::json;

use super::{Head, data, layout, respond, site_header, status_region};
use crate::domain::channel::{self, ChannelInfo};
use crate::error::PageError;
use crate::web::WebState;

fn stream_card(rtmps: Option<&str>, live: bool) -> Markup {
    html! {
        section #stream-card.card.wide aria-labelledby="stream-title" {
            h2 #stream-title { "Stream" }
            p {
                span #live-state.badge data-live=(live) { (if live { "Live" } else { "Offline" }) }
                " " span #live-viewers aria-live="polite" {}
            }
            div #not-provisioned hidden[rtmps.is_some()] {
                p { "Create the livestream at the provider to get the server address and key for OBS." }
                button #provision.primary type="button" { "Set up streaming" }
            }
            div #provisioned hidden[rtmps.is_none()] {
                dl.kv {
                    dt { "Server (RTMPS)" }
                    dd { code #rtmps-url.value { (rtmps.unwrap_or_default()) } button #copy-url type="button" { "Copy" } }
                    dt { "Stream key" }
                    dd {
                        code #stream-key.secret aria-live="polite" { "••••••••••••••••" }
                        button #reveal-key type="button" aria-pressed="false" aria-controls="stream-key" { "Reveal" }
                        button #copy-key type="button" { "Copy" }
                    }
                }
                p.hint { "Keep the key secret: anyone with it can stream to your channel." }
                div.actions {
                    button #go-live.primary type="button" disabled[live] { "Go live" }
                    button #end-stream.danger type="button" disabled[!live] { "End stream" }
                }
            }
        }
    }
}

fn analytics() -> Markup {
    html! {
        section.card.wide aria-labelledby="viewers-title" {
            h2 #viewers-title { "Viewers" }
            div #chart-current.chart role="img" aria-label="Current session" { p.muted { "Loading…" } }
            div #chart-week.chart role="img" aria-label="Last 7 days" {}
            table {
                caption.visually-hidden { "Past sessions" }
                thead { tr { th scope="col" { "Started" } th scope="col" { "Ended" } th scope="col" { "Peak" } th scope="col" { "Average" } } }
                tbody #session-rows {}
            }
            p #no-sessions.muted { "No streams yet." }
        }
    }
}

fn channel_form(info: &ChannelInfo) -> Markup {
    let links: Vec<String> = info
        .social_links
        .iter()
        .map(|l| format!("{} {}", l.label.as_str(), l.url.as_str()))
        .collect();
    html! {
        section.card aria-labelledby="channel-title" {
            h2 #channel-title { "Channel" }
            form #channel-form {
                div.field { label for="c-title" { "Title" } input #c-title name="title" type="text" maxlength="120" required value=(info.title); }
                div.field { label for="c-description" { "Description" } textarea #c-description name="description" rows="4" maxlength="2000" { (info.description) } }
                div.field {
                    label for="c-links" { "Links" }
                    textarea #c-links name="socialLinks" rows="3" aria-describedby="links-hint" { (links.join("\n")) }
                    span #links-hint.hint { "One per line: a label, a space, then the URL." }
                }
                div.actions { button.primary type="submit" { "Save channel" } }
            }
        }
    }
}

fn profile_form(info: &ChannelInfo) -> Markup {
    let p = &info.profile;
    html! {
        section.card aria-labelledby="profile-title" {
            h2 #profile-title { "Profile" }
            form #profile-form {
                div.field { label for="p-name" { "Display name" } input #p-name name="displayName" type="text" maxlength="60" value=(p.display_name); }
                div.field { label for="p-bio" { "Bio" } textarea #p-bio name="bio" rows="3" maxlength="2000" { (p.bio) } }
                div.field { label for="p-avatar" { "Avatar URL" } input #p-avatar name="avatarUrl" type="url" value=(p.avatar_url.as_deref().unwrap_or_default()); }
                div.field { label for="p-location" { "Location" } input #p-location name="location" type="text" maxlength="80" value=(p.location.as_deref().unwrap_or_default()); }
                div.actions { button.primary type="submit" { "Save profile" } }
            }
        }
    }
}

fn panels_editor() -> Markup {
    html! {
        section.card aria-labelledby="panels-title" {
            h2 #panels-title { "Panels" }
            p #no-panels.muted { "No panels yet." }
            ol #panel-list.panel-list aria-label="Panels, in order" {}
            form #panel-form {
                h3 { "Add a panel" }
                div.field { label for="n-title" { "Title" } input #n-title name="title" type="text" maxlength="80" required; }
                div.field { label for="n-body" { "Text" } textarea #n-body name="body" rows="3" maxlength="5000" {} }
                div.field { label for="n-link" { "Link" } input #n-link name="linkUrl" type="url"; }
                div.field { label for="n-image" { "Image URL" } input #n-image name="imageUrl" type="url"; }
                div.actions { button.primary type="submit" { "Add panel" } }
            }
        }
    }
}

fn logo_form(logo: Option<&str>) -> Markup {
    html! {
        section.card aria-labelledby="logo-title" {
            h2 #logo-title { "Logo" }
            img #logo-preview.logo-preview src=(logo.unwrap_or("data:,")) alt="The channel's logo" hidden[logo.is_none()] width="128" height="128";
            form #logo-form {
                div.field {
                    label for="logo-file" { "Image (PNG, JPEG, GIF or WebP, at most 2 MiB)" }
                    input #logo-file name="file" type="file" accept="image/png,image/jpeg,image/gif,image/webp";
                }
                div.actions { button.primary type="submit" { "Upload logo" } }
            }
        }
    }
}

/// The dashboard.
#[utoipa::path(get, path = "/dashboard", tag = "pages", operation_id = "dashboard_page",
    responses(
        (status = 200, description = "The owner's dashboard (HTML)", content_type = "text/html"),
        (status = 303, description = "To /setup while no owner exists; to /login when not signed in"),
    ))]
pub async fn page(State(s): State<WebState>, headers: HeaderMap) -> Result<Response, PageError> {
    if !s.set_up().await? {
        return Ok(Redirect::to("/setup").into_response());
    }
    if s.signed_in(&headers).await?.is_none() {
        return Ok(Redirect::to("/login").into_response());
    }
    let (config, info, live) =
        tokio::try_join!(channel::config(&s.platform.db), s.fresh_info(), s.live())?;
    let logo = info.logo_url.as_deref();
    let main = html! {
        main #main {
            h1 { "Dashboard" }
            (status_region())
            div.dash-grid {
                (stream_card(config.rtmps_url.as_deref(), live.is_live))
                (analytics())
                (channel_form(&info))
                (profile_form(&info))
                (panels_editor())
                (logo_form(logo))
            }
            (data("dashboard-state", &json!({ "panels": info.panels })))
        }
    };
    let head = Head {
        title: "Dashboard",
        description: "Run the channel.",
        path: "/dashboard",
        script: Some("dashboard.js"),
        private: true,
    };
    let nav = html! {
        a.button href="/" { "View channel" }
        button #sign-out type="button" { "Sign out" }
    };
    let header = site_header(&info.title, logo, &nav);
    Ok(respond(layout(&s, logo, &head, &header, &main), "no-store"))
}
