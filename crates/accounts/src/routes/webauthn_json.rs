//! The WebAuthn responses as the document describes them: what a browser's
//! `PublicKeyCredential.toJSON()` writes (binary fields in base64url without
//! padding). The server reads them with webauthn-rs's own types; these
//! schemas exist only so generated clients and validators know the shape.

use utoipa::openapi::schema::{Object, ObjectBuilder, SchemaType, Type};

const BASE64URL: &str = r"^[A-Za-z0-9_-]+$";

fn text(description: &str, pattern: Option<&str>) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .pattern(pattern)
}

/// A `PublicKeyCredential` as `toJSON()` writes it, around `response`
/// (what `navigator.credentials.create` or `.get` answered).
fn credential(response: ObjectBuilder) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("id", text("The credential id, base64url.", Some(BASE64URL)))
        .required("id")
        .property("rawId", text("The same id, base64url.", Some(BASE64URL)))
        .required("rawId")
        .property("type", text("`public-key`.", None))
        .required("type")
        .property("response", response)
        .required("response")
        .property(
            "clientExtensionResults",
            ObjectBuilder::new()
                .schema_type(SchemaType::from_iter([Type::Object, Type::Null]))
                .description(Some("The client's extension outputs (e.g. `credProps`).")),
        )
        .build()
}

/// What `navigator.credentials.create` answered, as `toJSON()` writes it.
pub fn attestation() -> Object {
    credential(
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .property("clientDataJSON", text("base64url.", Some(BASE64URL)))
            .required("clientDataJSON")
            .property(
                "attestationObject",
                text("base64url (CBOR).", Some(BASE64URL)),
            )
            .required("attestationObject")
            .property(
                "transports",
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
                    .description(Some(
                        "How the authenticator is reached (`internal`, `hybrid`, `usb`, ...).",
                    )),
            ),
    )
}

/// What `navigator.credentials.get` answered, as `toJSON()` writes it.
pub fn assertion() -> Object {
    credential(
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .property("authenticatorData", text("base64url.", Some(BASE64URL)))
            .required("authenticatorData")
            .property("clientDataJSON", text("base64url.", Some(BASE64URL)))
            .required("clientDataJSON")
            .property(
                "signature",
                text("base64url (an ES256 signature is DER).", Some(BASE64URL)),
            )
            .required("signature")
            .property(
                "userHandle",
                ObjectBuilder::new()
                    .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
                    .description(Some(
                        "The user handle a discoverable passkey returns, base64url.",
                    ))
                    .pattern(Some(r"^[A-Za-z0-9_-]*$")),
            ),
    )
}
