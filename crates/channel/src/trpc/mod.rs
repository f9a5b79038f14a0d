//! tRPC over HTTP at `/api/trpc`: queries by GET with `?input=<JSON>`,
//! mutations by POST with a JSON body, batches (`?batch=1`, procedures
//! joined by commas, inputs keyed `"0"`, `"1"`, ...; a 207 when outcomes
//! differ), the success envelope `{"result":{"data":...}}` and tRPC's error
//! envelope with the procedure's path. With the superjson transformer
//! inputs and outputs are wrapped as `{"json": ...}`.
//!
//! Procedures are registered with their input and output types, which
//! also document them: every procedure is in `/openapi.json`.

mod call;
pub mod doc;
mod wire;

use std::any::TypeId;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use utoipa::ToSchema;

pub use call::{Ctx, route};

use crate::error::{Error, trpc};

/// How a procedure is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// GET, no side effects.
    Query,
    /// POST.
    Mutation,
}

/// Who may call a procedure. Any mutation must also come from the
/// channel's own origin (FORBIDDEN otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Public,
    /// The signed-in owner (UNAUTHORIZED otherwise).
    Owner,
}

type Handler = Arc<dyn Fn(Ctx, Value) -> BoxFuture<'static, Result<Value, Error>> + Send + Sync>;

/// One procedure: its name, kind, access, documentation and handler.
pub struct Procedure {
    pub name: &'static str,
    pub kind: Kind,
    pub access: Access,
    pub summary: &'static str,
    pub doc: doc::Shapes,
    handler: Handler,
}

impl Procedure {
    pub fn call(&self, ctx: Ctx, input: Value) -> BoxFuture<'static, Result<Value, Error>> {
        (self.handler)(ctx, input)
    }
}

/// The API's procedures.
#[derive(Default)]
pub struct Procedures {
    list: Vec<Procedure>,
}

/// The input is read into its type, naming the field at fault. An input
/// is an object (`null` or none: an empty one), unless the procedure takes
/// none, when anything is ignored.
fn read<I: DeserializeOwned>(input: Value, takes_input: bool) -> Result<I, Error> {
    let input = match input {
        Value::Object(_) => input,
        Value::Null => Value::Object(serde_json::Map::new()),
        _ if !takes_input => Value::Object(serde_json::Map::new()),
        _ => return Err(trpc("BAD_REQUEST", "input: must be an object")),
    };
    keel_platform::http::input::from_value(input).map_err(|e| match e {
        keel_platform::http::input::InputError::Field { path, problem } if !path.is_empty() => {
            trpc("BAD_REQUEST", format!("input.{path}: {problem}")).with("field", path)
        }
        keel_platform::http::input::InputError::Field { problem, .. } => {
            trpc("BAD_REQUEST", format!("input: {problem}"))
        }
        keel_platform::http::input::InputError::Body(p) => trpc("BAD_REQUEST", p.message()),
    })
}

impl Procedures {
    /// A procedure of `kind` taking input `I` ([`NoInput`]: none; see
    /// [`no_input`]).
    pub fn procedure<I, O, F, Fut>(
        mut self,
        kind: Kind,
        name: &'static str,
        access: Access,
        summary: &'static str,
        f: F,
    ) -> Self
    where
        I: DeserializeOwned + ToSchema + Send + 'static,
        O: Serialize + ToSchema + 'static,
        F: Fn(Ctx, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, Error>> + Send + 'static,
    {
        let f = Arc::new(f);
        let takes_input = TypeId::of::<I>() != TypeId::of::<NoInput>();
        let handler: Handler = Arc::new(move |ctx, input| {
            let f = f.clone();
            Box::pin(async move {
                let input: I = read(input, takes_input)?;
                let out = f(ctx, input).await?;
                Ok(serde_json::to_value(out)?)
            })
        });
        self.list.push(Procedure {
            name,
            kind,
            access,
            summary,
            doc: doc::Shapes::of::<I, O>(takes_input),
            handler,
        });
        self
    }

    pub fn get(&self, name: &str) -> Option<&Procedure> {
        self.list.iter().find(|p| p.name == name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Procedure> {
        self.list.iter()
    }
}

/// A resolver of a procedure without input, as [`Procedures::procedure`]
/// takes it.
pub fn no_input<O, Fut>(
    f: impl Fn(Ctx) -> Fut + Send + Sync + 'static,
) -> impl Fn(Ctx, NoInput) -> Fut + Send + Sync + 'static
where
    Fut: Future<Output = Result<O, Error>> + Send + 'static,
{
    move |ctx, _| f(ctx)
}

/// The input of a procedure that takes none (anything is ignored).
#[derive(Debug, serde::Deserialize, ToSchema)]
pub struct NoInput {}

/// `{"ok": true}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Ok {
    pub ok: bool,
}

impl Ok {
    pub const YES: Self = Self { ok: true };
}
