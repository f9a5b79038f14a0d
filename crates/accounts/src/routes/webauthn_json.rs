//! The WebAuthn responses as the document describes them: what a browser's
//! `PublicKeyCredential.toJSON()` writes (binary fields in base64url without
//! padding). The server reads them with webauthn-rs's own types; these
//! exist only so generated clients and validators know the shape.
#![allow(dead_code)]

use utoipa::ToSchema;

/// A `PublicKeyCredential` as `toJSON()` writes it: `R` is what
/// `navigator.credentials.create` or `.get` answered.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Credential<R> {
    /// The credential id, base64url.
    #[schema(pattern = r"^[A-Za-z0-9_-]+$")]
    id: String,
    /// The same id, base64url.
    #[schema(pattern = r"^[A-Za-z0-9_-]+$")]
    raw_id: String,
    /// `public-key`.
    #[serde(rename = "type")]
    kind: String,
    response: R,
    /// The client's extension outputs (e.g. `credProps`).
    #[schema(value_type = Option<Object>)]
    client_extension_results: Option<()>,
}

#[derive(ToSchema)]
#[schema(as = PasskeyAttestationResponse)]
pub struct AttestationResponse {
    /// base64url.
    #[serde(rename = "clientDataJSON")]
    #[schema(pattern = r"^[A-Za-z0-9_-]+$")]
    client_data_json: String,
    /// base64url (CBOR).
    #[serde(rename = "attestationObject")]
    #[schema(pattern = r"^[A-Za-z0-9_-]+$")]
    attestation_object: String,
    /// How the authenticator is reached (`internal`, `hybrid`, `usb`, ...).
    transports: Option<Vec<String>>,
}

#[derive(ToSchema)]
#[schema(as = PasskeyAssertionResponse)]
#[serde(rename_all = "camelCase")]
pub struct AssertionResponse {
    /// base64url.
    #[schema(pattern = r"^[A-Za-z0-9_-]+$")]
    authenticator_data: String,
    /// base64url.
    #[serde(rename = "clientDataJSON")]
    #[schema(pattern = r"^[A-Za-z0-9_-]+$")]
    client_data_json: String,
    /// base64url (an ES256 signature is DER).
    #[schema(pattern = r"^[A-Za-z0-9_-]+$")]
    signature: String,
    /// The user handle a discoverable passkey returns, base64url.
    #[schema(pattern = r"^[A-Za-z0-9_-]*$")]
    user_handle: Option<String>,
}
