//! Pages of a list, as the host site's REST API pages them: `page` and
//! `per_page` in, `X-WP-Total` and `X-WP-TotalPages` out.

use axum::extract::Query;
use axum::extract::rejection::QueryRejection;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use keel_platform::http::Json;
use serde::{Deserialize, Serialize};
use utoipa::IntoParams;

use crate::error::{self, Error};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Paging {
    /// 1 to 1,000,000 (default 1).
    #[param(schema_with = page_schema)]
    page: Option<u64>,
    /// 1 to 100 (default 20).
    #[param(schema_with = per_page_schema)]
    per_page: Option<u64>,
}

/// The last page anyone may ask for (a bound on the offset that reaches SQL).
const MAX_PAGE: u64 = 1_000_000;

fn page_schema() -> utoipa::openapi::schema::Object {
    bounded(MAX_PAGE)
}

fn per_page_schema() -> utoipa::openapi::schema::Object {
    bounded(100)
}

fn bounded(max: u64) -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(1))
        .maximum(Some(max))
        .build()
}

impl Paging {
    pub fn get(&self) -> Result<(u64, u64), Error> {
        let page = self.page.unwrap_or(1);
        let per_page = self.per_page.unwrap_or(20);
        if !(1..=MAX_PAGE).contains(&page) || !(1..=100).contains(&per_page) {
            return Err(error::bad_page());
        }
        Ok((page, per_page))
    }
}

/// A query string read into its type; a malformed one is 400
/// `rest_invalid_param`.
pub fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, Error> {
    q.map(|Query(p)| p)
        .map_err(|e| error::invalid_param(e.body_text()))
}

/// A text filter of a list: empty as absent; over `max` characters is 400
/// `rest_invalid_param` naming it.
pub fn text_filter<'a>(
    name: &'static str,
    value: Option<&'a str>,
    max: usize,
) -> Result<Option<&'a str>, Error> {
    match value.filter(|v| !v.is_empty()) {
        Some(v) if v.chars().count() > max => Err(error::invalid_param(format!(
            "{name} must be at most {max} characters"
        ))
        .with("params", vec![name])),
        v => Ok(v),
    }
}

pub fn paged<T: Serialize>(body: T, total: u64, per_page: u64) -> Response {
    let pages = total.div_ceil(per_page);
    let mut resp = Json(body).into_response();
    resp.headers_mut()
        .insert("x-wp-total", HeaderValue::from(total));
    resp.headers_mut()
        .insert("x-wp-totalpages", HeaderValue::from(pages));
    resp
}
