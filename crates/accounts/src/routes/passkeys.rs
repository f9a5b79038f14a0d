//! `/account/passkeys`: a signed-in user's passkeys (adding one is a
//! WebAuthn registration ceremony: options, then the authenticator's
//! answer), and `/auth/passkey`: signing in with one.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use keel_platform::http::{Json, NoStore};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use webauthn_rs::prelude::{
    CreationChallengeResponse, PublicKeyCredential, RegisterPublicKeyCredential,
    RequestChallengeResponse,
};

use super::auth::{AuthResponse, tokens};
use super::limits;
use super::proof::ProofBody;
use crate::auth::Authed;
use crate::domain::fields::{self, PasskeyName};
use crate::domain::passkey_ceremonies::CeremonyId;
use crate::domain::passkey_sign_in;
use crate::domain::passkeys::{self, PasskeyError};
use crate::domain::sent::Sent;
use crate::domain::sessions::Client;
use crate::error::code::*;
use crate::error::{Error, ErrorBody};
use crate::id::PasskeyId;
use crate::input::{Input, JsonInput};
use crate::routes::failures::*;
use crate::state::AppState;
use crate::views::{CodeMessage, PasskeyView};

/// Options for `navigator.credentials.create`, and the ceremony they belong to.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationOptions {
    /// Send it back with the authenticator's answer (32 hex characters).
    ceremony_id: String,
    /// `{"publicKey": PublicKeyCredentialCreationOptions}` with binary
    /// fields (challenge, user.id, excludeCredentials[].id) in base64url:
    /// what `PublicKeyCredential.parseCreationOptionsFromJSON` reads.
    #[serde(flatten)]
    #[schema(value_type = Object)]
    options: CreationChallengeResponse,
}

/// Start adding a passkey: re-checks the person, answers the options.
#[utoipa::path(post, path = "/account/passkeys/registration", tag = "passkeys", security(("bearer" = [])),
    request_body(content((ProofBody = "application/x-www-form-urlencoded"), (ProofBody = "application/json"))),
    responses(
        (status = 200, body = RegistrationOptions),
        PasskeysOff,
        (status = 409, description = format!("{PASSKEY_LIMIT_REACHED}: the user holds 20 passkeys"), body = ErrorBody),
        ProofRefused,
    ))]
pub async fn start_passkey_registration(
    State(state): State<AppState>,
    me: Authed,
    client: Client,
    Input(body): Input<ProofBody>,
) -> Result<Json<RegistrationOptions>, Error> {
    let proof = body.into_proof(&state, &client, &me.user).await?;
    let (rp, ttl) = state.relying_party();
    let (ceremony_id, options) =
        passkeys::start_registration(state.keys(), rp, ttl, &me.user, proof).await?;
    Ok(Json(RegistrationOptions {
        ceremony_id,
        options,
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddPasskeyBody {
    /// From the options.
    ceremony_id: Sent<CeremonyId>,
    /// 1 to 64 characters (default `Passkey`).
    #[serde(default, deserialize_with = "crate::input::present_string")]
    #[schema(value_type = String, min_length = 1, max_length = 64, pattern = r"\S")]
    name: Option<String>,
    /// The `PublicKeyCredential` `navigator.credentials.create` answered, as
    /// its `toJSON()` writes it (binary fields in base64url).
    #[schema(schema_with = super::webauthn_json::attestation, required = true)]
    credential: Option<RegisterPublicKeyCredential>,
}

fn credential<T>(raw: Option<T>) -> Result<T, fields::Invalid> {
    raw.ok_or_else(|| fields::Invalid::required("credential"))
}

/// Finish adding a passkey: checks the authenticator's answer and stores it.
#[utoipa::path(post, path = "/account/passkeys", tag = "passkeys", security(("bearer" = [])),
    request_body(content((AddPasskeyBody = "application/json"))),
    responses(
        (status = 201, body = PasskeyView),
        (status = 400, description = format!("{VALIDATION_ERROR}, {INVALID_CEREMONY} (unknown, used, expired or another user's) or {PASSKEY_REJECTED} (wrong challenge, origin or relying party; no user verification; malformed)"), body = ErrorBody),
        PasskeysOff,
        (status = 409, description = format!("{PASSKEY_ALREADY_REGISTERED} or {PASSKEY_LIMIT_REACHED}"), body = ErrorBody),
    ))]
pub async fn add_passkey(
    State(state): State<AppState>,
    me: Authed,
    JsonInput(body): JsonInput<AddPasskeyBody>,
) -> Result<(StatusCode, Json<PasskeyView>), Error> {
    let ceremony = body.ceremony_id.parse("ceremonyId")?;
    let name = match body.name {
        Some(n) => fields::text::<64>("name", &n)?.into_string(),
        None => "Passkey".to_owned(),
    };
    let credential = credential(body.credential)?;
    let (rp, _) = state.relying_party();
    let key = passkeys::finish_registration(
        state.db(),
        rp,
        &me.user,
        ceremony.as_str(),
        name,
        &credential,
    )
    .await?;
    Ok((StatusCode::CREATED, Json((&key).into())))
}

/// The user's passkeys, oldest first.
#[utoipa::path(get, path = "/account/passkeys", tag = "passkeys", security(("bearer" = [])),
    responses((status = 200, body = Vec<PasskeyView>)))]
pub async fn list_passkeys(
    State(state): State<AppState>,
    me: Authed,
) -> Result<Json<Vec<PasskeyView>>, Error> {
    let keys = passkeys::list(state.db().read(), &me.user.id)
        .await
        .map_err(PasskeyError::from)?;
    Ok(Json(keys.iter().map(Into::into).collect()))
}

#[derive(Deserialize, ToSchema)]
pub struct RenamePasskeyBody {
    /// 1 to 64 characters.
    name: Sent<PasskeyName>,
}

/// Rename a passkey.
#[utoipa::path(patch, path = "/account/passkeys/{passkeyId}", tag = "passkeys", security(("bearer" = [])),
    params(("passkeyId" = String, Path, description = "24 hex characters", pattern = r"^[0-9a-fA-F]{24}$")),
    request_body(content((RenamePasskeyBody = "application/x-www-form-urlencoded"), (RenamePasskeyBody = "application/json"))),
    responses(
        (status = 200, body = PasskeyView),
        (status = 400, description = format!("{VALIDATION_ERROR} or {INVALID_ID}"), body = ErrorBody),
        (status = 404, description = "No such passkey of this user", body = ErrorBody),
    ))]
pub async fn rename_passkey(
    State(state): State<AppState>,
    me: Authed,
    Path(id): Path<String>,
    Input(body): Input<RenamePasskeyBody>,
) -> Result<Json<PasskeyView>, Error> {
    let id = PasskeyId::parse_as("passkeyId", &id)?;
    let name = body.name.parse("name")?;
    let key = passkeys::rename(state.db(), &me.user.id, &id, name.into_string()).await?;
    Ok(Json((&key).into()))
}

/// Remove a passkey (re-checks the person). The password stays, so this
/// never locks anyone out.
#[utoipa::path(delete, path = "/account/passkeys/{passkeyId}", tag = "passkeys", security(("bearer" = [])),
    params(("passkeyId" = String, Path, description = "24 hex characters", pattern = r"^[0-9a-fA-F]{24}$")),
    request_body(content((ProofBody = "application/x-www-form-urlencoded"), (ProofBody = "application/json"))),
    responses(
        (status = 200, description = "PASSKEY_DELETED", body = CodeMessage),
        (status = 404, description = "No such passkey of this user", body = ErrorBody),
        ProofRefused,
    ))]
pub async fn delete_passkey(
    State(state): State<AppState>,
    me: Authed,
    Path(id): Path<String>,
    client: Client,
    Input(body): Input<ProofBody>,
) -> Result<Json<CodeMessage>, Error> {
    let id = PasskeyId::parse_as("passkeyId", &id)?;
    let proof = body.into_proof(&state, &client, &me.user).await?;
    passkeys::delete(state.keys(), &me.user, &id, proof).await?;
    Ok(CodeMessage::new(
        "PASSKEY_DELETED",
        "The passkey was removed",
    ))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasskeyOptionsBody {
    /// Username or email, to allow only that user's passkeys; without it
    /// (or blank) any discoverable passkey may answer.
    #[serde(default, deserialize_with = "crate::input::present_string")]
    #[schema(value_type = String)]
    login: Option<String>,
}

/// Options for `navigator.credentials.get`, and the ceremony they belong to.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasskeySignInOptions {
    /// Send it back with the assertion (32 hex characters).
    ceremony_id: String,
    /// `{"publicKey": PublicKeyCredentialRequestOptions}` with binary fields
    /// in base64url: what `PublicKeyCredential.parseRequestOptionsFromJSON` reads.
    #[serde(flatten)]
    #[schema(value_type = Object)]
    options: RequestChallengeResponse,
}

/// Start a passkey sign-in (the body is optional: none is `{}`).
#[utoipa::path(post, path = "/auth/passkey/options", tag = "auth",
    request_body(content((PasskeyOptionsBody = "application/x-www-form-urlencoded"), (PasskeyOptionsBody = "application/json"))),
    responses(
        (status = 200, body = PasskeySignInOptions),
        Invalid,
        PasskeysOff,
        PasskeyLimit,
    ))]
pub async fn passkey_sign_in_options(
    State(state): State<AppState>,
    client: Client,
    Input(body): Input<PasskeyOptionsBody>,
) -> Result<Json<PasskeySignInOptions>, Error> {
    let knock = limits::knock(&state, limits::PASSKEY, client.ip, None).await?;
    // Options are half a sign-in: counted, its outcome told by the answer.
    drop(knock);
    let login = body.login.filter(|l| !l.trim().is_empty());
    let (rp, ttl) = state.relying_party();
    let (ceremony_id, options) =
        passkey_sign_in::start(state.db(), rp, ttl, login.as_deref()).await?;
    Ok(Json(PasskeySignInOptions {
        ceremony_id,
        options,
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasskeySignInBody {
    ceremony_id: Sent<CeremonyId>,
    /// The `PublicKeyCredential` `navigator.credentials.get` answered, as
    /// its `toJSON()` writes it.
    #[schema(schema_with = super::webauthn_json::assertion, required = true)]
    credential: Option<PublicKeyCredential>,
}

/// Sign in with a passkey; answers what `POST /auth/login` answers. A
/// passkey sign-in is user-verified and satisfies two-factor.
#[utoipa::path(post, path = "/auth/passkey", tag = "auth",
    request_body(content((PasskeySignInBody = "application/json"))),
    responses(
        (status = 200, description = "Signed in", body = AuthResponse),
        (status = 400, description = format!("{VALIDATION_ERROR} or {INVALID_CEREMONY} (unknown, used or expired)"), body = ErrorBody),
        (status = 401, description = format!("{INVALID_CREDENTIALS}: an unknown passkey, another user's, or an answer that does not prove it (challenge, origin, relying party, user verification, signature, a counter gone backwards)"), body = ErrorBody),
        Banned,
        PasskeysOff,
        PasskeyLimit,
    ))]
pub async fn passkey_sign_in(
    State(state): State<AppState>,
    client: Client,
    JsonInput(body): JsonInput<PasskeySignInBody>,
) -> Result<NoStore<Json<AuthResponse>>, Error> {
    let knock = limits::knock(&state, limits::PASSKEY, client.ip, None).await?;
    let ceremony = body.ceremony_id.parse("ceremonyId")?;
    let credential = credential(body.credential)?;
    let (rp, _) = state.relying_party();
    let issuer = state.issuer();
    let signed_in = passkey_sign_in::finish(
        state.db(),
        rp,
        &issuer,
        ceremony.as_str(),
        &credential,
        &client,
    )
    .await;
    match signed_in {
        Ok((user, pair)) => {
            knock.accepted();
            Ok(tokens(&user, pair))
        }
        Err(e) => {
            knock.refused();
            Err(e.into())
        }
    }
}
