//! The start-up servers: from the moment the listeners are bound until the
//! services are built, each answers `/healthz` 200, `/readyz` 503
//! `starting`, and holds every other request for its service (see
//! `keel_platform::http::starting`).

use keel_platform::http::{self, SharedListener};
use keel_platform::service::HttpService;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// The start-up servers on the services' listeners, and where each hands
/// its held requests to its service.
pub struct Early {
    stop: CancellationToken,
    servers: JoinSet<()>,
    handovers: Vec<http::Handover>,
}

impl Early {
    pub fn serve(
        services: &[&'static HttpService],
        listeners: &[SharedListener],
        startup: &http::Startup,
        grace: std::time::Duration,
        hold: std::time::Duration,
    ) -> Self {
        let stop = CancellationToken::new();
        let mut servers = JoinSet::new();
        let mut handovers = Vec::with_capacity(services.len());
        for (service, listener) in services.iter().zip(listeners) {
            let (handover, takeover) = http::takeover();
            handovers.push(handover);
            let (router, listener, token) = (
                startup.router(service.render, takeover, hold),
                listener.clone(),
                stop.clone(),
            );
            servers.spawn(async move {
                if let Err(e) = http::serve(listener, router, token, grace).await {
                    tracing::warn!(error = %e, "the start-up listener stopped");
                }
            });
        }
        Self {
            stop,
            servers,
            handovers,
        }
    }

    /// Hands each service its router (the requests held meanwhile are
    /// answered by it), then stops; the requests under way finish first.
    pub async fn stop(mut self, routers: &[axum::Router]) {
        for (handover, router) in self.handovers.iter().zip(routers) {
            handover.ready(router.clone());
        }
        self.stop.cancel();
        while self.servers.join_next().await.is_some() {}
    }
}
