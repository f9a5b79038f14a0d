//! CSV out: spreadsheet formula injection neutralised, rows streamed page by
//! page so memory does not grow with the number of rows.

use axum::body::{Body, Bytes};
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use futures::Stream;

/// A cell that a spreadsheet would run as a formula gets a leading `'`.
pub fn neutralize(cell: &str) -> String {
    match cell.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{cell}"),
        _ => cell.to_owned(),
    }
}

/// One CSV record (neutralised, quoted as needed, with its line end).
pub fn record<I, S>(cells: I) -> Bytes
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    let cells: Vec<String> = cells.into_iter().map(|c| neutralize(c.as_ref())).collect();
    // Writing to a Vec cannot fail.
    let _ = w.write_record(&cells);
    Bytes::from(w.into_inner().unwrap_or_default())
}

/// A download response streaming `chunks`.
pub fn download<S>(filename: &str, chunks: S) -> Response
where
    S: Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static,
{
    (
        [
            (CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                CONTENT_DISPOSITION,
                format!("attachment; filename=\"{filename}\""),
            ),
            (CACHE_CONTROL, "private, no-store".to_owned()),
        ],
        Body::from_stream(chunks),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_neutralised_and_quotes_escaped() {
        assert_eq!(neutralize("=SUM(A1)"), "'=SUM(A1)");
        for c in ["+1", "-1", "@cmd"] {
            assert!(neutralize(c).starts_with('\''));
        }
        assert_eq!(neutralize("plain"), "plain");
        assert_eq!(
            &record(["a,b", "say \"hi\"", "=1"])[..],
            b"\"a,b\",\"say \"\"hi\"\"\",'=1\n"
        );
    }
}
