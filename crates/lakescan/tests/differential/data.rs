//! The generated table: [`DataFile`]s (partition, row groups, writer settings, [`Layout`])
//! and their rows. Each file covers its own value ranges and may be sorted by one column, so
//! min/max statistics, page indexes and partition values prune; NULLs, boundary values and
//! duplicates are common so equality, IN and range predicates hit.

use parquet::file::properties::EnabledStatistics;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

use crate::layout::{Layout, draw_layouts, fit};
use crate::table::{DAY0, Pair, Row, TS0};

/// One Parquet file: its partition, name, row groups, writer settings and stored schema.
#[derive(Clone, Debug)]
pub struct DataFile {
    pub partition: Option<i64>,
    pub name: String,
    pub row_groups: Vec<Vec<Row>>,
    pub statistics: EnabledStatistics,
    pub dictionary: bool,
    pub layout: Layout,
}

impl DataFile {
    /// The partition directory, `p=<v>` or the default partition.
    pub fn dir(&self) -> String {
        match self.partition {
            Some(p) => format!("p={p}"),
            None => "p=__HIVE_DEFAULT_PARTITION__".to_string(),
        }
    }
}

/// The float values used in the data: specials included so equality and order hit them.
const FLOATS: [f64; 12] = [
    -2.5,
    -1.0,
    -0.0,
    0.0,
    0.5,
    1.0,
    2.5,
    3.0,
    // The first integer whose successor FLOAT cannot hold.
    16_777_216.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
];
/// The REAL values: the specials, the extremes, and 0.1 (not exact in either width).
const REALS: [f32; 15] = [
    -2.5,
    -1.0,
    -0.0,
    0.0,
    0.1,
    0.5,
    1.0,
    16_777_216.0,
    3.0e10,
    f32::MAX,
    f32::MIN,
    f32::MIN_POSITIVE,
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
];
/// The string alphabet: empty string, prefixes, upper case, non-ASCII, a space.
pub const STRINGS: [&str; 11] = ["", "a", "ab", "abc", "b", "ba", "B", "c", "zz", "é", "a b"];
/// The binary alphabet: empty, zero bytes, prefixes, bytes above 0x7f (unsigned order).
pub const BINARIES: [&[u8]; 12] = [
    b"",
    b"\x00",
    b"\x00\x00",
    b"\x00\x01",
    b"a",
    b"ab",
    b"abc",
    b"\x7f",
    b"\x80",
    b"\xc3\xa9",
    b"\xff",
    b"\xff\xff",
];
/// DECIMAL(10, 2) and DECIMAL(20, 4) extremes, unscaled.
const DC_MAX: i128 = 9_999_999_999;
const DW_MAX: i128 = 99_999_999_999_999_999_999;

fn maybe<T>(rng: &mut StdRng, null_chance: f64, value: impl FnOnce(&mut StdRng) -> T) -> Option<T> {
    (!rng.random_bool(null_chance)).then(|| value(rng))
}

fn pick<T: Copy>(rng: &mut StdRng, options: &[T]) -> T {
    *options.choose(rng).unwrap()
}

/// Generates the rows of file number `g` (0, 1, …): each file covers its own value ranges.
fn gen_row(rng: &mut StdRng, g: usize) -> Row {
    let g64 = g as i64;
    Row {
        i: maybe(rng, 0.12, |rng| {
            let (lo, hi) = [(-5, 5), (0, 5), (-5, -1), (-2, 2)][g % 4];
            rng.random_range(lo..=hi)
        }),
        l: maybe(rng, 0.08, |rng| g64 * 10 + rng.random_range(-20..=20)),
        f: maybe(rng, 0.1, |rng| gen_float(rng, g)),
        s: maybe(rng, 0.1, |rng| gen_string(rng, g)),
        d: maybe(rng, 0.08, |rng| {
            if rng.random_bool(0.03) {
                -rng.random_range(1..=400)
            } else {
                DAY0 + g as i32 * 4 + rng.random_range(0..=10)
            }
        }),
        ts: maybe(rng, 0.08, |rng| {
            let minutes = g64 * 45 + rng.random_range(0..=90);
            TS0 + minutes * 60_000_000 + pick(rng, &[0, 0, 500_000, 123_456])
        }),
        b: maybe(rng, 0.1, |rng| match g % 3 {
            0 => rng.random_bool(0.5),
            1 => true,
            _ => rng.random_bool(0.15),
        }),
        dc: maybe(rng, 0.1, |rng| {
            if rng.random_bool(0.05) {
                return pick(rng, &[DC_MAX, -DC_MAX, 1, -1, 0]);
            }
            g as i128 * 100 + 25 * rng.random_range(-12..=12)
        }),
        dw: maybe(rng, 0.1, |rng| {
            if rng.random_bool(0.05) {
                return pick(rng, &[DW_MAX, -DW_MAX, 1, -1, 0]);
            }
            (g as i128 - 4) * 1_000_000 + 1234 * rng.random_range(-5..=5)
        }),
        r: maybe(rng, 0.1, |rng| gen_real(rng, g)),
        t8: maybe(rng, 0.1, |rng| match g % 3 {
            0 => pick(rng, &[i8::MIN, i8::MIN, -127, -120]),
            1 => rng.random_range(-3..=3),
            _ => pick(rng, &[i8::MAX, i8::MAX, 126, 100]),
        }),
        t16: maybe(rng, 0.1, |rng| match g % 3 {
            0 => pick(rng, &[i16::MIN, i16::MIN, -32_000, -200]),
            1 => rng.random_range(-3..=3),
            _ => pick(rng, &[i16::MAX, i16::MAX, 32_000, 200, 255]),
        }),
        bn: maybe(rng, 0.1, |rng| {
            let set: &[&[u8]] = match g % 3 {
                0 => &BINARIES,
                1 => &BINARIES[..7],
                _ => &BINARIES[6..],
            };
            pick(rng, set).to_vec()
        }),
        tz: maybe(rng, 0.08, |rng| {
            if rng.random_bool(0.04) {
                return pick(rng, &[0, -1, -31_536_000_000_000, TS0]);
            }
            let minutes = g64 * 30 + rng.random_range(0..=60);
            TS0 + minutes * 60_000_000 + pick(rng, &[0, 0, 250_000, 999_999])
        }),
        st: maybe(rng, 0.08, |rng| Pair {
            x: maybe(rng, 0.1, |rng| g64 * 3 + rng.random_range(-3..=3)),
            y: maybe(rng, 0.1, |rng| gen_string(rng, g + 1)),
        }),
        ..Row::default()
    }
}

fn gen_float(rng: &mut StdRng, g: usize) -> f64 {
    if rng.random_bool(0.1) {
        return f64::from(rng.random_range(-40..=40)) / 4.0;
    }
    let set: &[f64] = match g % 4 {
        0 => &FLOATS,
        1 => &[0.0, 0.5, 1.0, 2.5, f64::NAN],
        2 => &[-0.0, 0.0, -1.0, -2.5, f64::NEG_INFINITY],
        _ => &[1.0, 2.5, 3.0, 16_777_216.0, f64::INFINITY, f64::NAN],
    };
    pick(rng, set)
}

fn gen_real(rng: &mut StdRng, g: usize) -> f32 {
    let set: &[f32] = match g % 4 {
        0 => &REALS,
        1 => &[0.0, 0.1, 0.5, 1.0, f32::NAN],
        2 => &[-0.0, 0.0, -1.0, -2.5, f32::NEG_INFINITY, f32::MIN],
        _ => &[
            1.0,
            3.0e10,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
        ],
    };
    pick(rng, set)
}

fn gen_string(rng: &mut StdRng, g: usize) -> String {
    let set: &[&str] = match g % 3 {
        0 => &STRINGS,
        1 => &STRINGS[..5],
        _ => &STRINGS[4..],
    };
    pick(rng, set).to_string()
}

/// Sorts a file's rows by one column (NULLs first), so row groups and pages get narrow
/// min/max ranges on it; modes past the last column keep them unsorted.
fn sort_rows(rows: &mut [Row], mode: usize) {
    let float = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (x, y) => x.is_some().cmp(&y.is_some()),
    };
    match mode {
        0 => rows.sort_by_key(|r| r.i),
        1 => rows.sort_by(|a, b| float(a.f, b.f)),
        2 => rows.sort_by(|a, b| a.s.cmp(&b.s)),
        3 => rows.sort_by_key(|r| (r.d, r.ts)),
        4 => rows.sort_by_key(|r| r.l),
        5 => rows.sort_by_key(|r| r.b),
        6 => rows.sort_by_key(|r| r.dc),
        7 => rows.sort_by_key(|r| r.t16),
        8 => rows.sort_by(|a, b| a.bn.cmp(&b.bn)),
        9 => rows.sort_by_key(|r| r.tz),
        10 => rows.sort_by_key(|r| r.st.as_ref().map(|st| st.x)),
        11 => rows.sort_by(|a, b| float(a.r.map(f64::from), b.r.map(f64::from))),
        _ => {}
    }
}

/// The generated table: partitions -1, 2, 10 and the NULL partition, 2–3 files each, row
/// groups of 10–60 rows, an empty file, writer settings (statistics, dictionary) and stored
/// schemas ([`Layout`]) varied per file.
pub fn generate(seed: u64) -> Vec<DataFile> {
    let mut rng = StdRng::seed_from_u64(seed);
    // (partition, file number in the partition, rows)
    let mut plan = vec![];
    for partition in [Some(-1), Some(2), Some(10), None] {
        let n_files = if partition == Some(10) {
            3
        } else {
            rng.random_range(2..=3)
        };
        for n in 0..n_files {
            // The last file of p=10 has no row group at all.
            let empty = partition == Some(10) && n + 1 == n_files;
            let n_rows = if empty || rng.random_bool(0.03) {
                0
            } else {
                rng.random_range(20..=110)
            };
            plan.push((partition, n, n_rows));
        }
    }
    let with_rows: Vec<bool> = plan.iter().map(|&(_, _, n)| n > 0).collect();
    let layouts = draw_layouts(&mut rng, &with_rows);
    let mut files = vec![];
    let mut next_id = 0i64;
    for (g, ((partition, n, n_rows), layout)) in plan.into_iter().zip(layouts).enumerate() {
        let mut rows: Vec<Row> = (0..n_rows).map(|_| gen_row(&mut rng, g)).collect();
        for r in &mut rows {
            fit(r, &layout, &mut rng);
        }
        sort_rows(&mut rows, rng.random_range(0..14));
        for r in &mut rows {
            r.id = next_id;
            r.p = partition;
            next_id += 1;
        }
        let mut row_groups = vec![];
        let mut rest = rows.as_slice();
        while !rest.is_empty() {
            let k = rng.random_range(10..=60).min(rest.len());
            row_groups.push(rest[..k].to_vec());
            rest = &rest[k..];
        }
        let statistics = match rng.random_range(0..10) {
            0 => EnabledStatistics::None,
            1 => EnabledStatistics::Chunk,
            _ => EnabledStatistics::Page,
        };
        files.push(DataFile {
            partition,
            name: format!("part-{n}.parquet"),
            row_groups,
            statistics,
            dictionary: rng.random_bool(0.5),
            layout,
        });
    }
    files
}
