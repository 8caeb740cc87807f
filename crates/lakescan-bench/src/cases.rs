//! The benchmark cases: one SQL text run unchanged by every engine, plus what the raw
//! parquet floor decodes for it.
//!
//! Tables (the same files for every engine):
//!
//! | table           | files                                                        |
//! |-----------------|--------------------------------------------------------------|
//! | `lineitem`      | `flat/lineitem/*.parquet` as written by `tpchgen-cli`         |
//! | `orders`        | `flat/orders/*.parquet`                                       |
//! | `lineitem_hive` | `hive/lineitem/l_shipyear=YYYY/*.parquet` (partitioned by ship year) |
//! | `orders_bucketed` | `bucketed/orders/00000B_0.parquet`: 8 Hive buckets of `o_custkey` (lakescan knows the bucketing; the peers read plain Parquet) |
//! | `lineitem_struct` | `nested/lineitem_struct/*.parquet`: `l_orderkey`, `s` = a struct of 20 members |
//! | `small`         | `small/p=P/fF.parquet`: 2 000 files of 400 rows (`k`, `x`) in 40 partitions `p` (the same at every scale) |
//! | `lineitem_orc`  | `orc/lineitem/*.orc`: `flat/lineitem` as ORC, row groups as stripes (`orc_*` cases) |
//! | `lineitem_ice`, `lineitem_ice_pos`, `lineitem_ice_dv`, `lineitem_ice_eq` | Iceberg tables over `flat/lineitem` with no deletes, position deletes, deletion vectors, equality deletes (`crate::iceberg_tables`) |

/// Which table directory a floor scan reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableDir {
    /// `flat/lineitem`
    Lineitem,
    /// `flat/orders`
    Orders,
    /// `hive/lineitem`
    LineitemHive,
    /// `bucketed/orders`
    BucketedOrders,
    /// `nested/lineitem_struct`
    StructLineitem,
    /// `small`
    SmallFiles,
}

/// What the raw parquet floor decodes for one table of a case: `columns` of every row
/// group that min/max statistics cannot exclude under `predicate` (DataFusion's
/// `PruningPredicate` over the row-group statistics), without evaluating any filter.
#[derive(Debug, Clone)]
pub struct FloorScan {
    /// The table's directory.
    pub table: TableDir,
    /// Only these partition directories (Hive layout), e.g. `l_shipyear=1995`.
    pub partitions: Option<Vec<String>>,
    /// Columns decoded; `s.member` decodes the leaves of one struct member.
    pub columns: Vec<&'static str>,
    /// Predicate (SQL over the file columns) used to prune row groups.
    pub predicate: Option<String>,
}

/// One benchmark case.
#[derive(Debug, Clone)]
pub struct Case {
    /// Short name used in the table and the JSON.
    pub name: &'static str,
    /// What it measures.
    pub description: &'static str,
    /// The query every engine runs.
    pub sql: String,
    /// What the raw parquet floor decodes.
    pub floor: Vec<FloorScan>,
    /// Over the Iceberg copies of lineitem: run by lakescan and the Iceberg peers
    /// (`duckdb-iceberg`, `iceberg-datafusion`) instead of the Parquet engines.
    pub iceberg: bool,
    /// Over the ORC copy of lineitem (`lineitem_orc`): run by lakescan and `datafusion-orc`.
    pub orc: bool,
}

const ALL_LINEITEM: [&str; 16] = [
    "l_orderkey",
    "l_partkey",
    "l_suppkey",
    "l_linenumber",
    "l_quantity",
    "l_extendedprice",
    "l_discount",
    "l_tax",
    "l_returnflag",
    "l_linestatus",
    "l_shipdate",
    "l_commitdate",
    "l_receiptdate",
    "l_shipinstruct",
    "l_shipmode",
    "l_comment",
];

fn flat(columns: &[&'static str], predicate: Option<&str>) -> FloorScan {
    FloorScan {
        table: TableDir::Lineitem,
        partitions: None,
        columns: columns.to_vec(),
        predicate: predicate.map(str::to_string),
    }
}

/// An existing order key in the middle of `orders` at `scale` (TPC-H order keys use the
/// first 8 of every 32 values).
fn middle_order_key(scale: f64) -> u64 {
    let orders = (1_500_000.0 * scale).round() as u64;
    (orders / 2 / 8) * 32 + 1
}

/// A customer key with orders at `scale` (TPC-H customers whose key is a multiple of 3 have
/// none).
fn customer_key(scale: f64) -> u64 {
    let key = ((150_000.0 * scale) / 2.0).round() as u64;
    if key.is_multiple_of(3) { key + 1 } else { key }
}

const ALL_ORDERS: [&str; 9] = [
    "o_orderkey",
    "o_custkey",
    "o_orderstatus",
    "o_totalprice",
    "o_orderdate",
    "o_orderpriority",
    "o_clerk",
    "o_shippriority",
    "o_comment",
];

/// The cases at `scale`, in the order they run. Key constants scale with the data so each
/// case keeps its selectivity (about 1 % of rows for `selective` and `or_prune`).
pub fn all(scale: f64) -> Vec<Case> {
    all_parquet(scale)
        .into_iter()
        .chain(iceberg_cases(scale))
        .chain(orc_cases(scale))
        .collect()
}

/// The cases over Parquet files.
fn all_parquet(scale: f64) -> Vec<Case> {
    let point = middle_order_key(scale);
    let point_predicate = format!("l_orderkey = {point}");
    let early_keys = ((60_000.0 * scale).round() as u64).max(1);
    let or_predicate = format!("l_orderkey < {early_keys} OR l_shipdate < DATE '1992-01-02'");
    let selective = "l_shipdate >= DATE '1995-03-01' AND l_shipdate < DATE '1995-03-26'";
    let q6_floor = "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
                    AND l_discount >= 0.05 AND l_discount <= 0.07 AND l_quantity < 24";
    let week = "o_orderdate >= DATE '1995-03-01' AND o_orderdate < DATE '1995-03-08'";
    let customer = format!("o_custkey = {}", customer_key(scale));
    let nested = |columns: &[&'static str]| FloorScan {
        table: TableDir::StructLineitem,
        partitions: None,
        columns: columns.to_vec(),
        predicate: None,
    };
    vec![
        Case {
            name: "full_scan",
            iceberg: false,
            orc: false,
            description: "all 16 columns of lineitem, no filter",
            sql: "SELECT * FROM lineitem".to_string(),
            floor: vec![flat(&ALL_LINEITEM, None)],
        },
        Case {
            name: "selective",
            iceberg: false,
            orc: false,
            description: "l_shipdate range (~1 % of rows), 4 columns",
            sql: format!(
                "SELECT l_orderkey, l_partkey, l_extendedprice, l_shipdate FROM lineitem \
                 WHERE {selective}"
            ),
            floor: vec![flat(
                &["l_orderkey", "l_partkey", "l_extendedprice", "l_shipdate"],
                Some(selective),
            )],
        },
        Case {
            name: "or_prune",
            iceberg: false,
            orc: false,
            description: "OR across two columns, both prunable by min/max: \
                          early order keys (~1 % of rows) or a ship date before the data starts",
            sql: format!(
                "SELECT l_orderkey, l_linenumber, l_quantity, l_shipdate FROM lineitem \
                 WHERE {or_predicate}"
            ),
            floor: vec![flat(
                &["l_orderkey", "l_linenumber", "l_quantity", "l_shipdate"],
                Some(&or_predicate),
            )],
        },
        Case {
            name: "point_lookup",
            iceberg: false,
            orc: false,
            description: "one order's line items by l_orderkey, all columns",
            sql: format!("SELECT * FROM lineitem WHERE {point_predicate}"),
            floor: vec![flat(&ALL_LINEITEM, Some(&point_predicate))],
        },
        Case {
            name: "count_partition",
            iceberg: false,
            orc: false,
            description: "count(*) of two ship years of the Hive layout (partition filter only)",
            sql: "SELECT count(*) FROM lineitem_hive WHERE l_shipyear IN (1994, 1995)".to_string(),
            floor: vec![FloorScan {
                table: TableDir::LineitemHive,
                partitions: Some(vec![
                    "l_shipyear=1994".to_string(),
                    "l_shipyear=1995".to_string(),
                ]),
                columns: vec![],
                predicate: None,
            }],
        },
        Case {
            name: "tpch_q1",
            iceberg: false,
            orc: false,
            description: "TPC-H Q1",
            sql: "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, \
                  sum(l_extendedprice) AS sum_base_price, \
                  sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, \
                  sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, \
                  avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, \
                  avg(l_discount) AS avg_disc, count(*) AS count_order \
                  FROM lineitem \
                  WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL '90' DAY \
                  GROUP BY l_returnflag, l_linestatus \
                  ORDER BY l_returnflag, l_linestatus"
                .to_string(),
            floor: vec![flat(
                &[
                    "l_returnflag",
                    "l_linestatus",
                    "l_quantity",
                    "l_extendedprice",
                    "l_discount",
                    "l_tax",
                    "l_shipdate",
                ],
                Some("l_shipdate <= DATE '1998-09-02'"),
            )],
        },
        Case {
            name: "tpch_q6",
            iceberg: false,
            orc: false,
            description: "TPC-H Q6",
            sql: "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem \
                  WHERE l_shipdate >= DATE '1994-01-01' \
                  AND l_shipdate < DATE '1994-01-01' + INTERVAL '1' YEAR \
                  AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 \
                  AND l_quantity < 24"
                .to_string(),
            floor: vec![flat(
                &["l_shipdate", "l_discount", "l_quantity", "l_extendedprice"],
                Some(q6_floor),
            )],
        },
        Case {
            name: "join_orders",
            iceberg: false,
            orc: false,
            description: "lineitem joined with orders under a one-week o_orderdate filter \
                          (the join's dynamic filter goes into the lineitem scan)",
            sql: format!(
                "SELECT count(*) AS lines, sum(l_extendedprice * (1 - l_discount)) AS revenue \
                 FROM lineitem JOIN orders ON l_orderkey = o_orderkey WHERE {week}"
            ),
            floor: vec![
                flat(&["l_orderkey", "l_extendedprice", "l_discount"], None),
                FloorScan {
                    table: TableDir::Orders,
                    partitions: None,
                    columns: vec!["o_orderkey", "o_orderdate"],
                    predicate: Some(week.to_string()),
                },
            ],
        },
        Case {
            name: "topk",
            iceberg: false,
            orc: false,
            description: "the 10 largest l_extendedprice: TopK's dynamic filter tightens \
                          while the scan streams",
            sql: "SELECT l_extendedprice FROM lineitem ORDER BY l_extendedprice DESC LIMIT 10"
                .to_string(),
            floor: vec![flat(&["l_extendedprice"], None)],
        },
        Case {
            name: "small_files",
            iceberg: false,
            orc: false,
            description: "2 000 files of 400 rows in 40 partitions: a GROUP BY over all of them \
                          (per-file opening cost dominates)",
            sql: "SELECT k, count(*) AS n, avg(x) AS ax FROM small GROUP BY k".to_string(),
            floor: vec![FloorScan {
                table: TableDir::SmallFiles,
                partitions: None,
                columns: vec!["k", "x"],
                predicate: None,
            }],
        },
        Case {
            name: "small_partition",
            iceberg: false,
            orc: false,
            description: "count(*) of one partition of the small-files table (50 files)",
            sql: "SELECT count(*) AS n FROM small WHERE p = 7".to_string(),
            floor: vec![FloorScan {
                table: TableDir::SmallFiles,
                partitions: Some(vec!["p=7".to_string()]),
                columns: vec![],
                predicate: None,
            }],
        },
        Case {
            name: "bucket_lookup",
            iceberg: false,
            orc: false,
            description: "one customer's orders by o_custkey in 8 Hive bucket files \
                          (lakescan reads the key's bucket only)",
            sql: format!("SELECT * FROM orders_bucketed WHERE {customer}"),
            floor: vec![FloorScan {
                table: TableDir::BucketedOrders,
                partitions: None,
                columns: ALL_ORDERS.to_vec(),
                predicate: Some(customer.clone()),
            }],
        },
        Case {
            name: "struct_field",
            iceberg: false,
            orc: false,
            description: "one member of a 20-member struct: sum(s['l_quantity'])",
            sql: "SELECT sum(s['l_quantity']) AS q FROM lineitem_struct".to_string(),
            floor: vec![nested(&["s.l_quantity"])],
        },
        Case {
            name: "struct_whole",
            iceberg: false,
            orc: false,
            description: "the whole 20-member struct (the bytes struct_field must undercut 10×)",
            sql: "SELECT s FROM lineitem_struct".to_string(),
            floor: vec![nested(&["s"])],
        },
    ]
}

/// `full_scan`, `selective` and `tpch_q6` over the ORC copy of `lineitem` (`orc/lineitem`):
/// lakescan's ORC reader against `datafusion-orc`; lakescan's own Parquet cases are the
/// Parquet twin.
fn orc_cases(scale: f64) -> Vec<Case> {
    let names = [
        ("full_scan", "orc_full_scan"),
        ("selective", "orc_selective"),
        ("tpch_q6", "orc_tpch_q6"),
    ];
    all_parquet(scale)
        .into_iter()
        .filter_map(|case| {
            let (_, name) = names.iter().find(|(from, _)| *from == case.name)?;
            Some(Case {
                name,
                description: "the Parquet case of the same name over lineitem as ORC",
                sql: case.sql.replace("FROM lineitem", "FROM lineitem_orc"),
                floor: vec![],
                iceberg: false,
                orc: true,
            })
        })
        .collect()
}

/// The same scan of each Iceberg copy of `lineitem` (`crate::iceberg_tables`): five columns,
/// four aggregates, a filter keeping ~98 % of rows. The equality-delete key `l_orderkey` is
/// projected (`max`): DuckDB 1.4.4's iceberg extension refuses equality deletes whose key
/// columns a query does not read.
fn iceberg_cases(scale: f64) -> Vec<Case> {
    let case = |name, description, table: &str| Case {
        name,
        description,
        iceberg: true,
        orc: false,
        sql: format!(
            "SELECT count(*) AS n, sum(l_quantity) AS qty, \
             sum(l_extendedprice * (1 - l_discount)) AS revenue, \
             max(l_orderkey) AS last_order FROM {table} \
             WHERE l_shipdate <= DATE '1998-09-02'"
        ),
        floor: vec![],
    };
    vec![
        case(
            "iceberg_scan",
            "Iceberg lineitem (v2, no deletes): 4 columns, 3 aggregates",
            "lineitem_ice",
        ),
        // The scan's share: the same columns, filter and rows without the decimal product,
        // whose evaluation (DataFusion's, not the scan's) is a quarter of `iceberg_scan`.
        Case {
            name: "iceberg_read",
            description: "the same columns and filter without arithmetic: min/max/sum only",
            iceberg: true,
            orc: false,
            sql: "SELECT count(*) AS n, sum(l_quantity) AS qty, \
                  max(l_extendedprice) AS top_price, min(l_discount) AS low_discount, \
                  max(l_orderkey) AS last_order FROM lineitem_ice \
                  WHERE l_shipdate <= DATE '1998-09-02'"
                .to_string(),
            floor: vec![],
        },
        case(
            "iceberg_pos",
            "the same with 10 % of rows position-deleted (one delete file per data file)",
            "lineitem_ice_pos",
        ),
        Case {
            name: "iceberg_pos_half",
            description: "iceberg_pos below the middle order key: half the row groups pruned, \
                          and their splits' delete files never read",
            iceberg: true,
            orc: false,
            sql: format!(
                "SELECT count(*) AS n, sum(l_quantity) AS qty, max(l_orderkey) AS last_order \
                 FROM lineitem_ice_pos WHERE l_orderkey < {}",
                middle_order_key(scale)
            ),
            floor: vec![],
        },
        case(
            "iceberg_dv",
            "the same with the rows deleted by deletion vectors (v3)",
            "lineitem_ice_dv",
        ),
        case(
            "iceberg_eq",
            "the same with 10 000 equality-deleted l_orderkey values (x scale)",
            "lineitem_ice_eq",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_keys_exist() {
        assert_eq!(middle_order_key(1.0), 3_000_001);
        assert_eq!(middle_order_key(0.01), 29_985);
        let names: Vec<_> = all(1.0).iter().map(|c| c.name).collect();
        assert_eq!(names.len(), 23);
        assert!(names.contains(&"orc_selective"));
        assert_eq!(customer_key(1.0), 75_001);
        assert_eq!(customer_key(0.01) % 3, 1);
    }
}
