//! The body that re-checks the person before a sensitive change: deleting
//! the account, adding or removing a passkey.

use serde::Deserialize;
use utoipa::ToSchema;

use crate::domain::fields::{Invalid, required};
use crate::domain::proof::Proof;
use crate::input::lenient_string;

#[derive(Deserialize, ToSchema)]
pub struct ProofBody {
    /// The current password.
    #[schema(value_type = String, required = true, min_length = 1)]
    password: Option<String>,
    /// When two-factor is on: a code from the authenticator app, or an unused backup code.
    #[serde(default, deserialize_with = "lenient_string")]
    code: Option<String>,
}

impl ProofBody {
    /// The proof, or the missing password named.
    pub fn into_proof(self) -> Result<Proof, Invalid> {
        Ok(Proof {
            password: required(self.password, "password")?,
            code: self.code,
        })
    }
}
