//! What every service's OpenAPI document shares: the security schemes a
//! service declares, the answers every operation can give (authentication
//! failures, a dependency away), and the finishing touches that make a
//! document one a validator and a client generator accept (`finish`).

use utoipa::Modify;
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, Response, ResponseBuilder};

/// Documents the answers of authentication failures once: every operation
/// that declares a security requirement gets each `(status, description)`
/// response, with the service's error body (schema `ErrorBody`), unless it
/// documents that status itself.
pub struct AuthFailures(pub &'static [(&'static str, &'static str)]);

impl Modify for AuthFailures {
    fn modify(&self, doc: &mut OpenApi) {
        for item in doc.paths.paths.values_mut() {
            for (_, op) in operations(item) {
                self.add(op);
            }
        }
    }
}

impl AuthFailures {
    fn add(&self, op: &mut Operation) {
        if op.security.as_ref().is_none_or(Vec::is_empty) {
            return;
        }
        for (status, description) in self.0 {
            op.responses
                .responses
                .entry((*status).to_owned())
                .or_insert_with(|| described(*description));
        }
    }
}

/// An answer described, its body left to [`finish`] (the service's error
/// body for an error status).
pub fn described(description: impl Into<String>) -> RefOr<Response> {
    ResponseBuilder::new()
        .description(description)
        .build()
        .into()
}

/// Failure answers several routes share, documented once: a type that a
/// route's `responses(...)` lists by name beside its own answers.
///
/// ```ignore
/// keel_platform::failures! {
///     /// A goal id that is malformed or names none of this user's goals.
///     pub NoSuchGoal {
///         400 => "INVALID_ID: not a goal id",
///         404 => "No such goal of this user",
///     }
/// }
/// ```
#[macro_export]
macro_rules! failures {
    ($($(#[$meta:meta])* $vis:vis $name:ident { $($status:literal => $description:expr),+ $(,)? })+) => {
        $(
            $(#[$meta])*
            $vis enum $name {}

            impl $crate::utoipa::IntoResponses for $name {
                fn responses() -> ::std::collections::BTreeMap<
                    String,
                    $crate::utoipa::openapi::RefOr<$crate::utoipa::openapi::Response>,
                > {
                    [$((
                        stringify!($status).to_owned(),
                        $crate::http::openapi::described($description),
                    )),+]
                    .into_iter()
                    .collect()
                }
            }
        )+
    };
}

/// Declares an HTTP security scheme named `name`: a bearer JWT, or HTTP
/// Basic (`bearer_format` `None`).
pub struct HttpAuth {
    pub name: &'static str,
    pub scheme: utoipa::openapi::security::HttpAuthScheme,
    pub bearer_format: Option<&'static str>,
}

impl HttpAuth {
    /// `Authorization: Bearer <JWT>`.
    pub const fn bearer_jwt(name: &'static str) -> Self {
        Self {
            name,
            scheme: utoipa::openapi::security::HttpAuthScheme::Bearer,
            bearer_format: Some("JWT"),
        }
    }

    /// `Authorization: Basic ...`.
    pub const fn basic(name: &'static str) -> Self {
        Self {
            name,
            scheme: utoipa::openapi::security::HttpAuthScheme::Basic,
            bearer_format: None,
        }
    }
}

impl Modify for HttpAuth {
    fn modify(&self, doc: &mut OpenApi) {
        use utoipa::openapi::security::{HttpBuilder, SecurityScheme};
        let mut http = HttpBuilder::new().scheme(self.scheme.clone());
        if let Some(f) = self.bearer_format {
            http = http.bearer_format(f);
        }
        doc.components
            .get_or_insert_with(Default::default)
            .add_security_scheme(self.name, SecurityScheme::Http(http.build()));
    }
}

/// Where an API key travels.
#[derive(Debug, Clone, Copy)]
pub enum KeyIn {
    Header,
    Cookie,
}

/// Declares an API-key security scheme named `name`: the value of header
/// or cookie `key` (an App Check token, a session cookie, a nonce).
pub struct KeyAuth {
    pub name: &'static str,
    pub key_in: KeyIn,
    pub key: &'static str,
    pub description: &'static str,
}

impl Modify for KeyAuth {
    fn modify(&self, doc: &mut OpenApi) {
        let value = ApiKeyValue::with_description(self.key, self.description);
        let key = match self.key_in {
            KeyIn::Header => ApiKey::Header(value),
            KeyIn::Cookie => ApiKey::Cookie(value),
        };
        doc.components
            .get_or_insert_with(Default::default)
            .add_security_scheme(self.name, SecurityScheme::ApiKey(key));
    }
}

/// The name every service gives its error body's schema.
pub const ERROR_SCHEMA: &str = "ErrorBody";

fn reason(status: &str) -> &'static str {
    status
        .parse::<u16>()
        .ok()
        .and_then(|s| http::StatusCode::from_u16(s).ok())
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Answer")
}

fn error_response(description: &str, error_schema: bool) -> RefOr<Response> {
    let mut r = ResponseBuilder::new().description(description);
    if error_schema {
        r = r.content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name(ERROR_SCHEMA)))
                .build(),
        );
    }
    r.build().into()
}

/// Completes a service's document so OpenAPI 3.1 validators accept it and
/// generated clients know every answer:
///
/// - the licence, and a server (relative: the document's own origin);
/// - every response has a description (its status' reason phrase when the
///   route gave none), and every error response without a body documents
///   the service's error body (`ErrorBody`, when the service declares it);
/// - every operation documents what the platform itself may answer: 500,
///   503 (a dependency away), and for a request body 413 and 415;
/// - an operation that declares no security says so explicitly (`[]`);
/// - a described field of a self-documenting type is one schema
///   ([`fold`]).
pub fn finish(doc: &mut OpenApi) {
    doc.info.license = Some(
        utoipa::openapi::LicenseBuilder::new()
            .name("MIT OR Apache-2.0")
            .identifier(Some("MIT OR Apache-2.0"))
            .build(),
    );
    if doc.servers.as_ref().is_none_or(Vec::is_empty) {
        doc.servers = Some(vec![
            utoipa::openapi::ServerBuilder::new()
                .url("/")
                .description(Some("This server"))
                .build(),
        ]);
    }
    let error_schema = doc
        .components
        .as_ref()
        .is_some_and(|c| c.schemas.contains_key(ERROR_SCHEMA));
    // axum's catch-all `{*rest}` is `{rest}` in a path template.
    let paths = std::mem::take(&mut doc.paths.paths);
    doc.paths.paths = paths
        .into_iter()
        .map(|(path, item)| (path.replace("{*", "{"), item))
        .collect();
    fold::described_fields(doc);
    let mut ids = std::collections::HashSet::new();
    for item in doc.paths.paths.values_mut() {
        for (method, op) in operations(item) {
            finish_operation(op, error_schema);
            // One handler on several methods: one operation id each.
            if let Some(id) = &mut op.operation_id
                && !ids.insert(id.clone())
            {
                let base = format!("{id}_{method}");
                let mut unique = base.clone();
                let mut n = 2;
                while !ids.insert(unique.clone()) {
                    unique = format!("{base}_{n}");
                    n += 1;
                }
                *id = unique;
            }
        }
    }
}

/// A path's operations with their methods.
fn operations(item: &mut PathItem) -> impl Iterator<Item = (&'static str, &mut Operation)> {
    [
        ("get", &mut item.get),
        ("put", &mut item.put),
        ("post", &mut item.post),
        ("delete", &mut item.delete),
        ("patch", &mut item.patch),
        ("options", &mut item.options),
        ("head", &mut item.head),
    ]
    .into_iter()
    .filter_map(|(method, op)| Some((method, op.as_mut()?)))
}

fn finish_operation(op: &mut Operation, error_schema: bool) {
    let mut platform = vec![
        (
            "500",
            "INTERNAL: an unexpected failure (logged, never detailed)",
        ),
        (
            "503",
            "A dependency (the database, Redis, an identity provider's keys) is unavailable; Retry-After",
        ),
    ];
    if op.request_body.is_some() {
        platform.push(("413", "The request body is too large"));
        platform.push(("415", "The request body's content type is not accepted"));
    }
    for (status, description) in platform {
        op.responses
            .responses
            .entry(status.to_owned())
            .or_insert_with(|| error_response(description, error_schema));
    }
    for (status, response) in &mut op.responses.responses {
        let RefOr::T(r) = response else { continue };
        if r.description.is_empty() {
            r.description = reason(status).to_owned();
        }
        let is_error = status.starts_with('4') || status.starts_with('5');
        if is_error && error_schema && r.content.is_empty() && status != "405" {
            *response = error_response(&r.description.clone(), true);
        }
    }
    if op.security.is_none() {
        op.security = Some(Vec::new());
    }
}

/// Replaces every `pattern` written `\S` in a route's attributes (which
/// take only literals) by [`super::patterns::NOT_BLANK`], which means the
/// same to every regular-expression engine.
pub fn spell_out_patterns(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key == "pattern" && value.as_str() == Some(r"\S") {
                    *value = serde_json::Value::from(super::patterns::NOT_BLANK);
                } else {
                    spell_out_patterns(value);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(spell_out_patterns),
        _ => {}
    }
}

/// A whole number of at least 0, of any size: a query parameter keel reads
/// as digits and caps (no `format`, since no size is refused).
pub fn whole_number() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(0))
        .build()
}

/// A whole number from 0 to `max`; anything else is refused.
pub fn whole_number_to(max: u64) -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(0))
        .maximum(Some(max))
        .build()
}

#[path = "openapi_fold.rs"]
mod fold;
