//! The tail of an uncompressed ORC file the test writer wrote, located and rewritten: for
//! tests that damage the stripe statistics, or that make a file look as another writer's
//! (its writer version, its statistics as that writer wrote them).

use orc_rust::proto;
use prost013::Message;

use super::{Result, WriteError};

/// The postscript, footer and metadata section of `file`, and where its tail starts.
struct Tail {
    postscript: proto::PostScript,
    footer: proto::Footer,
    metadata: proto::Metadata,
    start: usize,
}

fn read_tail(file: &[u8]) -> Result<Tail> {
    let bad = || WriteError("not an uncompressed ORC file this writer wrote".into());
    let ps_len = usize::from(*file.last().ok_or_else(bad)?);
    let ps_start = file.len().checked_sub(1 + ps_len).ok_or_else(bad)?;
    let postscript =
        proto::PostScript::decode(&file[ps_start..file.len() - 1]).map_err(|_| bad())?;
    let footer_len = postscript.footer_length.ok_or_else(bad)? as usize;
    let metadata_len = postscript.metadata_length.ok_or_else(bad)? as usize;
    let footer_start = ps_start.checked_sub(footer_len).ok_or_else(bad)?;
    let start = footer_start.checked_sub(metadata_len).ok_or_else(bad)?;
    let footer = proto::Footer::decode(&file[footer_start..ps_start]).map_err(|_| bad())?;
    let metadata = proto::Metadata::decode(&file[start..footer_start]).map_err(|_| bad())?;
    Ok(Tail {
        postscript,
        footer,
        metadata,
        start,
    })
}

/// Where the metadata section (stripe statistics) of an uncompressed ORC `file` lies, from
/// its postscript: for tests that damage it.
pub fn metadata_section(file: &[u8]) -> Result<std::ops::Range<usize>> {
    let tail = read_tail(file)?;
    let end = tail.start + tail.postscript.metadata_length.unwrap_or(0) as usize;
    Ok(tail.start..end)
}

/// `file` (uncompressed, of this writer) with its postscript, footer and stripe statistics
/// as `edit` leaves them; the stripes are kept byte for byte.
pub fn with_tail(
    file: &[u8],
    edit: impl FnOnce(&mut proto::PostScript, &mut proto::Footer, &mut proto::Metadata),
) -> Result<Vec<u8>> {
    let Tail {
        mut postscript,
        mut footer,
        mut metadata,
        start,
    } = read_tail(file)?;
    edit(&mut postscript, &mut footer, &mut metadata);
    let mut out = file[..start].to_vec();
    let metadata = metadata.encode_to_vec();
    let footer = footer.encode_to_vec();
    postscript.metadata_length = Some(metadata.len() as u64);
    postscript.footer_length = Some(footer.len() as u64);
    let postscript = postscript.encode_to_vec();
    let ps_len = u8::try_from(postscript.len())
        .map_err(|_| WriteError(format!("a postscript of {} bytes", postscript.len())))?;
    out.extend_from_slice(&metadata);
    out.extend_from_slice(&footer);
    out.extend_from_slice(&postscript);
    out.push(ps_len);
    Ok(out)
}
