//! The ORC specification's examples of each encoding, and runs decoded across window
//! boundaries and skipped.

use arrow::array::BooleanBufferBuilder;

use super::*;

fn ints(bytes: &[u8], version: RleVersion, sign: Sign, n: usize) -> Vec<i64> {
    let mut rle = IntRle::new(bytes.to_vec(), version, sign);
    let mut out = Vec::new();
    rle.decode(n, &mut out).unwrap();
    out
}

#[test]
fn v2_short_repeat() {
    let out = ints(&[0x0a, 0x27, 0x10], RleVersion::V2, Sign::Unsigned, 5);
    assert_eq!(out, vec![10000; 5]);
}

#[test]
fn v2_direct() {
    let bytes = [0x5e, 0x03, 0x5c, 0xa1, 0xab, 0x1e, 0xde, 0xad, 0xbe, 0xef];
    let out = ints(&bytes, RleVersion::V2, Sign::Unsigned, 4);
    assert_eq!(out, vec![23713, 43806, 57005, 48879]);
}

#[test]
fn v2_patched_base() {
    let bytes = [
        0x8e, 0x13, 0x2b, 0x21, 0x07, 0xd0, 0x1e, 0x00, 0x14, 0x70, 0x28, 0x32, 0x3c, 0x46, 0x50,
        0x5a, 0x64, 0x6e, 0x78, 0x82, 0x8c, 0x96, 0xa0, 0xaa, 0xb4, 0xbe, 0xfc, 0xe8,
    ];
    let out = ints(&bytes, RleVersion::V2, Sign::Unsigned, 20);
    let mut expected = vec![2030, 2000, 2020, 1_000_000];
    expected.extend((2040..=2190).step_by(10));
    assert_eq!(out, expected);
}

#[test]
fn v2_delta() {
    let bytes = [0xc6, 0x09, 0x02, 0x02, 0x22, 0x42, 0x42, 0x46];
    let out = ints(&bytes, RleVersion::V2, Sign::Unsigned, 10);
    assert_eq!(out, vec![2, 3, 5, 7, 11, 13, 17, 19, 23, 29]);
}

#[test]
fn v2_fixed_delta_signed_descending() {
    // Delta, width code 0, 5 values, base zigzag(10) = 20, delta zigzag(-3) = 5.
    let out = ints(&[0xc0, 0x04, 20, 5], RleVersion::V2, Sign::Signed, 5);
    assert_eq!(out, vec![10, 7, 4, 1, -2]);
}

#[test]
fn v2_direct_signed_is_zigzag() {
    // Direct, width 8 (code 7), 3 values: zigzag 1, 2, 255 → -1, 1, -128.
    let out = ints(&[0x4e, 0x02, 1, 2, 255], RleVersion::V2, Sign::Signed, 3);
    assert_eq!(out, vec![-1, 1, -128]);
}

#[test]
fn v1_runs_and_literals() {
    // 100 sevens; 100 values from 100 down by 1; literals 2, 3, 6, 7, 11.
    let bytes = [
        0x61, 0x00, 0x07, 0x61, 0xff, 0x64, 0xfb, 0x02, 0x03, 0x06, 0x07, 0x0b,
    ];
    let out = ints(&bytes, RleVersion::V1, Sign::Unsigned, 205);
    let mut expected = vec![7; 100];
    expected.extend((1..=100).rev());
    expected.extend([2, 3, 6, 7, 11]);
    assert_eq!(out, expected);
}

#[test]
fn windows_cross_runs_and_skips_step_over_them() {
    let bytes = [
        0x61, 0x00, 0x07, 0x61, 0xff, 0x64, 0xfb, 0x02, 0x03, 0x06, 0x07, 0x0b,
    ];
    let mut all = vec![7; 100];
    all.extend((1..=100).rev());
    all.extend([2, 3, 6, 7, 11]);
    for step in [1, 3, 7, 64, 99, 100, 101, 205] {
        let mut rle = IntRle::new(bytes.to_vec(), RleVersion::V1, Sign::Unsigned);
        let (mut got, mut at, mut skip) = (Vec::new(), 0, false);
        while at < all.len() {
            let n = step.min(all.len() - at);
            if skip {
                rle.skip(n).unwrap();
            } else {
                let mut out = Vec::new();
                rle.decode(n, &mut out).unwrap();
                got.push((at, out));
            }
            skip = !skip;
            at += n;
        }
        for (at, out) in got {
            assert_eq!(out, all[at..at + out.len()], "step {step} at {at}");
        }
    }
}

#[test]
fn a_stream_ending_inside_a_run_is_corrupt() {
    let mut rle = IntRle::new(vec![0x5e, 0x03, 0x5c], RleVersion::V2, Sign::Unsigned);
    assert_eq!(rle.decode(4, &mut Vec::new()), Err(ENDED));
    let mut rle = IntRle::new(vec![0xfb, 0x02], RleVersion::V1, Sign::Unsigned);
    assert!(rle.skip(5).is_err());
    let mut rle = IntRle::new(vec![], RleVersion::V1, Sign::Signed);
    assert!(rle.decode(1, &mut Vec::new()).is_err());
}

#[test]
fn bytes_and_booleans() {
    let mut bytes = ByteRle::new(vec![0x61, 0x00, 0xfe, 0x44, 0x45]);
    bytes.skip(99).unwrap();
    assert_eq!(
        [bytes.next_byte(), bytes.next_byte(), bytes.next_byte()],
        [Ok(0), Ok(0x44), Ok(0x45)]
    );
    // A literal byte 0x80 (true, then seven false), then a run of three 0xa5.
    let stream = vec![0xff, 0x80, 0x00, 0xa5];
    let expected: Vec<bool> = [0x80u8, 0xa5, 0xa5, 0xa5]
        .iter()
        .flat_map(|b| (0..8).rev().map(move |k| b & (1 << k) != 0))
        .collect();
    for split in [1, 5, 8, 13, 32] {
        let mut bools = BoolRle::new(stream.clone());
        let mut out = BooleanBufferBuilder::new(32);
        bools.decode(split, &mut out).unwrap();
        let set = bools.skip(3.min(32 - split)).unwrap();
        let skipped = &expected[split..split + 3.min(32 - split)];
        assert_eq!(set, skipped.iter().filter(|b| **b).count());
        let rest = 32 - split - skipped.len();
        bools.decode(rest, &mut out).unwrap();
        let got: Vec<bool> = out.finish().iter().collect();
        let mut want = expected[..split].to_vec();
        want.extend_from_slice(&expected[split + skipped.len()..]);
        assert_eq!(got, want, "split {split}");
    }
}

#[test]
fn varints_of_128_bits() {
    let mut cursor = Cursor::new(vec![0x80, 0x80, 0x01, 0x03]);
    assert_eq!(cursor.varint_128(), Ok(1 << 14));
    assert_eq!(unzigzag_128(cursor.varint_128().unwrap()), -2);
    let mut cursor = Cursor::new(vec![0x81, 0x00, 0x05, 0xff]);
    cursor.skip_varints(2).unwrap();
    assert!(cursor.skip_varints(1).is_err());
}

/// Random bytes never panic a decoder: each call decodes or says the stream is corrupt.
#[test]
fn random_bytes_are_values_or_errors() {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..20_000 {
        let len = rng.random_range(0..80);
        let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let version = [RleVersion::V1, RleVersion::V2][rng.random_range(0..2)];
        let sign = [Sign::Signed, Sign::Unsigned][rng.random_range(0..2)];
        let mut ints = IntRle::new(bytes.clone(), version, sign);
        let mut bools = BoolRle::new(bytes.clone());
        let mut cursor = Cursor::new(bytes);
        let mut out = Vec::new();
        let mut bits = BooleanBufferBuilder::new(0);
        for _ in 0..4 {
            let n = rng.random_range(0..600);
            let _ = match rng.random_range(0..2) {
                0 => ints.decode(n, &mut out),
                _ => ints.skip(n),
            };
            let _ = match rng.random_range(0..2) {
                0 => bools.decode(n, &mut bits),
                _ => bools.skip(n).map(|_| ()),
            };
            let _ = cursor.varint_128();
            let _ = cursor.skip_varints(n % 5);
        }
    }
}
