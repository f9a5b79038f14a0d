//! tRPC over HTTP at `/api/trpc`: queries by GET with `?input=<JSON>`,
//! mutations by POST with a JSON body, batches (`?batch=1`, procedures
//! joined by commas, inputs keyed `"0"`, `"1"`, ...; a 207 when outcomes
//! differ), the success envelope `{"result":{"data":...}}` and tRPC's error
//! envelope with the procedure's path. With the superjson transformer
//! inputs and outputs are wrapped as `{"json": ...}`.
//!
//! Procedures are registered with their input and output types, which
//! also document them: every procedure is in `/openapi.json`.
//!
//! This module is a mechanism: it knows procedures, a per-request context
//! the routes supply ([`Context`]) and its [`Settings`], and nothing of the
//! service it serves (it imports nothing from its crate but itself).

mod call;
pub mod doc;
pub mod error;
mod wire;

use std::any::TypeId;
use std::future::Future;
use std::sync::{Arc, Mutex};

use axum::http::HeaderValue;
use futures::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use utoipa::ToSchema;

pub use call::route;
pub use error::{Error, TrpcCode};

/// How a procedure is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// GET, no side effects.
    Query,
    /// POST.
    Mutation,
}

/// Who may call a procedure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Public,
    /// A signed-in caller ([`Context::authorize`] says who that is).
    SignedIn,
}

/// What a request's procedures run with, built by the routes from the
/// request (an axum extractor); cloned for each call of a batch.
pub trait Context: Clone + Send + Sync + 'static {
    /// Refuses a caller who may not call a procedure of `access`
    /// (UNAUTHORIZED, in the service's words).
    fn authorize(&self, access: Access) -> Result<(), Error>;

    /// Refuses a mutation this request may not make (FORBIDDEN: a change
    /// from another site).
    fn may_mutate(&self) -> Result<(), Error>;

    /// Where procedures put the cookies the answer sets.
    fn cookies(&self) -> &Cookies;
}

/// The `Set-Cookie` values of an answer, added by its procedures.
#[derive(Clone, Default)]
pub struct Cookies(Arc<Mutex<Vec<HeaderValue>>>);

impl Cookies {
    /// Adds a `Set-Cookie` to the answer.
    pub fn set(&self, value: HeaderValue) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(value);
    }

    /// The values added so far, taken.
    fn take(&self) -> Vec<HeaderValue> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// How inputs and outputs are encoded beyond JSON (the client's
/// `transformer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transformer {
    /// Plain JSON.
    #[default]
    None,
    /// superjson with plain JSON values: `{"json": <value>}`.
    Superjson,
}

impl Transformer {
    /// A value as the client receives it.
    pub fn encode(self, data: Value) -> Value {
        match self {
            Self::None => data,
            Self::Superjson => json!({ "json": data }),
        }
    }

    /// An input as the client sent it.
    pub fn decode(self, input: Value) -> Value {
        match (self, input) {
            (Self::Superjson, Value::Object(mut m)) => m.remove("json").unwrap_or(Value::Null),
            (_, other) => other,
        }
    }

    /// One line of a JSONL answer.
    fn encode_line(self, line: &str) -> String {
        match self {
            Self::None => line.to_owned(),
            Self::Superjson => format!("{{\"json\":{line}}}"),
        }
    }
}

/// The engine's settings.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The most calls a batch may hold (`maxBatchSize`).
    pub max_batch: usize,
    pub transformer: Transformer,
}

type Handler<C> = Arc<dyn Fn(C, Value) -> BoxFuture<'static, Result<Value, Error>> + Send + Sync>;

/// One procedure: its name, kind, access, documentation and handler.
pub struct Procedure<C> {
    pub name: &'static str,
    pub kind: Kind,
    pub access: Access,
    pub summary: &'static str,
    pub doc: doc::Shapes,
    handler: Handler<C>,
}

impl<C> Procedure<C> {
    pub fn call(&self, ctx: C, input: Value) -> BoxFuture<'static, Result<Value, Error>> {
        (self.handler)(ctx, input)
    }
}

/// The API's procedures, run with context `C`.
pub struct Procedures<C> {
    list: Vec<Procedure<C>>,
}

impl<C> Default for Procedures<C> {
    fn default() -> Self {
        Self { list: Vec::new() }
    }
}

/// The input is read into its type, naming the field at fault. An input
/// is an object (`null` or none: an empty one), unless the procedure takes
/// none, when anything is ignored.
fn read<I: DeserializeOwned>(input: Value, takes_input: bool) -> Result<I, Error> {
    let input = match input {
        Value::Object(_) => input,
        Value::Null => Value::Object(serde_json::Map::new()),
        _ if !takes_input => Value::Object(serde_json::Map::new()),
        _ => return Err(error::not_an_object()),
    };
    keel_platform::http::input::from_value(input).map_err(error::bad_input)
}

impl<C: Send + 'static> Procedures<C> {
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
        F: Fn(C, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, Error>> + Send + 'static,
    {
        let f = Arc::new(f);
        let takes_input = TypeId::of::<I>() != TypeId::of::<NoInput>();
        let handler: Handler<C> = Arc::new(move |ctx, input| {
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

    pub fn get(&self, name: &str) -> Option<&Procedure<C>> {
        self.list.iter().find(|p| p.name == name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Procedure<C>> {
        self.list.iter()
    }
}

/// A resolver of a procedure without input, as [`Procedures::procedure`]
/// takes it.
pub fn no_input<C, O, Fut>(
    f: impl Fn(C) -> Fut + Send + Sync + 'static,
) -> impl Fn(C, NoInput) -> Fut + Send + Sync + 'static
where
    Fut: Future<Output = Result<O, Error>> + Send + 'static,
{
    move |ctx, _| f(ctx)
}

/// The input of a procedure that takes none (anything is ignored).
#[derive(Debug, serde::Deserialize, ToSchema)]
pub struct NoInput {}

/// Keeps this module free of its crate, so that it can be lifted into a
/// crate of its own as it is.
#[cfg(test)]
mod tests {
    #[test]
    fn the_engine_imports_nothing_from_its_crate() {
        let files = [
            include_str!("mod.rs"),
            include_str!("call.rs"),
            include_str!("doc.rs"),
            include_str!("error.rs"),
            include_str!("wire.rs"),
        ];
        let needle = ["crate", "::"].concat();
        for file in files {
            assert!(!file.contains(&needle), "trpc/ refers to its crate");
        }
    }
}
