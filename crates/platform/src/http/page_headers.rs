//! The headers every page keel serves carries (channel-web's pages, svc's
//! console, each service's `/docs`): its Content-Security-Policy, no
//! framing, no sniffing, a referrer policy and a permissions policy. One
//! set, made once per front end, added to each answer that does not set a
//! header itself.

use axum::extract::{Request, State};
use axum::http::header::{
    CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

/// A front end's page headers: its policy and referrer rule (the rest is
/// the same for every page). Cheap to make and to clone: a policy written
/// in the code is never copied, so a handler may make one per answer.
#[derive(Clone, Debug)]
pub struct PageHeaders {
    policy: HeaderValue,
    referrer: Referrer,
}

/// Where a page's links may send the visitor's address as `Referer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Referrer {
    /// Never (a console whose addresses name what an admin looked at).
    None,
    /// The origin only, to other sites (public pages).
    OriginElsewhere,
}

const PERMISSIONS_POLICY: HeaderName = HeaderName::from_static("permissions-policy");

impl PageHeaders {
    /// The headers with `policy` as the Content-Security-Policy (it must
    /// forbid framing itself too: `frame-ancestors 'none'`).
    pub fn new(
        policy: &str,
        referrer: Referrer,
    ) -> Result<Self, axum::http::header::InvalidHeaderValue> {
        Ok(Self {
            policy: HeaderValue::from_str(policy)?,
            referrer,
        })
    }

    /// The same for a policy written in the code.
    pub const fn fixed(policy: &'static str, referrer: Referrer) -> Self {
        Self {
            policy: HeaderValue::from_static(policy),
            referrer,
        }
    }

    /// Adds the headers `resp` does not set itself.
    pub fn apply(&self, mut resp: Response) -> Response {
        let referrer = match self.referrer {
            Referrer::None => "no-referrer",
            Referrer::OriginElsewhere => "strict-origin-when-cross-origin",
        };
        let h = resp.headers_mut();
        let all = [
            (CONTENT_SECURITY_POLICY, self.policy.clone()),
            (X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            (REFERRER_POLICY, HeaderValue::from_static(referrer)),
            (
                PERMISSIONS_POLICY,
                HeaderValue::from_static("camera=(), microphone=(), geolocation=()"),
            ),
        ];
        for (name, value) in all {
            if !h.contains_key(&name) {
                h.insert(name, value);
            }
        }
        resp
    }

    /// The same, as a layer of a front end's routes.
    pub async fn layer(State(headers): State<Self>, req: Request, next: Next) -> Response {
        headers.apply(next.run(req).await)
    }
}
