//! `GET /`: the channel page, offline or live as the server sees it before
//! any script runs; the player and the chat load after first paint.

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use serde_json::json;

use super::{Head, data, layout, respond, site_header};
use crate::domain::channel::ChannelInfo;
use crate::domain::live::LiveStatus;
use crate::error::PageError;
use crate::web::WebState;

fn viewers(n: i64) -> String {
    format!("{n} {}", if n == 1 { "viewer" } else { "viewers" })
}

fn stage(info: &ChannelInfo, live: &LiveStatus) -> Markup {
    let on = live.is_live;
    html! {
        section.stage aria-label="Stream" {
            div {
                div.player #player {
                    div.offline-card #offline hidden[on] {
                        p { span.badge { "Offline" } }
                        p.offline-title { (info.title) " is offline" }
                        p { "The stream starts right here as soon as it goes live — no need to reload." }
                    }
                    div.live-view #live hidden[!on] {
                        video #video controls playsinline muted autoplay aria-label="Live video" {}
                        p.video-note #video-note role="status" { "Connecting to the stream…" }
                    }
                }
                div.live-meta {
                    span.badge.live { "Live" }
                    span #viewer-count aria-live="polite" hidden[!on] {
                        @if on { (viewers(live.viewer_count)) }
                    }
                }
            }
            aside.chat.card #chat aria-labelledby="chat-title" {
                h2 #chat-title { "Chat" }
                p.chat-status role="status" { "Chat is loading…" }
                ol.messages aria-label="Chat messages" {}
            }
        }
    }
}

fn about(info: &ChannelInfo) -> Markup {
    let p = &info.profile;
    let picture = p.avatar_url.as_deref().or(info.logo_url.as_deref());
    html! {
        section.about.card aria-labelledby="about-title" {
            @if let Some(src) = picture {
                img.avatar src=(src) alt="" width="96" height="96";
            }
            div {
                h2 #about-title { "About " (if p.display_name.is_empty() { &info.title } else { &p.display_name }) }
                @if let Some(place) = &p.location { p.muted { (place) } }
                @if !info.description.is_empty() { p.description { (info.description) } }
                @if !p.bio.is_empty() { p.description { (p.bio) } }
                @if !info.social_links.is_empty() {
                    ul.social aria-label="Links" {
                        @for l in &info.social_links {
                            li { a href=(l.url.as_str()) rel="noopener nofollow" { (l.label.as_str()) } }
                        }
                    }
                }
            }
        }
    }
}

fn panels(info: &ChannelInfo) -> Markup {
    html! {
        @if !info.panels.is_empty() {
            h2.visually-hidden { "Panels" }
            ul.panels {
                @for p in &info.panels {
                    li.card {
                        @if let Some(img) = &p.image_url {
                            @if let Some(link) = &p.link_url {
                                a href=(link) rel="noopener nofollow" { img src=(img) alt=(p.title) loading="lazy"; }
                            } @else {
                                img src=(img) alt="" loading="lazy";
                            }
                        }
                        h3 { (p.title) }
                        @if !p.body.is_empty() { p.body { (p.body) } }
                        @if let (Some(link), None) = (&p.link_url, &p.image_url) {
                            a href=(link) rel="noopener nofollow" { "Open " (p.title) }
                        }
                    }
                }
            }
        }
    }
}

/// The channel page.
#[utoipa::path(get, path = "/", tag = "pages", operation_id = "channel_page",
    responses(
        (status = 200, description = "The channel page (HTML): offline or live, with the channel's title, description, profile, panels and link-preview tags", content_type = "text/html"),
        (status = 303, description = "To /setup while no owner exists"),
    ))]
pub async fn page(State(s): State<WebState>) -> Result<Response, PageError> {
    if !s.set_up().await? {
        return Ok(Redirect::to("/setup").into_response());
    }
    let (info, live) = tokio::try_join!(s.info(), s.live())?;
    let description = if info.description.is_empty() {
        format!("Watch {} live.", info.title)
    } else {
        info.description.clone()
    };
    let state = json!({
        "isLive": live.is_live,
        "liveStartedAt": live.live_started_at,
        "viewerCount": live.viewer_count,
        "streamUrl": s.cfg.stream.url,
    });
    let title = if live.is_live {
        format!("🔴 {} (live)", info.title)
    } else {
        info.title.clone()
    };
    let main = html! {
        main #main.channel data-channel data-live=(live.is_live) {
            h1.channel-title { (info.title) }
            (stage(&info, &live))
            (about(&info))
            (panels(&info))
            (data("channel-state", &state))
        }
        footer.site-footer { a href="/login" { "Channel owner? Sign in" } }
    };
    let head = Head {
        title: &title,
        description: &description,
        path: "/",
        script: Some("channel.js"),
        private: false,
    };
    let logo = info.logo_url.as_deref();
    let header = site_header(&info.title, logo, &html! {});
    Ok(respond(layout(&s, logo, &head, &header, &main), "no-cache"))
}
