//! CSV records as the bytes arrive: a push parser (csv-core, which the csv
//! crate is built on) fed chunk by chunk, so an upload is never held whole.

use csv_core::{ReadRecordResult, Reader};

/// One record's fields, as bytes (a row may hold text that is not UTF-8:
/// the caller refuses it).
pub type Fields = Vec<Vec<u8>>;

pub struct Records {
    reader: Reader,
    out: Vec<u8>,
    ends: Vec<usize>,
    nout: usize,
    nend: usize,
}

impl Default for Records {
    fn default() -> Self {
        Self {
            reader: Reader::new(),
            out: vec![0; 4096],
            ends: vec![0; 64],
            nout: 0,
            nend: 0,
        }
    }
}

impl Records {
    /// The next whole record in `input` (what it read is cut off its
    /// front), or `None` once `input` is used up mid-record: feed the next
    /// chunk. At the end of the upload, call with an empty `input` until
    /// `None` to get the last record.
    pub fn next(&mut self, input: &mut &[u8]) -> Option<Fields> {
        loop {
            let (res, nin, nout, nend) = self.reader.read_record(
                input,
                &mut self.out[self.nout..],
                &mut self.ends[self.nend..],
            );
            *input = &input[nin..];
            self.nout += nout;
            self.nend += nend;
            match res {
                ReadRecordResult::InputEmpty | ReadRecordResult::End => return None,
                ReadRecordResult::OutputFull => {
                    let len = self.out.len();
                    self.out.resize(len * 2, 0);
                }
                ReadRecordResult::OutputEndsFull => {
                    let len = self.ends.len();
                    self.ends.resize(len * 2, 0);
                }
                ReadRecordResult::Record => return Some(self.take()),
            }
        }
    }

    fn take(&mut self) -> Fields {
        let mut start = 0;
        let fields = self.ends[..self.nend]
            .iter()
            .map(|&end| {
                let f = self.out[start..end].to_vec();
                start = end;
                f
            })
            .collect();
        self.nout = 0;
        self.nend = 0;
        fields
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<Vec<String>> {
        let mut r = Records::default();
        let mut got = Vec::new();
        let text = |f: Fields| {
            f.into_iter()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .collect()
        };
        for chunk in chunks.iter().chain(std::iter::once(&&b""[..])) {
            let mut input = *chunk;
            while let Some(f) = r.next(&mut input) {
                got.push(text(f));
            }
        }
        got
    }

    #[test]
    fn records_split_anywhere_across_chunks_come_out_whole() {
        let file = b"a,b\n\"x, \"\"y\"\"\",2\nlast,\"multi\nline\"";
        let whole = all(&[file]);
        assert_eq!(
            whole,
            [
                vec!["a", "b"],
                vec!["x, \"y\"", "2"],
                vec!["last", "multi\nline"]
            ]
        );
        for cut in 1..file.len() {
            assert_eq!(all(&[&file[..cut], &file[cut..]]), whole, "cut at {cut}");
        }
    }

    #[test]
    fn a_long_field_and_many_fields_grow_the_buffers() {
        let long = "y".repeat(10_000);
        let many = vec!["z"; 200].join(",");
        let file = format!("{long}\n{many}\n");
        let got = all(&[file.as_bytes()]);
        assert_eq!(got[0], [long]);
        assert_eq!(got[1].len(), 200);
    }
}
