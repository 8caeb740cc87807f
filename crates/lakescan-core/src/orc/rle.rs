//! The run-length encodings of ORC streams, decoded over a stream's bytes: integer RLE v1
//! and v2 (short repeat, direct, patched base, delta), byte RLE, booleans, and unbounded
//! varints (decimal digits).
//!
//! Written by hand because `orc-rust` 0.8 keeps its decoders private (only whole column
//! decoders are public) and they read a stream one byte at a time through `std::io::Read`,
//! which took over half of a selective scan's time (`docs/benchmarks.md`, "ORC"). These
//! decoders take the stream's decompressed bytes once and walk them as a slice; runs are
//! decoded into a small buffer, and [`IntRle::skip`] steps over whole runs without
//! decoding their values where the encoding allows.
//!
//! Arithmetic wraps, as the Java reader's does; a stream that ends inside a run, a width
//! the encoding does not define or a patch list that runs out is [`Corrupt`].
//!
//! ```text
//!  RLE v1:  header h ≥ 0: run of h+3 values, delta byte, base varint
//!           header h < 0: -h literal varints
//!  RLE v2:  2 high bits of the first byte: 00 short repeat, 01 direct, 10 patched base,
//!           11 delta; values bit-packed big-endian
//!  bytes:   header h ≥ 0: run of h+3 copies of one byte; h < 0: -h literal bytes
//!  booleans: bytes of 8 values, most significant bit first
//! ```

/// A stream that does not decode: what is wrong with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt(pub &'static str);

impl std::fmt::Display for Corrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// What decoding a stream gives.
pub type Decoded<T> = std::result::Result<T, Corrupt>;

const ENDED: Corrupt = Corrupt("a stream ends before its values do");

/// Whether an integer stream is zigzag encoded (signed values) or not (lengths, ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sign {
    /// Zigzag encoded.
    Signed,
    /// Plain.
    Unsigned,
}

/// The integer run-length encoding of a column (`DIRECT`/`DICTIONARY` or their `_V2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RleVersion {
    /// ORC 0.11's encoding.
    V1,
    /// ORC 0.12's encoding.
    V2,
}

impl RleVersion {
    /// The encoding of a column's integer streams, by the column's encoding.
    pub fn of(kind: orc_rust::proto::column_encoding::Kind) -> Self {
        use orc_rust::proto::column_encoding::Kind;
        match kind {
            Kind::Direct | Kind::Dictionary => Self::V1,
            Kind::DirectV2 | Kind::DictionaryV2 => Self::V2,
        }
    }
}

/// A stream's bytes and the position read to.
#[derive(Debug, Default)]
pub struct Cursor {
    bytes: Vec<u8>,
    at: usize,
}

impl Cursor {
    /// The stream `bytes`, from their start.
    pub fn new(bytes: Vec<u8>) -> Self {
        Self { bytes, at: 0 }
    }

    /// The next byte.
    #[inline]
    fn byte(&mut self) -> Decoded<u8> {
        let b = *self.bytes.get(self.at).ok_or(ENDED)?;
        self.at += 1;
        Ok(b)
    }

    /// The next `n` bytes.
    #[inline]
    pub fn take(&mut self, n: usize) -> Decoded<&[u8]> {
        let end = self.at.checked_add(n).ok_or(ENDED)?;
        let bytes = self.bytes.get(self.at..end).ok_or(ENDED)?;
        self.at = end;
        Ok(bytes)
    }

    /// The next `n` values of `width` bytes each.
    #[inline]
    pub fn take_values(&mut self, n: usize, width: usize) -> Decoded<&[u8]> {
        self.take(n.checked_mul(width).ok_or(ENDED)?)
    }

    /// The next base-128 varint, up to 64 bits.
    #[inline]
    fn varint(&mut self) -> Decoded<u64> {
        let mut value = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            if shift < 64 {
                value |= u64::from(b & 0x7f) << shift;
            }
            if b & 0x80 == 0 {
                return Ok(value);
            }
            shift += 7;
            if shift >= 70 {
                return Err(Corrupt("a varint is longer than 10 bytes"));
            }
        }
    }

    /// The next base-128 varint, up to 128 bits (decimal digits).
    #[inline]
    pub fn varint_128(&mut self) -> Decoded<u128> {
        let mut value = 0u128;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            if shift < 128 {
                value |= u128::from(b & 0x7f) << shift;
            }
            if b & 0x80 == 0 {
                return Ok(value);
            }
            shift += 7;
            if shift >= 133 {
                return Err(Corrupt("a varint is longer than 19 bytes"));
            }
        }
    }

    /// Steps over `n` varints.
    #[inline]
    pub fn skip_varints(&mut self, n: usize) -> Decoded<()> {
        let mut left = n;
        while left > 0 {
            let rest = self.bytes.get(self.at..).ok_or(ENDED)?;
            let mut used = 0;
            for &b in rest {
                used += 1;
                if b & 0x80 == 0 {
                    left -= 1;
                    if left == 0 {
                        break;
                    }
                }
            }
            if left > 0 {
                return Err(ENDED);
            }
            self.at += used;
        }
        Ok(())
    }

    /// The next `n` values of `width` bits, packed big-endian from a byte boundary, appended
    /// to `out`; the stream continues at the next byte boundary.
    fn unpack(&mut self, width: u32, n: usize, out: &mut Vec<i64>) -> Decoded<()> {
        let bits = (width as usize).checked_mul(n).ok_or(ENDED)?;
        let bytes = self.take(bits.div_ceil(8))?;
        out.reserve(n);
        match width {
            8 => out.extend(bytes.iter().map(|&b| i64::from(b))),
            16 => out.extend(
                bytes
                    .chunks_exact(2)
                    .map(|c| i64::from(u16::from_be_bytes([c[0], c[1]]))),
            ),
            32 => out.extend(
                bytes
                    .chunks_exact(4)
                    .map(|c| i64::from(u32::from_be_bytes([c[0], c[1], c[2], c[3]]))),
            ),
            64 => out.extend(
                bytes
                    .chunks_exact(8)
                    .map(|c| i64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
            ),
            _ => {
                let mask = if width == 64 {
                    u128::from(u64::MAX)
                } else {
                    (1u128 << width) - 1
                };
                let (mut held, mut held_bits) = (0u128, 0u32);
                let mut next = bytes.iter();
                for _ in 0..n {
                    while held_bits < width {
                        // `bytes` holds `width * n` bits: a byte is left for every value.
                        let b = next.next().copied().unwrap_or(0);
                        held = (held << 8) | u128::from(b);
                        held_bits += 8;
                    }
                    held_bits -= width;
                    out.push(((held >> held_bits) & mask) as u64 as i64);
                    held &= (1u128 << held_bits) - 1;
                }
            }
        }
        Ok(())
    }
}

/// `v` zigzag decoded.
#[inline]
fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// `v` zigzag decoded (128 bits).
#[inline]
pub fn unzigzag_128(v: u128) -> i128 {
    ((v >> 1) as i128) ^ -((v & 1) as i128)
}

/// The widths of RLE v2's 5-bit width codes.
const WIDTHS: [u32; 32] = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 26, 28,
    30, 32, 40, 48, 56, 64,
];

/// The smallest width of [`WIDTHS`] of at least `bits` (a patch list's).
fn closest_fixed_width(bits: u32) -> u32 {
    WIDTHS
        .iter()
        .copied()
        .find(|&w| w >= bits.max(1))
        .unwrap_or(64)
}

/// An integer stream, decoded run by run.
#[derive(Debug)]
pub struct IntRle {
    cursor: Cursor,
    version: RleVersion,
    sign: Sign,
    /// The current run's values; those before `head` are taken.
    run: Vec<i64>,
    head: usize,
    /// A patched base run's patch list (kept for its capacity).
    patches: Vec<i64>,
}

impl IntRle {
    /// The integer stream `bytes` in `version`, `sign`ed or not.
    pub fn new(bytes: Vec<u8>, version: RleVersion, sign: Sign) -> Self {
        Self {
            cursor: Cursor::new(bytes),
            version,
            sign,
            run: Vec::with_capacity(512),
            head: 0,
            patches: Vec::new(),
        }
    }

    /// Appends the next `n` values to `out`.
    pub fn decode(&mut self, n: usize, out: &mut Vec<i64>) -> Decoded<()> {
        // `n` may be a file's word (a dictionary's size): runs bound what is allocated.
        out.reserve(n.min(1 << 16));
        let mut left = n;
        loop {
            let take = left.min(self.run.len() - self.head);
            out.extend_from_slice(&self.run[self.head..self.head + take]);
            self.head += take;
            left -= take;
            if left == 0 {
                return Ok(());
            }
            self.next_run()?;
        }
    }

    /// Steps over the next `n` values.
    pub fn skip(&mut self, n: usize) -> Decoded<()> {
        let buffered = n.min(self.run.len() - self.head);
        self.head += buffered;
        let mut left = n - buffered;
        while left > 0 {
            match self.skip_run(left)? {
                Some(skipped) => left -= skipped,
                None => {
                    self.next_run()?;
                    let take = left.min(self.run.len());
                    self.head = take;
                    left -= take;
                }
            }
        }
        Ok(())
    }

    /// Steps over the next run whole when it has at most `limit` values and its values
    /// need not be decoded to find its end: how many it had (`None`: nothing was read).
    fn skip_run(&mut self, limit: usize) -> Decoded<Option<usize>> {
        let Some(&header) = self.cursor.bytes.get(self.cursor.at) else {
            return Err(ENDED);
        };
        match self.version {
            RleVersion::V1 => {
                let header = header as i8;
                if header < 0 {
                    let length = header.unsigned_abs() as usize;
                    if length > limit {
                        return Ok(None);
                    }
                    self.cursor.at += 1;
                    self.cursor.skip_varints(length)?;
                    Ok(Some(length))
                } else {
                    let length = header as usize + 3;
                    if length > limit {
                        return Ok(None);
                    }
                    self.cursor.at += 1;
                    self.cursor.byte()?;
                    self.cursor.skip_varints(1)?;
                    Ok(Some(length))
                }
            }
            RleVersion::V2 => match header >> 6 {
                0 => {
                    let width = ((header >> 3) & 0x07) as usize + 1;
                    let length = (header & 0x07) as usize + 3;
                    if length > limit {
                        return Ok(None);
                    }
                    self.cursor.take(1 + width)?;
                    Ok(Some(length))
                }
                1 => {
                    let second = *self.cursor.bytes.get(self.cursor.at + 1).ok_or(ENDED)?;
                    let width = WIDTHS[((header >> 1) & 0x1f) as usize] as usize;
                    let length = ((usize::from(header & 1) << 8) | usize::from(second)) + 1;
                    if length > limit {
                        return Ok(None);
                    }
                    self.cursor.take(2 + (width * length).div_ceil(8))?;
                    Ok(Some(length))
                }
                _ => Ok(None),
            },
        }
    }

    /// Decodes the next run into `run`.
    fn next_run(&mut self) -> Decoded<()> {
        self.run.clear();
        self.head = 0;
        match self.version {
            RleVersion::V1 => self.next_run_v1(),
            RleVersion::V2 => self.next_run_v2(),
        }
    }

    /// The next varint, zigzag decoded when the stream is signed.
    #[inline]
    fn varint(&mut self) -> Decoded<i64> {
        let v = self.cursor.varint()?;
        Ok(match self.sign {
            Sign::Signed => unzigzag(v),
            Sign::Unsigned => v as i64,
        })
    }

    fn next_run_v1(&mut self) -> Decoded<()> {
        let header = self.cursor.byte()? as i8;
        if header < 0 {
            for _ in 0..header.unsigned_abs() {
                let v = self.varint()?;
                self.run.push(v);
            }
        } else {
            let length = header as usize + 3;
            let delta = i64::from(self.cursor.byte()? as i8);
            let base = self.varint()?;
            self.run
                .extend((0..length as i64).map(|i| base.wrapping_add(delta.wrapping_mul(i))));
        }
        Ok(())
    }

    fn next_run_v2(&mut self) -> Decoded<()> {
        let header = self.cursor.byte()?;
        match header >> 6 {
            0 => self.short_repeat(header),
            1 => self.direct(header),
            2 => self.patched_base(header),
            _ => self.delta(header),
        }
    }

    /// `v` as the stream's sign reads it.
    #[inline]
    fn signed(&self, v: i64) -> i64 {
        match self.sign {
            Sign::Signed => unzigzag(v as u64),
            Sign::Unsigned => v,
        }
    }

    fn short_repeat(&mut self, header: u8) -> Decoded<()> {
        let width = ((header >> 3) & 0x07) as usize + 1;
        let length = (header & 0x07) as usize + 3;
        let value = self
            .cursor
            .take(width)?
            .iter()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b));
        let value = self.signed(value as i64);
        self.run.extend(std::iter::repeat_n(value, length));
        Ok(())
    }

    /// The run length of a direct, patched base or delta header.
    fn length(&mut self, header: u8) -> Decoded<usize> {
        let second = self.cursor.byte()?;
        Ok(((usize::from(header & 1) << 8) | usize::from(second)) + 1)
    }

    fn direct(&mut self, header: u8) -> Decoded<()> {
        let width = WIDTHS[((header >> 1) & 0x1f) as usize];
        let length = self.length(header)?;
        self.cursor.unpack(width, length, &mut self.run)?;
        if self.sign == Sign::Signed {
            for v in &mut self.run {
                *v = unzigzag(*v as u64);
            }
        }
        Ok(())
    }

    fn patched_base(&mut self, header: u8) -> Decoded<()> {
        let width = WIDTHS[((header >> 1) & 0x1f) as usize];
        let length = self.length(header)?;
        let third = self.cursor.byte()?;
        let fourth = self.cursor.byte()?;
        let base_bytes = usize::from(third >> 5) + 1;
        let patch_width = WIDTHS[(third & 0x1f) as usize];
        let gap_width = u32::from(fourth >> 5) + 1;
        let patches = usize::from(fourth & 0x1f);
        if patch_width + gap_width > 64 {
            return Err(Corrupt(
                "a patched base run's patches are wider than 64 bits",
            ));
        }
        // The base is big-endian, its most significant bit the sign.
        let raw = self
            .cursor
            .take(base_bytes)?
            .iter()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b));
        let sign_bit = 1u64 << (base_bytes * 8 - 1);
        let base = match raw & sign_bit {
            0 => raw as i64,
            _ => -((raw & !sign_bit) as i64),
        };
        self.cursor.unpack(width, length, &mut self.run)?;
        let mut list = std::mem::take(&mut self.patches);
        list.clear();
        let entry_width = closest_fixed_width(patch_width + gap_width);
        self.cursor.unpack(entry_width, patches, &mut list)?;
        let patch_mask = match patch_width {
            64 => u64::MAX,
            w => (1u64 << w) - 1,
        };
        let split = |entry: i64| {
            let entry = entry as u64;
            let gap = entry.checked_shr(patch_width).unwrap_or(0) as usize;
            (gap, entry & patch_mask)
        };
        let mut entries = list.iter().copied().map(split);
        // The next patched position: gaps of 255 with a zero patch only add to the gap.
        let mut next_patch = |from: usize| -> Decoded<Option<(usize, u64)>> {
            let mut at = from;
            for (gap, patch) in entries.by_ref() {
                at = at.saturating_add(gap);
                if gap == 255 && patch == 0 {
                    continue;
                }
                return Ok(Some((at, patch)));
            }
            match at == from {
                true => Ok(None),
                false => Err(Corrupt("a patched base run's patch list ends in a gap")),
            }
        };
        let mut patch = next_patch(0)?;
        for (i, v) in self.run.iter_mut().enumerate() {
            let mut value = *v as u64;
            if let Some((at, bits)) = patch
                && at == i
            {
                value |= bits.checked_shl(width).unwrap_or(0);
                patch = next_patch(i)?;
            }
            *v = base.wrapping_add(value as i64);
        }
        // Patches past the run's end are ignored, as the Java reader ignores them.
        self.patches = list;
        Ok(())
    }

    fn delta(&mut self, header: u8) -> Decoded<()> {
        let code = (header >> 1) & 0x1f;
        let length = self.length(header)?;
        let base = self.varint()?;
        let delta = unzigzag(self.cursor.varint()?);
        self.run.push(base);
        if code == 0 {
            let mut v = base;
            for _ in 1..length {
                v = v.wrapping_add(delta);
                self.run.push(v);
            }
            return Ok(());
        }
        if length < 2 {
            return Err(Corrupt("a delta run with deltas holds fewer than 2 values"));
        }
        let mut v = base.wrapping_add(delta);
        self.run.push(v);
        let from = self.run.len();
        self.cursor
            .unpack(WIDTHS[code as usize], length - 2, &mut self.run)?;
        for d in &mut self.run[from..] {
            v = match delta < 0 {
                true => v.wrapping_sub(*d),
                false => v.wrapping_add(*d),
            };
            *d = v;
        }
        Ok(())
    }
}

/// A byte stream (byte RLE), decoded run by run.
#[derive(Debug, Default)]
pub struct ByteRle {
    cursor: Cursor,
    run: Vec<u8>,
    head: usize,
}

impl ByteRle {
    /// The byte stream `bytes`.
    pub fn new(bytes: Vec<u8>) -> Self {
        Self {
            cursor: Cursor::new(bytes),
            run: Vec::with_capacity(130),
            head: 0,
        }
    }

    /// The next byte.
    #[inline]
    pub fn next_byte(&mut self) -> Decoded<u8> {
        if self.head == self.run.len() {
            self.next_run()?;
        }
        let b = self.run[self.head];
        self.head += 1;
        Ok(b)
    }

    /// Steps over the next `n` bytes.
    pub fn skip(&mut self, n: usize) -> Decoded<()> {
        let mut left = n;
        while left > 0 {
            if self.head == self.run.len() {
                self.next_run()?;
            }
            let take = left.min(self.run.len() - self.head);
            self.head += take;
            left -= take;
        }
        Ok(())
    }

    fn next_run(&mut self) -> Decoded<()> {
        self.run.clear();
        self.head = 0;
        let header = self.cursor.byte()? as i8;
        if header < 0 {
            let bytes = self.cursor.take(header.unsigned_abs() as usize)?;
            self.run.extend_from_slice(bytes);
        } else {
            let b = self.cursor.byte()?;
            self.run.extend(std::iter::repeat_n(b, header as usize + 3));
        }
        Ok(())
    }
}

/// A boolean stream (a present stream): byte RLE of 8 values a byte, most significant bit
/// first.
#[derive(Debug, Default)]
pub struct BoolRle {
    bytes: ByteRle,
    current: u8,
    /// Values of `current` not yet taken (its low bits).
    left: u32,
}

impl BoolRle {
    /// The boolean stream `bytes`.
    pub fn new(bytes: Vec<u8>) -> Self {
        Self {
            bytes: ByteRle::new(bytes),
            current: 0,
            left: 0,
        }
    }

    /// Appends the next `n` values to `out`.
    pub fn decode(
        &mut self,
        n: usize,
        out: &mut arrow::array::BooleanBufferBuilder,
    ) -> Decoded<()> {
        let mut left = n;
        while left > 0 {
            if self.left == 0 {
                // Whole bytes at once where the stream is byte-aligned.
                while left >= 8 {
                    // Arrow's bits are least significant first.
                    let b = self.bytes.next_byte()?.reverse_bits();
                    out.append_packed_range(0..8, &[b]);
                    left -= 8;
                }
                if left == 0 {
                    break;
                }
                self.current = self.bytes.next_byte()?;
                self.left = 8;
            }
            self.left -= 1;
            out.append(self.current & (1 << self.left) != 0);
            left -= 1;
        }
        Ok(())
    }

    /// Steps over the next `n` values, returning how many were true.
    pub fn skip(&mut self, n: usize) -> Decoded<usize> {
        let mut set = 0;
        let mut left = n;
        while left > 0 && self.left > 0 {
            self.left -= 1;
            set += usize::from(self.current & (1 << self.left) != 0);
            left -= 1;
        }
        while left >= 8 {
            set += self.bytes.next_byte()?.count_ones() as usize;
            left -= 8;
        }
        if left > 0 {
            self.current = self.bytes.next_byte()?;
            self.left = 8;
            while left > 0 {
                self.left -= 1;
                set += usize::from(self.current & (1 << self.left) != 0);
                left -= 1;
            }
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests;
