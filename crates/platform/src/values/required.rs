//! The fields a body's type requires, as its own OpenAPI schema says: a
//! service that checks presence before format (usage-alerts: `Missing
//! required field`) reads the list from the type, so it is written once,
//! where the document gets it too.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

type Known = RwLock<HashMap<TypeId, Arc<[String]>>>;

/// `T`'s required properties in the order its schema lists them (the
/// fields' order); empty when `T` is not an object. Built once per type.
pub fn required_fields<T: utoipa::PartialSchema + 'static>() -> Arc<[String]> {
    static KNOWN: OnceLock<Known> = OnceLock::new();
    let known = KNOWN.get_or_init(Known::default);
    let id = TypeId::of::<T>();
    if let Some(found) = known.read().ok().and_then(|k| k.get(&id).cloned()) {
        return found;
    }
    let fields: Arc<[String]> = match T::schema() {
        RefOr::T(Schema::Object(o)) => o.required.into(),
        _ => Arc::from([]),
    };
    if let Ok(mut k) = known.write() {
        k.insert(id, fields.clone());
    }
    fields
}
