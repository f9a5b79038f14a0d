//! CSV out, for every export (svc's devices and submissions, the console's
//! audit log): one record at a time, spreadsheet formula injection
//! neutralised.

use bytes::Bytes;

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
