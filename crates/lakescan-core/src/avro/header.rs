//! The key-value metadata of an Avro object container file (an Iceberg manifest, a data
//! file), read and rewritten without touching its data blocks.
//!
//! ```text
//!  "Obj" 0x01 │ meta: map<bytes> (blocks of count, key, value; count 0 ends) │ sync (16) │ blocks…
//!             └──────────── rewritten ────────────┘                          └── kept byte for byte
//! ```
//!
//! Why by hand: the `iceberg` crate parses a manifest only with the `schema` and
//! `partition-spec` it finds in this map (`Manifest::parse_avro`), and its entry decoder is
//! private. Several writers leave those keys out; Java reads such manifests with the table's
//! spec and schema. Filling the map and handing the file back to the crate keeps its entry
//! decoding (every field, every format version) instead of writing a second one. `apache-avro`
//! reads the map but cannot write a container around blocks it did not encode.

use std::collections::BTreeMap;

/// The four bytes every Avro object container file starts with.
const MAGIC: &[u8; 4] = b"Obj\x01";
/// The length of the sync marker after the metadata map.
const SYNC_LEN: usize = 16;

/// A parsed container header: its metadata and where the file's data starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvroHeader {
    /// The metadata map, `avro.schema` and `avro.codec` included.
    pub metadata: BTreeMap<String, Vec<u8>>,
    /// The offset of the sync marker that ends the header.
    sync_offset: usize,
}

impl AvroHeader {
    /// Reads the header of `file`; the error says what is malformed.
    pub fn parse(file: &[u8]) -> Result<Self, String> {
        if !file.starts_with(MAGIC) {
            return Err("it does not start with the Avro magic 'Obj\\x01'".into());
        }
        let mut cursor = Cursor {
            bytes: file,
            at: MAGIC.len(),
        };
        let mut metadata = BTreeMap::new();
        loop {
            let count = cursor.long()?;
            if count == 0 {
                break;
            }
            if count < 0 {
                // A negative count is followed by the block's size in bytes.
                cursor.long()?;
            }
            for _ in 0..count.unsigned_abs() {
                let key = cursor.bytes()?;
                let key = String::from_utf8(key.to_vec())
                    .map_err(|_| "a metadata key is not UTF-8".to_string())?;
                let value = cursor.bytes()?.to_vec();
                metadata.insert(key, value);
            }
        }
        if file.len() < cursor.at + SYNC_LEN {
            return Err("the header ends before its sync marker".into());
        }
        Ok(Self {
            metadata,
            sync_offset: cursor.at,
        })
    }

    /// `file` (the file this header was parsed from) with this header's metadata.
    pub fn rewrite(&self, file: &[u8]) -> Result<Vec<u8>, String> {
        let Some(rest) = file.get(self.sync_offset..) else {
            return Err("the file is shorter than the header read from it".into());
        };
        let mut out = Vec::with_capacity(file.len() + 1024);
        out.extend_from_slice(MAGIC);
        if !self.metadata.is_empty() {
            write_long(&mut out, self.metadata.len() as i64);
            for (key, value) in &self.metadata {
                write_bytes(&mut out, key.as_bytes());
                write_bytes(&mut out, value);
            }
        }
        write_long(&mut out, 0);
        out.extend_from_slice(rest);
        Ok(out)
    }

    /// Where the sync marker that ends the header starts (the blocks follow it).
    pub fn sync_offset(&self) -> usize {
        self.sync_offset
    }

    /// The value of `key` as text, when it has one.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.metadata
            .get(key)
            .and_then(|v| std::str::from_utf8(v).ok())
    }

    /// Checks the names of the record, enum and fixed types of `avro.schema`: `apache-avro`
    /// (0.21, under the `iceberg` crate) panics on one that is not an Avro name.
    pub fn check_type_names(&self) -> Result<(), String> {
        let Some(schema) = self.metadata.get("avro.schema") else {
            return Ok(());
        };
        let Ok(schema) = serde_json::from_slice::<serde_json::Value>(schema) else {
            // The crate's parser says what is wrong with it.
            return Ok(());
        };
        match first_bad_type_name(&schema) {
            Some(name) => Err(format!(
                "its avro.schema names a type '{name}', which is not an Avro name"
            )),
            None => Ok(()),
        }
    }

    /// The name of the file's record type (`avro.schema`'s `name`): `manifest_entry` in a
    /// manifest, `manifest_file` in a manifest list.
    pub fn record_name(&self) -> Option<String> {
        let schema: serde_json::Value =
            serde_json::from_slice(self.metadata.get("avro.schema")?).ok()?;
        schema.get("name")?.as_str().map(str::to_string)
    }
}

/// The first name of a named type (record, enum, fixed) in `schema` that is not an Avro
/// name: `[A-Za-z_][A-Za-z0-9_]*`, after an optional dotted namespace.
fn first_bad_type_name(schema: &serde_json::Value) -> Option<&str> {
    match schema {
        serde_json::Value::Array(items) => items.iter().find_map(first_bad_type_name),
        serde_json::Value::Object(object) => {
            let named = matches!(
                object.get("type").and_then(serde_json::Value::as_str),
                Some("record" | "enum" | "fixed")
            );
            let name = object.get("name").and_then(serde_json::Value::as_str);
            match name {
                Some(name) if named && !is_avro_full_name(name) => Some(name),
                _ => object.values().find_map(first_bad_type_name),
            }
        }
        _ => None,
    }
}

fn is_avro_full_name(full: &str) -> bool {
    let identifier = |part: &str| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    match full.rsplit_once('.') {
        None => identifier(full),
        Some(("", name)) => identifier(name),
        Some((namespace, name)) => identifier(name) && namespace.split('.').all(identifier),
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    /// A zig-zag variable-length long.
    fn long(&mut self) -> Result<i64, String> {
        let mut value: u64 = 0;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.bytes.get(self.at) else {
                return Err("the header is cut off inside a number".into());
            };
            self.at += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok((value >> 1) as i64 ^ -((value & 1) as i64));
            }
        }
        Err("a number in the header is longer than 10 bytes".into())
    }

    /// A length-prefixed byte string.
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let len = self.long()?;
        let len = usize::try_from(len).map_err(|_| format!("a negative length {len}"))?;
        let end = self
            .at
            .checked_add(len)
            .filter(|end| *end <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!(
                "a metadata entry of {len} bytes runs past the end of the file"
            ));
        };
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
}

fn write_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let byte = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn write_bytes(out: &mut Vec<u8>, b: &[u8]) {
    write_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(entries: &[(&str, &[u8])], negative_count: bool) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        let mut block = vec![];
        for (k, v) in entries {
            write_bytes(&mut block, k.as_bytes());
            write_bytes(&mut block, v);
        }
        match negative_count {
            true => {
                write_long(&mut out, -(entries.len() as i64));
                write_long(&mut out, block.len() as i64);
            }
            false => write_long(&mut out, entries.len() as i64),
        }
        out.extend(block);
        write_long(&mut out, 0);
        out.extend([7u8; SYNC_LEN]);
        out.extend(b"data blocks");
        out
    }

    #[test]
    fn reads_and_rewrites_the_map_keeping_the_blocks() {
        for negative in [false, true] {
            let f = file(&[("avro.schema", b"{}"), ("content", b"data")], negative);
            let mut header = AvroHeader::parse(&f).unwrap();
            assert_eq!(header.text("content"), Some("data"));
            header
                .metadata
                .insert("partition-spec-id".into(), b"3".to_vec());
            let rewritten = header.rewrite(&f).unwrap();
            assert!(rewritten.ends_with(&[[7u8; SYNC_LEN].as_slice(), b"data blocks"].concat()));
            let again = AvroHeader::parse(&rewritten).unwrap();
            assert_eq!(again.text("partition-spec-id"), Some("3"));
            assert_eq!(again.text("avro.schema"), Some("{}"));
            assert_eq!(again.metadata.len(), 3);
        }
    }

    #[test]
    fn long_values_round_trip() {
        for v in [0i64, 1, -1, 63, -64, 64, 300, i64::MAX, i64::MIN] {
            let mut out = vec![];
            write_long(&mut out, v);
            let mut c = Cursor { bytes: &out, at: 0 };
            assert_eq!(c.long().unwrap(), v);
        }
    }

    #[test]
    fn type_names_that_are_not_avro_names_are_refused() {
        let header = |schema: &str| AvroHeader {
            metadata: BTreeMap::from([("avro.schema".to_string(), schema.as_bytes().to_vec())]),
            sync_offset: 0,
        };
        let record = |name: &str| {
            format!(
                r#"{{"type": "record", "name": "{name}", "fields": [{{"name": "f", "type": {{"type": "fixed", "name": "r_1", "size": 4}}}}]}}"#
            )
        };
        for good in ["manifest_entry", "a.b.manifest_entry", ".x", "_1"] {
            assert_eq!(header(&record(good)).check_type_names(), Ok(()), "{good}");
        }
        for bad in ["\\u0080x", "1x", "a..b", "a.", "", "x-y"] {
            let err = header(&record(bad)).check_type_names().unwrap_err();
            assert!(err.contains("is not an Avro name"), "{bad}: {err}");
        }
        let nested = r#"{"type": "record", "name": "r", "fields": [{"name": "f", "type": {"type": "record", "name": "{x", "fields": []}}]}"#;
        assert!(header(nested).check_type_names().is_err());
    }

    #[test]
    fn malformed_headers_say_what_is_wrong() {
        let err = AvroHeader::parse(b"PAR1....").unwrap_err();
        assert!(err.contains("magic"), "{err}");
        let f = file(&[("k", b"v")], false);
        let err = AvroHeader::parse(&f[..8]).unwrap_err();
        assert!(
            err.contains("past the end") || err.contains("cut off"),
            "{err}"
        );
        let err = AvroHeader::parse(&f[..f.len() - 20]).unwrap_err();
        assert!(err.contains("sync"), "{err}");
    }
}
