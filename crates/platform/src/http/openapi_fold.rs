//! utoipa documents a field whose type documents itself inline (a
//! [`super::values::Text`]) and that carries a doc comment as
//! `allOf: [<the type's schema>, {description, type: object}]`: a value
//! no string satisfies, so a document checker cannot make a body. This
//! folds such a pair back into the type's schema with the description.

use utoipa::openapi::schema::{ArrayItems, Schema};
use utoipa::openapi::{OpenApi, RefOr};

/// Folds every described inline schema of the document's components.
pub fn described_fields(doc: &mut OpenApi) {
    if let Some(components) = doc.components.as_mut() {
        components.schemas.values_mut().for_each(fold);
    }
}

fn fold(schema: &mut RefOr<Schema>) {
    if let Some(merged) = folded(schema) {
        *schema = merged;
    }
    let RefOr::T(s) = schema else { return };
    match s {
        Schema::Object(o) => o.properties.values_mut().for_each(fold),
        Schema::Array(a) => {
            if let ArrayItems::RefOrSchema(items) = &mut a.items {
                fold(items);
            }
        }
        Schema::AllOf(all) => all.items.iter_mut().for_each(fold),
        Schema::OneOf(one) => one.items.iter_mut().for_each(fold),
        Schema::AnyOf(any) => any.items.iter_mut().for_each(fold),
        _ => {}
    }
}

/// `allOf: [T, {description only}]` as `T` with the description.
fn folded(schema: &RefOr<Schema>) -> Option<RefOr<Schema>> {
    let RefOr::T(Schema::AllOf(all)) = schema else {
        return None;
    };
    let [first, RefOr::T(Schema::Object(note))] = all.items.as_slice() else {
        return None;
    };
    let description = note.description.clone()?;
    if !note.properties.is_empty() || !note.required.is_empty() {
        return None;
    }
    match first {
        RefOr::T(Schema::Object(inner)) => {
            let mut inner = inner.clone();
            inner.description = Some(description);
            Some(RefOr::T(Schema::Object(inner)))
        }
        RefOr::T(Schema::OneOf(inner)) => {
            let mut inner = inner.clone();
            inner.description = Some(description);
            Some(RefOr::T(Schema::OneOf(inner)))
        }
        _ => None,
    }
}
