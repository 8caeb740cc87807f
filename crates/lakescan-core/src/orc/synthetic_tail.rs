//! Tails handed to `orc-rust`: `TailChunks`, the bytes of a file's tail already fetched
//! (and checked) served to its `read_metadata`, and [`read_synthetic_tail`], a tail made
//! of a footer alone, to learn what `orc-rust` makes of a codec or a type tree without a
//! file of them.

use bytes::{Bytes, BytesMut};
use datafusion::common::{Result, internal_err};
use futures::FutureExt;
use futures::future::BoxFuture;
use orc_rust::proto;
use orc_rust::reader::AsyncChunkReader;
use orc_rust::reader::metadata::FileMetadata;
use prost013::Message;

use super::errors::decoder_panic;

/// The tail's bytes as `orc-rust`'s byte source (it reads nothing else while opening).
pub(super) struct TailChunks {
    pub(super) file_size: u64,
    pub(super) start: u64,
    pub(super) tail: Bytes,
}

impl AsyncChunkReader for TailChunks {
    fn len(&mut self) -> BoxFuture<'_, std::io::Result<u64>> {
        futures::future::ready(Ok(self.file_size)).boxed()
    }

    fn get_bytes(
        &mut self,
        offset_from_start: u64,
        length: u64,
    ) -> BoxFuture<'_, std::io::Result<Bytes>> {
        let end = offset_from_start.saturating_add(length);
        let tail_end = self.start + self.tail.len() as u64;
        let answer = match offset_from_start >= self.start && end <= tail_end {
            true => Ok(self
                .tail
                .slice((offset_from_start - self.start) as usize..(end - self.start) as usize)),
            false => Err(std::io::Error::other(format!(
                "bytes {offset_from_start}..{end} lie outside the tail read"
            ))),
        };
        futures::future::ready(answer).boxed()
    }
}

/// `section` as a compressed stream holds it uncompressed: in "original" chunks (a 3-byte
/// header: length << 1 | 1), which every codec allows; as it is when the file is
/// uncompressed.
pub(super) fn original_chunks(section: &[u8], compressed: bool) -> Bytes {
    if !compressed {
        return Bytes::copy_from_slice(section);
    }
    // A chunk's length has 23 bits.
    const MAX_CHUNK: usize = (1 << 23) - 1;
    let mut out = BytesMut::with_capacity(section.len() + 3 * (section.len() / MAX_CHUNK + 1));
    for chunk in section.chunks(MAX_CHUNK) {
        let header = ((chunk.len() as u32) << 1) | 1;
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.extend_from_slice(chunk);
    }
    out.freeze()
}

/// `orc-rust`'s reading of a tail made of `footer` alone (in "original" chunks, which
/// every codec allows) and a postscript with `like`'s codec and block size: how to learn
/// what `orc-rust` makes of a codec or a type tree without a file of them. A panic of
/// `orc-rust` is the file's (`path`'s) error; its own error is returned as it is.
pub fn read_synthetic_tail(
    path: &str,
    footer: &proto::Footer,
    like: &proto::PostScript,
) -> Result<std::result::Result<FileMetadata, orc_rust::error::OrcError>> {
    let compressed = like.compression.unwrap_or(0) != 0;
    let footer = original_chunks(&footer.encode_to_vec(), compressed);
    let ps = proto::PostScript {
        footer_length: Some(footer.len() as u64),
        compression: like.compression,
        compression_block_size: like.compression_block_size,
        metadata_length: Some(0),
        magic: Some("ORC".into()),
        ..Default::default()
    }
    .encode_to_vec();
    let Ok(ps_len) = u8::try_from(ps.len()) else {
        return internal_err!("a postscript of {} bytes", ps.len());
    };
    let mut file = BytesMut::with_capacity(3 + footer.len() + ps.len() + 1);
    file.extend_from_slice(b"ORC");
    file.extend_from_slice(&footer);
    file.extend_from_slice(&ps);
    file.extend_from_slice(&[ps_len]);
    let mut bytes = file.freeze();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        orc_rust::reader::metadata::read_metadata(&mut bytes)
    }))
    .map_err(|panic| decoder_panic(path, panic))
}
