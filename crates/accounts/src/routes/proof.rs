//! The body that re-checks the person before a sensitive change: deleting
//! the account, adding or removing a passkey.

use serde::Deserialize;
use utoipa::ToSchema;

use super::limits;
use crate::domain::proof::Proof;
use crate::domain::sent::{Given, Sent};
use crate::domain::sessions::Client;
use crate::entity::user;
use crate::error::Error;
use crate::input::lenient_string;
use crate::state::AppState;

#[derive(Deserialize, ToSchema)]
pub struct ProofBody {
    /// The current password.
    password: Sent<Given>,
    /// When two-factor is on: a code from the authenticator app, or an unused backup code.
    #[serde(default, deserialize_with = "lenient_string")]
    code: Option<String>,
}

impl ProofBody {
    /// The proof, let in by the guard's proof door (counted for `client`'s
    /// address and for `u`), or the missing password named.
    pub async fn into_proof<'a>(
        self,
        state: &'a AppState,
        client: &Client,
        u: &user::Model,
    ) -> Result<Proof<'a>, Error> {
        let password = self.password.parse("password")?.into_string();
        let knock = limits::knock(state, limits::PROOF, client.ip, Some(&u.id)).await?;
        Ok(Proof {
            password,
            code: self.code,
            knock,
        })
    }
}
