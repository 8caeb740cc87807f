//! Stripes: the units of an ORC file a split owns (midpoint rule), their first rows, and
//! `LoadStripe` — the stripe footer, then the streams of the projected columns only, fetched
//! in one coalesced read and handed to `orc-rust` from memory.
//!
//! ```text
//!  stripe:  | index streams (ROW_INDEX, BLOOM_FILTER…) | data streams (PRESENT, DATA, LENGTH…) | stripe footer |
//!           offset ──────────────────────────────────────────────────────────────▶ footer_offset
//! ```
//!
//! `orc-rust`'s `Stripe::new_async` asks for each stream separately (one request per
//! stream on an object store) and panics on a stripe footer with fewer column encodings than
//! columns or an unknown writer time zone; the footer is decoded and checked here first.

use std::ops::Range;

use bytes::Bytes;
use datafusion::common::Result;
use futures::FutureExt;
use futures::future::BoxFuture;
use orc_rust::proto;
use orc_rust::reader::AsyncChunkReader;
use orc_rust::schema::RootDataType;
use orc_rust::stripe::{Stripe, StripeMetadata};
use parquet::arrow::async_reader::AsyncFileReader;
use prost013::Message;

use super::errors::{decoder_panic, orc_error};
use super::file::OrcFile;
use super::tail_check::decompress;
use crate::format::midpoint_in_range;
use crate::split::FileSplit;

/// The stripes whose midpoint lies in the split's byte range.
pub fn stripes_in_range(stripes: &[StripeMetadata], split: &FileSplit) -> Vec<usize> {
    stripes
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            let length = s.index_length() + s.data_length() + s.footer_length();
            midpoint_in_range(s.offset() + length / 2, split)
        })
        .map(|(i, _)| i)
        .collect()
}

/// The file position of each stripe's first row.
pub fn first_rows(stripes: &[StripeMetadata]) -> Vec<u64> {
    let mut next = 0u64;
    stripes
        .iter()
        .map(|s| {
            let first = next;
            next = next.saturating_add(s.number_of_rows());
            first
        })
        .collect()
}

/// `LoadStripe`: stripe `index` of `file` with the streams of the columns of `projected`.
pub async fn load_stripe(
    path: &str,
    file: &mut OrcFile,
    index: usize,
    projected: &RootDataType,
) -> Result<Stripe> {
    let Some(info) = file.metadata.stripe_metadatas().get(index).cloned() else {
        return Err(orc_error(path, format!("it has no stripe {index}")));
    };
    let footer_range = info.footer_offset()..info.footer_offset() + info.footer_length();
    let footer_bytes = file
        .reader
        .get_bytes(footer_range.clone())
        .await
        .map_err(|e| orc_error(path, format!("reading stripe {index}'s footer failed: {e}")))?;
    let what = format!("stripe {index}'s footer");
    let plain = decompress(path, &what, footer_bytes.clone(), file.compression())?;
    let footer = proto::StripeFooter::decode(plain.as_slice()).map_err(|e| {
        orc_error(
            path,
            format!("{what} does not decode: {e} (the file is corrupt)"),
        )
    })?;
    let types = file.footer.types.len();
    if footer.columns.len() < types {
        return Err(orc_error(
            path,
            format!(
                "{what} has {} column encodings for {types} columns (the file is corrupt)",
                footer.columns.len()
            ),
        ));
    }
    if let Some(zone) = &footer.writer_timezone
        && zone.parse::<chrono_tz::Tz>().is_err()
    {
        return Err(orc_error(
            path,
            format!("{what} names an unknown writer time zone '{zone}'"),
        ));
    }
    let mut ranges = vec![];
    let mut offset = info.offset();
    let data_end = info.footer_offset();
    for stream in &footer.streams {
        let end = offset.saturating_add(stream.length());
        if end > data_end {
            return Err(orc_error(
                path,
                format!("{what} lists streams past the stripe's data (the file is corrupt)"),
            ));
        }
        if projected.contains_column_index(stream.column() as usize) && end > offset {
            ranges.push(offset..end);
        }
        offset = end;
    }
    let parts = match ranges.is_empty() {
        true => vec![],
        false => file
            .reader
            .get_byte_ranges(ranges.clone())
            .await
            .map_err(|e| orc_error(path, format!("reading stripe {index} failed: {e}")))?,
    };
    let mut chunks = StripeChunks {
        pieces: ranges.into_iter().zip(parts).collect(),
    };
    chunks.pieces.push((footer_range, footer_bytes));
    let metadata = &file.metadata;
    let stripe =
        std::panic::AssertUnwindSafe(Stripe::new_async(&mut chunks, metadata, projected, &info))
            .catch_unwind()
            .await
            .map_err(|panic| decoder_panic(path, panic))?;
    stripe.map_err(|e| orc_error(path, format!("stripe {index} does not open: {e}")))
}

/// Row-index entries (one per group of `rowIndexStride` rows) of the column at `position`
/// of `stripe.columns()`; `None` when the file has no row index for it.
pub fn row_index(
    path: &str,
    stripe: &Stripe,
    position: usize,
) -> Result<Option<Vec<proto::RowIndexEntry>>> {
    let Some(column) = stripe.columns().get(position) else {
        return Ok(None);
    };
    let Some(mut stream) = stripe
        .stream_map()
        .get_opt(column, proto::stream::Kind::RowIndex)
    else {
        return Ok(None);
    };
    let mut plain = vec![];
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        std::io::Read::read_to_end(&mut stream, &mut plain)
    }));
    let what = "row index";
    match read {
        Ok(Ok(_)) => {}
        _ => return Err(orc_error(path, format!("its {what} does not decompress"))),
    }
    let index = proto::RowIndex::decode(plain.as_slice())
        .map_err(|e| orc_error(path, format!("its {what} does not decode: {e}")))?;
    Ok(Some(index.entry))
}

/// The bytes of one stripe fetched ahead, as `orc-rust`'s byte source.
struct StripeChunks {
    pieces: Vec<(Range<u64>, Bytes)>,
}

impl AsyncChunkReader for StripeChunks {
    fn len(&mut self) -> BoxFuture<'_, std::io::Result<u64>> {
        let end = self.pieces.iter().map(|(r, _)| r.end).max().unwrap_or(0);
        futures::future::ready(Ok(end)).boxed()
    }

    fn get_bytes(
        &mut self,
        offset_from_start: u64,
        length: u64,
    ) -> BoxFuture<'_, std::io::Result<Bytes>> {
        let end = offset_from_start.saturating_add(length);
        if length == 0 {
            return futures::future::ready(Ok(Bytes::new())).boxed();
        }
        let found = self
            .pieces
            .iter()
            .find(|(r, _)| r.start <= offset_from_start && end <= r.end)
            .map(|(r, bytes)| {
                bytes.slice((offset_from_start - r.start) as usize..(end - r.start) as usize)
            });
        let answer = found.ok_or_else(|| {
            std::io::Error::other(format!(
                "bytes {offset_from_start}..{end} of the stripe were not fetched"
            ))
        });
        futures::future::ready(answer).boxed()
    }
}
