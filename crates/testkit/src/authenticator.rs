//! A software passkey authenticator (a platform authenticator with a
//! resident P-256 key and user verification), answering the options keel
//! sends the way a browser's `navigator.credentials.create` / `.get` and
//! `PublicKeyCredential.toJSON()` would: `none` attestation, ES256
//! signatures over `authenticatorData || SHA-256(clientDataJSON)`.
//! Each answer can be bent (origin, relying party id, user verification,
//! counter) to test a refusal.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_cbor_2::Value as Cbor;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const UP: u8 = 0x01;
const UV: u8 = 0x04;
const AT: u8 = 0x40;

/// How the next answer is made: as a browser on `origin` would, unless bent.
#[derive(Clone, Debug)]
pub struct Answer {
    pub origin: String,
    /// The relying party id hashed into the authenticator data (default:
    /// the options').
    pub rp_id: Option<String>,
    /// The challenge signed (default: the options').
    pub challenge: Option<String>,
    /// Whether the user was verified.
    pub user_verified: bool,
    /// The page that framed the ceremony, when it ran in a frame of
    /// another site (`crossOrigin: true` and this `topOrigin`).
    pub framed_by: Option<String>,
}

impl Answer {
    pub fn on(origin: &str) -> Self {
        Self {
            origin: origin.to_owned(),
            rp_id: None,
            challenge: None,
            user_verified: true,
            framed_by: None,
        }
    }

    /// The same answer, made inside a frame of `top_origin`'s page.
    pub fn framed_by(self, top_origin: &str) -> Self {
        Self {
            framed_by: Some(top_origin.to_owned()),
            ..self
        }
    }
}

/// One passkey, held by this authenticator.
pub struct SoftPasskey {
    key: SigningKey,
    pub credential_id: Vec<u8>,
    /// The user handle the registration gave (returned at sign-in).
    pub user_handle: Vec<u8>,
    rp_id: String,
    /// The signature counter (0 = the authenticator keeps none).
    pub counter: u32,
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn unb64(s: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD
        .decode(s.trim_end_matches('='))
        .expect("base64url in the options")
}

fn client_data(kind: &str, challenge: &str, answer: &Answer) -> Vec<u8> {
    let mut data = json!({
        "type": kind,
        "challenge": challenge,
        "origin": answer.origin,
        "crossOrigin": answer.framed_by.is_some(),
    });
    if let Some(top) = &answer.framed_by {
        data["topOrigin"] = json!(top);
    }
    serde_json::to_vec(&data).expect("client data")
}

fn flags(answer: &Answer) -> u8 {
    if answer.user_verified { UP | UV } else { UP }
}

impl SoftPasskey {
    /// Answers registration options (`{"publicKey": {...}}`, as keel sends
    /// them) with a new passkey; the credential JSON to send back.
    pub fn create(options: &Value, answer: &Answer) -> (Self, Value) {
        let pk = &options["publicKey"];
        let mut secret = [0u8; 32];
        rand_fill(&mut secret);
        let mut credential_id = vec![0u8; 16];
        rand_fill(&mut credential_id);
        let passkey = Self {
            key: SigningKey::from_slice(&secret).expect("a P-256 key"),
            credential_id,
            user_handle: unb64(pk["user"]["id"].as_str().expect("user.id")),
            rp_id: pk["rp"]["id"].as_str().expect("rp.id").to_owned(),
            counter: 0,
        };
        let json = passkey.attest(options, answer);
        (passkey, json)
    }

    /// Answers registration options with this (existing) passkey.
    pub fn attest(&self, options: &Value, answer: &Answer) -> Value {
        let pk = &options["publicKey"];
        let challenge = answer
            .challenge
            .clone()
            .unwrap_or_else(|| pk["challenge"].as_str().expect("challenge").to_owned());
        let signed_rp = answer.rp_id.as_deref().unwrap_or(&self.rp_id);
        let mut auth_data = self.auth_data(signed_rp, flags(answer) | AT);
        auth_data.extend_from_slice(&[0u8; 16]); // AAGUID
        let len = u16::try_from(self.credential_id.len()).expect("short id");
        auth_data.extend_from_slice(&len.to_be_bytes());
        auth_data.extend_from_slice(&self.credential_id);
        auth_data.extend_from_slice(&self.cose_key());
        let attestation = Cbor::Map(BTreeMap::from([
            (Cbor::Text("fmt".into()), Cbor::Text("none".into())),
            (Cbor::Text("attStmt".into()), Cbor::Map(BTreeMap::new())),
            (Cbor::Text("authData".into()), Cbor::Bytes(auth_data)),
        ]));
        let attestation = serde_cbor_2::to_vec(&attestation).expect("CBOR");
        let data = client_data("webauthn.create", &challenge, answer);
        self.credential(
            json!({
                "attestationObject": b64(&attestation),
                "clientDataJSON": b64(&data),
                "transports": ["internal"],
            }),
            json!({"credProps": {"rk": true}}),
        )
    }

    /// Answers sign-in options with an assertion (counting the use).
    pub fn get(&mut self, options: &Value, answer: &Answer) -> Value {
        let pk = &options["publicKey"];
        let challenge = answer
            .challenge
            .clone()
            .unwrap_or_else(|| pk["challenge"].as_str().expect("challenge").to_owned());
        if self.counter > 0 {
            self.counter += 1;
        }
        let rp_id = answer.rp_id.clone().unwrap_or_else(|| self.rp_id.clone());
        self.assertion(&rp_id, &challenge, answer)
    }

    /// An assertion with the counter as it is now (no count): a clone's.
    pub fn assertion(&self, rp_id: &str, challenge: &str, answer: &Answer) -> Value {
        let auth_data = self.auth_data(rp_id, flags(answer));
        let data = client_data("webauthn.get", challenge, answer);
        let mut signed = auth_data.clone();
        signed.extend_from_slice(&Sha256::digest(&data));
        let signature: Signature = self.key.sign(&signed);
        self.credential(
            json!({
                "authenticatorData": b64(&auth_data),
                "clientDataJSON": b64(&data),
                "signature": b64(signature.to_der().as_bytes()),
                "userHandle": b64(&self.user_handle),
            }),
            json!({}),
        )
    }

    /// A `PublicKeyCredential` as `toJSON()` writes it.
    fn credential(&self, response: Value, extensions: Value) -> Value {
        let id = b64(&self.credential_id);
        json!({
            "id": id,
            "rawId": id,
            "type": "public-key",
            "response": response,
            "clientExtensionResults": extensions,
        })
    }

    fn auth_data(&self, rp_id: &str, flags: u8) -> Vec<u8> {
        let mut out = Sha256::digest(rp_id.as_bytes()).to_vec();
        out.push(flags);
        out.extend_from_slice(&self.counter.to_be_bytes());
        out
    }

    /// The public key as COSE (EC2, ES256, P-256).
    fn cose_key(&self) -> Vec<u8> {
        let point = self.key.verifying_key().to_sec1_point(false);
        let bytes = point.as_bytes();
        let key = Cbor::Map(BTreeMap::from([
            (Cbor::Integer(1), Cbor::Integer(2)),
            (Cbor::Integer(3), Cbor::Integer(-7)),
            (Cbor::Integer(-1), Cbor::Integer(1)),
            (Cbor::Integer(-2), Cbor::Bytes(bytes[1..33].to_vec())),
            (Cbor::Integer(-3), Cbor::Bytes(bytes[33..65].to_vec())),
        ]));
        serde_cbor_2::to_vec(&key).expect("CBOR")
    }
}

fn rand_fill(buf: &mut [u8]) {
    use rand::RngCore;
    rand::rng().fill_bytes(buf);
}
