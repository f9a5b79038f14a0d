//! The device list exported as CSV, page by page (memory does not grow with
//! the number of devices); `import` reads it back.

use bytes::Bytes;
use futures::StreamExt;
use keel_platform::db::Db;
use keel_platform::sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::entity::push_device;
use keel_platform::csv_out;

pub const COLUMNS: [&str; 11] = [
    "push_token",
    "device_type",
    "device_model",
    "os_version",
    "app_version",
    "locale",
    "timezone",
    "user_label",
    "active",
    "registered_at",
    "updated_at",
];

const PAGE: u64 = 1000;

fn cells(d: &push_device::Model) -> Vec<String> {
    let o = |v: &Option<String>| v.clone().unwrap_or_default();
    vec![
        d.push_token.clone(),
        d.device_type.clone(),
        o(&d.device_model),
        o(&d.os_version),
        o(&d.app_version),
        o(&d.locale),
        o(&d.timezone),
        o(&d.user_label),
        d.active.to_string(),
        keel_platform::time::iso_millis(&d.registered_at),
        keel_platform::time::iso_millis(&d.updated_at),
    ]
}

/// Every device as CSV chunks, a page at a time.
pub fn export(db: Db) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let header = futures::stream::once(async { Ok(csv_out::record(COLUMNS)) });
    let pages = futures::stream::unfold(Some(String::new()), move |after| {
        let db = db.clone();
        async move {
            let after = after?;
            let page = push_device::Entity::find()
                .filter(push_device::Column::PushToken.gt(after.as_str()))
                .order_by_asc(push_device::Column::PushToken)
                .limit(PAGE)
                .all(db.read())
                .await;
            match page {
                Err(e) => Some((Err(std::io::Error::other(e.to_string())), None)),
                Ok(rows) if rows.is_empty() => None,
                Ok(rows) => {
                    let last = rows.last().map(|d| d.push_token.clone());
                    let mut chunk = Vec::new();
                    for d in &rows {
                        chunk.extend_from_slice(&csv_out::record(cells(d)));
                    }
                    Some((Ok(Bytes::from(chunk)), last))
                }
            }
        }
    });
    header.chain(pages)
}
