//! The tail of an ORC file checked before `orc-rust` trusts it: the postscript (lengths that
//! lie inside the file, a codec `orc-rust` decodes), the codec itself, the footer and
//! metadata sections decompressed and decoded, the type list (a struct root, no cycles,
//! children in range) and the stripes (inside the file, after the header).
//!
//! `orc-rust` panics, overflows or misreads on such tails; [`super::open`] runs these checks
//! on the bytes it fetched and hands the checked tail to `orc-rust` after.

use std::io::Read;
use std::ops::Range;

use bytes::Bytes;
use datafusion::common::{DataFusionError, Result};
use orc_rust::compression::{Compression, Decompressor};
use orc_rust::proto;
use prost013::Message;

use super::errors::orc_error;
use super::synthetic_tail::read_synthetic_tail;

/// The highest `CompressionKind` `orc-rust` 0.8 decodes (ZSTD).
const KNOWN_CODECS: [&str; 6] = ["NONE", "ZLIB", "SNAPPY", "LZO", "LZ4", "ZSTD"];

/// Where the sections of the tail lie in the file.
#[derive(Debug)]
pub(super) struct TailLayout {
    pub(super) postscript: proto::PostScript,
    pub(super) footer: Range<u64>,
    pub(super) metadata: Range<u64>,
}

/// Decodes the postscript from the tail (`tail` holds the file's bytes from `start`) and
/// checks that the footer and metadata it describes lie inside the file, after the header,
/// and that its codec is one `orc-rust` decodes.
pub(super) fn check_postscript(
    path: &str,
    file_size: u64,
    start: u64,
    tail: &[u8],
) -> Result<TailLayout> {
    let not_orc = |why: &str| {
        orc_error(
            path,
            format!("{why} (the file is truncated or not an ORC file)"),
        )
    };
    // "ORC" + at least a postscript length byte.
    if file_size < 4 || tail.is_empty() {
        return Err(not_orc(&format!("it has {file_size} bytes")));
    }
    let ps_len = u64::from(tail[tail.len() - 1]);
    let tail_len = tail.len() as u64;
    if ps_len == 0 || ps_len + 1 > tail_len {
        return Err(not_orc(&format!(
            "its postscript length ({ps_len}) does not fit in the file"
        )));
    }
    let ps_start = (tail_len - 1 - ps_len) as usize;
    let postscript = proto::PostScript::decode(&tail[ps_start..tail.len() - 1])
        .map_err(|e| not_orc(&format!("its postscript does not decode: {e}")))?;
    if let Some(magic) = &postscript.magic
        && magic != "ORC"
    {
        return Err(not_orc(&format!(
            "its postscript magic is '{magic}', not 'ORC'"
        )));
    }
    // ORC's unstable 2.0 draft (written only on request) changes encodings, such as
    // decimals as 64-bit RLE v2 values, that `orc-rust` reads as the 0.12 ones.
    if postscript.version.as_slice() == [1, 9999] {
        return Err(DataFusionError::NotImplemented(format!(
            "ORC file '{path}' is of the unstable pre-2.0 format (version 1.9999: its \
             encodings, such as 64-bit decimals, are not those of ORC 0.12); rewrite it as \
             ORC 0.12 (the default of Hive, Spark and Trino)"
        )));
    }
    // A version this reader does not know may encode columns otherwise (ORC's Java reader
    // refuses such files too); no version is 0.11's files.
    let version = postscript.version.as_slice();
    // DWRF (Meta's variant of ORC, Velox's and Presto's) has the same file magic but a
    // postscript whose field 4 is one writer version, where ORC's is major and minor.
    if let [writer] = version {
        return Err(DataFusionError::NotImplemented(format!(
            "ORC file '{path}' looks like a DWRF file (its postscript names one version,              {writer}, where ORC names a major and a minor): lakescan reads ORC 0.11 and 0.12,              not DWRF"
        )));
    }
    if !version.is_empty() && !matches!(version.get(..2), Some([0, 11] | [0, 12])) {
        let shown: Vec<String> = version.iter().map(u32::to_string).collect();
        return Err(DataFusionError::NotImplemented(format!(
            "ORC file '{path}' was written by a future ORC version {}; lakescan reads ORC \
             0.11 and 0.12",
            shown.join(".")
        )));
    }
    let kind = postscript.compression.unwrap_or(0);
    if !(0..KNOWN_CODECS.len() as i32).contains(&kind) {
        return Err(orc_error(
            path,
            format!(
                "unknown compression kind {kind} in its postscript (known: {})",
                KNOWN_CODECS.join(", ")
            ),
        ));
    }
    let Some(footer_len) = postscript.footer_length else {
        return Err(not_orc("its postscript gives no footer length"));
    };
    // Writers before ORC 0.12 (Hive 0.11) write no metadata section and no length for it:
    // Java reads the field's default, 0.
    let metadata_len = postscript.metadata_length.unwrap_or(0);
    let ps_offset = start + ps_start as u64;
    let fits = footer_len
        .checked_add(metadata_len)
        .and_then(|n| n.checked_add(3))
        .is_some_and(|n| n <= ps_offset);
    if !fits {
        return Err(not_orc(&format!(
            "its postscript gives a footer of {footer_len} bytes and metadata of \
             {metadata_len} bytes, more than the {ps_offset} bytes before it"
        )));
    }
    let footer = ps_offset - footer_len..ps_offset;
    let metadata = footer.start - metadata_len..footer.start;
    Ok(TailLayout {
        postscript,
        footer,
        metadata,
    })
}

/// The codec of a file with `postscript`, as `orc-rust` builds it: read from a synthetic
/// tail of one struct type with the same codec and block size.
pub(super) fn compression_of(
    path: &str,
    postscript: &proto::PostScript,
) -> Result<Option<Compression>> {
    let footer = proto::Footer {
        types: vec![proto::Type {
            kind: Some(proto::r#type::Kind::Struct as i32),
            ..Default::default()
        }],
        number_of_rows: Some(0),
        ..Default::default()
    };
    read_synthetic_tail(path, &footer, postscript)?
        .map(|m| m.compression())
        .map_err(|e| orc_error(path, format!("its codec is not supported: {e}")))
}

/// Decompresses and decodes one section of the tail (`what` names it in errors).
pub(super) fn decode_section<M: Message + Default>(
    path: &str,
    what: &str,
    bytes: Bytes,
    compression: Option<Compression>,
) -> Result<M> {
    let plain = decompress(path, what, bytes, compression)?;
    M::decode(plain.as_slice()).map_err(|e| {
        orc_error(
            path,
            format!("its {what} does not decode: {e} (the file is corrupt)"),
        )
    })
}

/// The decompressed bytes of a stream or section (`orc-rust`'s decompressor panics on
/// corrupt or truncated blocks: caught here, an error naming the file).
pub fn decompress(
    path: &str,
    what: &str,
    bytes: Bytes,
    compression: Option<Compression>,
) -> Result<Vec<u8>> {
    let mut plain = vec![];
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Decompressor::new(bytes, compression, vec![]).read_to_end(&mut plain)
    }))
    .map_err(|_| {
        orc_error(
            path,
            format!("its {what} does not decompress (the file is corrupt or truncated)"),
        )
    })?;
    read.map_err(|e| orc_error(path, format!("its {what} does not decompress: {e}")))?;
    Ok(plain)
}

/// Checks the type tree before `orc-rust` walks it recursively: a struct root, every
/// subtype after its parent and inside the list (no cycle, no dangling id), one name per
/// struct member, one child per list and two per map.
pub(super) fn check_types(path: &str, footer: &proto::Footer) -> Result<()> {
    use proto::r#type::Kind;
    let types = &footer.types;
    let bad = |why: String| orc_error(path, format!("its type list is corrupt: {why}"));
    match types.first().map(|t| t.kind()) {
        Some(Kind::Struct) => {}
        // Valid ORC (Java's tests write some), but not a table's file: no writer of Hive,
        // Spark or Trino makes one.
        Some(other) => {
            return Err(DataFusionError::NotImplemented(format!(
                "ORC file '{path}' holds bare values of type {other:?}, not rows of columns \
                 (its root type is not a struct): lakescan does not read such files"
            )));
        }
        None => return Err(bad("it is empty".into())),
    }
    for (id, t) in types.iter().enumerate() {
        for &child in &t.subtypes {
            let child = child as usize;
            if child <= id || child >= types.len() {
                return Err(bad(format!(
                    "type {id} has subtype {child}, outside ({id}, {})",
                    types.len()
                )));
            }
        }
        let children = t.subtypes.len();
        let expected = match t.kind() {
            Kind::Struct => Some(t.field_names.len()),
            Kind::List => Some(1),
            Kind::Map => Some(2),
            _ => None,
        };
        if let Some(expected) = expected
            && children != expected
        {
            return Err(bad(format!(
                "type {id} ({:?}) has {children} subtypes, expected {expected}",
                t.kind()
            )));
        }
        if t.kind() == Kind::Union && children > 127 {
            return Err(bad(format!("union type {id} has {children} variants")));
        }
    }
    Ok(())
}

/// Checks that every stripe the footer lists lies inside the file.
pub(super) fn check_stripes(path: &str, file_size: u64, footer: &proto::Footer) -> Result<()> {
    for (i, s) in footer.stripes.iter().enumerate() {
        let end = [s.index_length(), s.data_length(), s.footer_length()]
            .into_iter()
            .try_fold(s.offset(), u64::checked_add);
        if end.is_none_or(|end| end > file_size) || s.offset() < 3 {
            return Err(orc_error(
                path,
                format!(
                    "its footer places stripe {i} at {}+{}+{}+{} bytes, outside the file's \
                     {file_size} (the file is truncated or corrupt)",
                    s.offset(),
                    s.index_length(),
                    s.data_length(),
                    s.footer_length()
                ),
            ));
        }
    }
    Ok(())
}
