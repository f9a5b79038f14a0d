//! channel: the live channel web app (channel-web) and its API (channel-api).
//! See docs/channel.md.

pub mod auth;
pub mod cli;
pub mod config;
pub mod domain;
pub mod entity;
pub mod error;
pub mod getstream;
pub mod input;
pub mod jobs;
mod routes;
mod schema;
pub mod state;
pub mod trpc;
pub mod web;

use std::sync::Arc;

use keel_platform::StartError;
use keel_platform::http::ServiceApp;
use keel_platform::service::{Build, Command, HttpService, Listener, builder};
use keel_platform::tasks::Tasks;

pub use config::Config;
pub use schema::MIGRATIONS;

use crate::domain::live::Live;
use crate::domain::setup_code::Issued;
use crate::getstream::GetStream;
use crate::state::{AppState, Inner};

// The names of the variables read here.
const CHANNEL_API_ADDR: &str = "KEEL_CHANNEL_API_ADDR";
const CHANNEL_WEB_ADDR: &str = "KEEL_CHANNEL_WEB_ADDR";

pub const WEB: &str = "channel-web";
pub const API: &str = "channel-api";

/// channel-web, as the process sees it.
pub static WEB_SERVICE: HttpService = HttpService {
    name: WEB,
    listener: Listener {
        var: CHANNEL_WEB_ADDR,
        default: "127.0.0.1:8083",
    },
    migrations: &MIGRATIONS,
    configure: |src| Ok(builder(Config::from_source(src)?, web_app)),
    render: error::render_web,
    doors: &[],
};

/// channel-api, as the process sees it.
pub static API_SERVICE: HttpService = HttpService {
    name: API,
    listener: Listener {
        var: CHANNEL_API_ADDR,
        default: "127.0.0.1:8084",
    },
    migrations: &MIGRATIONS,
    configure: |src| Ok(builder(Config::from_source(src)?, api_app)),
    render: error::render_api,
    doors: routes::DOORS,
};

/// `keel channel ...`.
pub static COMMAND: Command = Command {
    command: cli::command,
    run: |src, matches| Box::pin(cli::run(src, matches)),
};

/// Builds channel-web.
fn web_app(b: &mut Build<'_>, cfg: Config) -> Result<ServiceApp, StartError> {
    web::assets::complete(&web::ENTRIES).map_err(StartError::other)?;
    let platform = b.platform;
    let api = api_base(&cfg, b);
    let limit = platform.config.http.body_limit.max(routes::LOGO_BODY_LIMIT);
    let proxy = web::Proxy::new(
        &api,
        cfg.web.proxy_timeout,
        limit,
        platform.config.http.trusted_proxies.clone(),
    )
    .map_err(StartError::other)?;
    tracing::info!(api = proxy.base(), "channel-web forwards /api/* there");
    let state = std::sync::Arc::new(web::WebInner::new(platform.clone(), Arc::new(cfg), proxy));
    Ok(ServiceApp {
        name: WEB,
        base_path: String::new(),
        routes: web::router(state).map_err(StartError::other)?,
        render: error::render_web,
    })
}

/// Where channel-web finds channel-api: `KEEL_CHANNEL_API_URL`; else the
/// channel-api this process serves; else `KEEL_CHANNEL_API_ADDR`.
fn api_base(cfg: &Config, b: &Build<'_>) -> String {
    if let Some(u) = &cfg.api_url {
        return u.as_str().trim_end_matches('/').to_owned();
    }
    match b.addr_of(API) {
        Some(mut addr) => {
            if addr.ip().is_unspecified() {
                addr.set_ip(if addr.is_ipv4() {
                    std::net::Ipv4Addr::LOCALHOST.into()
                } else {
                    std::net::Ipv6Addr::LOCALHOST.into()
                });
            }
            format!("http://{addr}")
        }
        None => format!("http://{}", cfg.web.api_addr),
    }
}

/// Builds channel-api.
fn api_app(b: &mut Build<'_>, cfg: Config) -> Result<ServiceApp, StartError> {
    let platform = b.platform;
    let cfg = Arc::new(cfg);
    let stream = GetStream::new(platform.http.clone(), cfg.stream.clone());
    let live = Arc::new(Live::new(platform.db.clone()));
    jobs::register(
        b.jobs,
        b.tasks,
        &jobs::Deps {
            db: platform.db.clone(),
            http: platform.http.clone(),
            stream: stream.clone(),
            cfg: cfg.clone(),
            live: live.clone(),
        },
    );
    announce_setup_code(platform.db.clone(), cfg.clone(), b.tasks);
    let state = AppState::new(Inner {
        platform: platform.clone(),
        info: domain::snapshot::Snapshot::new(web::INFO_MAX_AGE),
        cfg,
        stream,
        live,
        playlist: domain::playlist::Playlist::default(),
        trusted: platform.config.http.trusted_proxies.clone().and([
            std::net::IpAddr::from(std::net::Ipv4Addr::LOCALHOST),
            std::net::IpAddr::from(std::net::Ipv6Addr::LOCALHOST),
        ]),
    });
    Ok(ServiceApp {
        name: API,
        base_path: String::new(),
        routes: routes::router(state),
        render: error::render_api,
    })
}

/// While no owner exists, tells the operator the set-up code (in the log,
/// as Jupyter prints its token); see `domain::setup_code`.
fn announce_setup_code(db: keel_platform::db::Db, cfg: Arc<Config>, tasks: &Tasks) {
    tasks.spawn("channel set-up code", async move {
        let setup = format!("{}/setup", cfg.public_url.as_str().trim_end_matches('/'));
        match domain::setup_code::issue(&db, cfg.setup_code.as_ref()).await {
            Ok(Issued::NotNeeded) => {}
            Ok(Issued::Configured) => tracing::warn!(
                "the channel has no owner yet: open {setup} and enter the set-up code \
                 KEEL_CHANNEL_SETUP_CODE holds (or run `keel channel owner set`)"
            ),
            Ok(Issued::Made(code)) => tracing::warn!(
                "the channel has no owner yet: open {setup}?code={code} \
                 (set-up code {code}), or run `keel channel owner set`"
            ),
            Err(e) => tracing::warn!(
                error = %e,
                "the channel has no owner and no set-up code could be made: run `keel channel owner set`"
            ),
        }
    });
}
