//! What every service's OpenAPI document shares.

use utoipa::Modify;
use utoipa::openapi::path::Operation;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, ResponseBuilder};

/// Documents the answers of authentication failures once: every operation
/// that declares a security requirement gets each `(status, description)`
/// response, with the service's error body (schema `ErrorBody`), unless it
/// documents that status itself.
pub struct AuthFailures(pub &'static [(&'static str, &'static str)]);

impl Modify for AuthFailures {
    fn modify(&self, doc: &mut OpenApi) {
        for item in doc.paths.paths.values_mut() {
            let ops = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for op in ops.into_iter().flatten() {
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
                .or_insert_with(|| {
                    ResponseBuilder::new()
                        .description(*description)
                        .content(
                            "application/json",
                            ContentBuilder::new()
                                .schema(Some(Ref::from_schema_name("ErrorBody")))
                                .build(),
                        )
                        .build()
                        .into()
                });
        }
    }
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
