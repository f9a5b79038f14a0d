//! The channel's logo: an upload is judged by its content (PNG, JPEG, GIF
//! or WebP), decoded with limits (so a decompression bomb is refused, not
//! decoded), scaled to fit 512×512 and re-encoded as PNG (which drops any
//! metadata), then stored in the database under the SHA-256 of the PNG, so
//! every node serves it and its URL changes only when it does.

use std::io::Cursor;

use chrono::Utc;
use image::{ImageFormat, ImageReader, Limits};
use keel_platform::crypto::sha256_hex;
use keel_platform::db::Db;
use keel_platform::sea_orm::sea_query::{Expr, OnConflict};
use keel_platform::sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter, Set};

use crate::entity::{asset, channel_config};

/// The largest upload.
pub const MAX_BYTES: usize = 2 * 1024 * 1024;
/// The largest picture decoded (width and height).
pub const MAX_SIDE: u32 = 4096;
/// The stored logo fits this square.
pub const STORED_SIDE: u32 = 512;

#[derive(Debug, thiserror::Error)]
pub enum LogoError {
    #[error("the image is larger than {MAX_BYTES} bytes")]
    TooLarge,
    #[error("only PNG, JPEG, GIF and WebP images are accepted")]
    WrongType,
    #[error("the file is not a readable image: {0}")]
    NotAnImage(String),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// A logo ready to store.
#[derive(Debug)]
pub struct Processed {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// Checks, decodes, scales and re-encodes an upload (CPU work: call it off
/// the async threads).
pub fn process(bytes: &[u8]) -> Result<Processed, LogoError> {
    if bytes.len() > MAX_BYTES {
        return Err(LogoError::TooLarge);
    }
    let format = image::guess_format(bytes)
        .map_err(|_| LogoError::NotAnImage("its content is no known image format".to_owned()))?;
    if !matches!(
        format,
        ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP
    ) {
        return Err(LogoError::WrongType);
    }
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(128 * 1024 * 1024);
    reader.limits(limits);
    let img = reader
        .decode()
        .map_err(|e| LogoError::NotAnImage(e.to_string()))?;
    let img = if img.width() > STORED_SIDE || img.height() > STORED_SIDE {
        img.thumbnail(STORED_SIDE, STORED_SIDE)
    } else {
        img
    };
    let mut png = Vec::new();
    img.write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
        .map_err(|e| LogoError::NotAnImage(e.to_string()))?;
    Ok(Processed {
        width: img.width(),
        height: img.height(),
        png,
    })
}

/// Stores the logo and makes it the channel's; its hash.
pub async fn store(db: &Db, p: Processed) -> Result<String, DbErr> {
    let hash = sha256_hex(&p.png);
    let txn = db.begin_write().await?;
    asset::Entity::insert(asset::ActiveModel {
        hash: Set(hash.clone()),
        content_type: Set("image/png".to_owned()),
        bytes: Set(p.png),
        width: Set(i32::try_from(p.width).unwrap_or(i32::MAX)),
        height: Set(i32::try_from(p.height).unwrap_or(i32::MAX)),
        created_at: Set(Utc::now()),
    })
    .on_conflict(
        OnConflict::column(asset::Column::Hash)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(&txn)
    .await?;
    channel_config::Entity::update_many()
        .col_expr(channel_config::Column::LogoHash, Expr::value(hash.as_str()))
        .col_expr(channel_config::Column::UpdatedAt, Expr::value(Utc::now()))
        .filter(channel_config::Column::Id.eq(channel_config::ID))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(hash)
}

/// A stored image by its hash.
pub async fn get(db: &Db, hash: &str) -> Result<Option<asset::Model>, DbErr> {
    asset::Entity::find_by_id(hash).one(db.read()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = image::RgbImage::from_pixel(w, h, image::Rgb([200, 30, 30]));
        let mut out = Vec::new();
        image::DynamicImage::ImageRgb8(img)
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap_or_default();
        out
    }

    #[test]
    fn an_image_is_judged_by_content_scaled_and_re_encoded() {
        let p = process(&png(1024, 512)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((p.width, p.height), (512, 256));
        assert!(p.png.starts_with(b"\x89PNG"));
        assert!(matches!(
            process(b"hello, world"),
            Err(LogoError::NotAnImage(_))
        ));
        assert!(matches!(
            process(b"BM\x00\x00\x00\x00\x00\x00\x00\x00"),
            Err(LogoError::WrongType)
        ));
        let mut broken = png(10, 10);
        broken.truncate(40);
        assert!(matches!(process(&broken), Err(LogoError::NotAnImage(_))));
        assert!(matches!(
            process(&vec![0u8; MAX_BYTES + 1]),
            Err(LogoError::TooLarge)
        ));
    }

    #[test]
    fn a_picture_larger_than_the_limit_is_refused_before_decoding() {
        // A small file declaring a huge picture: a decompression bomb.
        let bomb = png(MAX_SIDE + 1, 1);
        assert!(matches!(process(&bomb), Err(LogoError::NotAnImage(_))));
    }
}
