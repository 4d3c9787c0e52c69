//! Aggregate programs on the CUDA backend against the CPU reference, on
//! fresh random batches (and on TPC-H lineitem read by each backend, the
//! device run over the decode stages' device-resident outputs); batches the
//! kernel must leave to the CPU (nulls, variable-length keys, more groups
//! than a block's table, keys out of their packed range) must match too.

use std::sync::Arc;

use arrow::array::{ArrayRef, Date32Array, Decimal128Array, Int8Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use warpread::exec::{Backend, CpuBackend};
use warpread::orc::ReadOptions;
use warpread::parquet::ParquetFile;
use warpread::query::{Agg, AggFn, AggProgram, ArithOp, CmpOp, Expr, Input, Load, eval};

use crate::common::{Rng, cuda};

fn decimal(v: Vec<Option<i128>>) -> ArrayRef {
    Arc::new(
        Decimal128Array::from(v)
            .with_precision_and_scale(15, 2)
            .unwrap(),
    )
}

/// Columns: flag (Utf8), status (Utf8), qty, price, disc (Decimal 15,2),
/// ship (Date32), small (Int8), big (Int64).
fn batch(rng: &mut Rng, n: usize, nulls: bool, flags: &[&str]) -> RecordBatch {
    let null = |rng: &mut Rng| nulls && rng.below(10) == 0;
    let flag: Vec<Option<&str>> = (0..n)
        .map(|_| (!null(rng)).then(|| flags[rng.below(flags.len() as u64) as usize]))
        .collect();
    let status: Vec<&str> = (0..n)
        .map(|_| if rng.below(2) == 0 { "O" } else { "F" })
        .collect();
    let qty = (0..n)
        .map(|_| Some(100 * (1 + rng.below(50) as i128)))
        .collect();
    let price = (0..n)
        .map(|_| Some(90_000 + rng.below(10_000_000) as i128))
        .collect();
    let disc = (0..n)
        .map(|_| (!null(rng)).then(|| rng.below(11) as i128))
        .collect();
    let ship: Vec<i32> = (0..n).map(|_| 8000 + rng.below(2500) as i32).collect();
    let small: Vec<i8> = (0..n).map(|_| rng.below(7) as i8 - 3).collect();
    let big: Vec<i64> = (0..n)
        .map(|_| rng.next() as i64 >> (1 + rng.below(40)))
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("flag", DataType::Utf8, true),
        Field::new("status", DataType::Utf8, false),
        Field::new("qty", DataType::Decimal128(15, 2), true),
        Field::new("price", DataType::Decimal128(15, 2), true),
        Field::new("disc", DataType::Decimal128(15, 2), true),
        Field::new("ship", DataType::Date32, false),
        Field::new("small", DataType::Int8, false),
        Field::new("big", DataType::Int64, false),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(flag)),
            Arc::new(StringArray::from(status)),
            decimal(qty),
            decimal(price),
            decimal(disc),
            Arc::new(Date32Array::from(ship)),
            Arc::new(Int8Array::from(small)),
            Arc::new(Int64Array::from(big)),
        ],
    )
    .unwrap()
}

fn input(column: usize, load: Load) -> Input {
    Input { column, load }
}

fn int(bytes: u8) -> Load {
    Load::Int {
        bytes,
        signed: true,
    }
}

fn b(e: Expr) -> Box<Expr> {
    Box::new(e)
}

/// Q1's shape: keys (inputs 0, 1), a date filter, decimal sums, avgs and
/// a count; `keys` picks the key inputs.
fn q1_like(keys: Vec<usize>, key_fields: Vec<Field>) -> AggProgram {
    let inputs = vec![
        input(0, Load::Bytes),
        input(1, Load::Bytes),
        input(2, Load::Decimal128),
        input(3, Load::Decimal128),
        input(4, Load::Decimal128),
        input(5, int(4)),
        input(6, int(1)),
        input(7, int(8)),
    ];
    // price * (1 - disc), at scale 4.
    let disc_price = Expr::Arith {
        op: ArithOp::Mul,
        bits: 128,
        l: b(Expr::Input(3)),
        r: b(Expr::Arith {
            op: ArithOp::Sub,
            bits: 128,
            l: b(Expr::Int(100)),
            r: b(Expr::Input(4)),
        }),
    };
    let filter = Expr::And(
        b(Expr::Cmp {
            op: CmpOp::Le,
            l: b(Expr::Input(5)),
            r: b(Expr::Int(10_300)),
        }),
        b(Expr::Not(b(Expr::Cmp {
            op: CmpOp::Eq,
            l: b(Expr::Input(6)),
            r: b(Expr::Int(0)),
        }))),
    );
    let mut fields = key_fields;
    let dec = |name: &str, s| Field::new(name, DataType::Decimal128(38, s), true);
    fields.push(dec("sum_qty", 2));
    fields.push(dec("sum_disc_price", 4));
    fields.push(Field::new("avg_n", DataType::UInt64, true));
    fields.push(dec("avg_disc", 2));
    fields.push(Field::new("count", DataType::Int64, true));
    fields.push(Field::new("sum_big", DataType::Int64, true));
    AggProgram {
        inputs,
        filter: Some(filter),
        keys,
        aggs: vec![
            Agg {
                func: AggFn::Sum { bits: 128 },
                arg: Expr::Input(2),
            },
            Agg {
                func: AggFn::Sum { bits: 128 },
                arg: disc_price,
            },
            Agg {
                func: AggFn::Avg,
                arg: Expr::Input(4),
            },
            Agg {
                func: AggFn::Count,
                arg: Expr::Int(1),
            },
            Agg {
                func: AggFn::Sum { bits: 64 },
                arg: Expr::Arith {
                    op: ArithOp::Mul,
                    bits: 64,
                    l: b(Expr::Input(7)),
                    r: b(Expr::Int(3)),
                },
            },
        ],
        schema: Arc::new(Schema::new(fields)),
    }
}

fn rows(b: &RecordBatch) -> Vec<Vec<String>> {
    warpread::query::rows::sorted_rows(std::slice::from_ref(b))
}

fn check(cuda: &dyn Backend, p: &AggProgram, batch: &RecordBatch, what: &str) {
    let want = eval::aggregate(p, batch).unwrap().to_batch(p).unwrap();
    let got = cuda.aggregate(p, batch).unwrap().to_batch(p).unwrap();
    assert_eq!(rows(&got), rows(&want), "{what}");
}

#[test]
fn aggregate_programs_match_the_cpu_reference() {
    let Some(cuda) = cuda("aggregate_programs_match_the_cpu_reference") else {
        return;
    };
    let mut rng = Rng::fresh("aggregate_programs_match_the_cpu_reference");
    let utf8 = |n: &str| Field::new(n, DataType::Utf8, true);
    let two_keys = q1_like(vec![0, 1], vec![utf8("flag"), utf8("status")]);
    let int_keys = q1_like(
        vec![6, 5],
        vec![
            Field::new("small", DataType::Int8, false),
            Field::new("ship", DataType::Date32, false),
        ],
    );
    let no_keys = q1_like(vec![], vec![]);
    let big_key = q1_like(vec![7], vec![Field::new("big", DataType::Int64, false)]);
    let (device_before, host_before) = cuda.aggregate_batches();
    for round in 0..6 {
        let n = [1, 31, 1000, 65_537, 300_000, 1_000_003][round];
        let b = batch(&mut rng, n, false, &["A", "N", "R"]);
        check(cuda, &two_keys, &b, &format!("two string keys, {n} rows"));
        check(cuda, &no_keys, &b, &format!("no keys, {n} rows"));
        // Thousands of (small, ship) groups: full tables fall back.
        check(cuda, &int_keys, &b, &format!("int keys, {n} rows"));
        // Int64 keys mostly beyond 32 bits: out of range, falls back.
        check(cuda, &big_key, &b, &format!("Int64 key, {n} rows"));
        // Nulls in a key and in an argument.
        let b = batch(&mut rng, n, true, &["A", "N", "R"]);
        check(cuda, &two_keys, &b, &format!("nulls, {n} rows"));
        // Keys of different lengths.
        let b = batch(&mut rng, n, false, &["A", "NN", "RRR"]);
        check(
            cuda,
            &two_keys,
            &b,
            &format!("variable-length keys, {n} rows"),
        );
        // Sliced batches: inputs start at an offset.
        let b = batch(&mut rng, n + 5, false, &["AB", "NO"]);
        check(
            cuda,
            &two_keys,
            &b.slice(3, n),
            &format!("sliced, {n} rows"),
        );
    }
    // Several batches in one call: segments of one launch (an empty one,
    // a sliced one, batch boundaries inside warps), and runs of different
    // key lengths launched apart.
    let mut batches = Vec::new();
    for (n, flags) in [
        (5_000, &["A", "N", "R"][..]),
        (0, &["A", "N"][..]),
        (33, &["A", "N"][..]),
        (70_001, &["AB", "NO"][..]),
        (4_099, &["AB", "NO"][..]),
        (100_000, &["A", "R"][..]),
    ] {
        batches.push(batch(&mut rng, n + 7, false, flags).slice(7, n));
    }
    for (p, what) in [(&two_keys, "string keys"), (&no_keys, "no keys")] {
        let mut want = warpread::query::Groups::new(p);
        for b in &batches {
            want.merge(&eval::aggregate(p, b).unwrap());
        }
        let got = cuda
            .aggregate_on_device(p, &batches)
            .unwrap()
            .unwrap_or_else(|| panic!("{what}: the device refused the batches"));
        assert_eq!(
            rows(&got.to_batch(p).unwrap()),
            rows(&want.to_batch(p).unwrap()),
            "{what}, {} batches in one call",
            batches.len()
        );
    }
    let (device, host) = cuda.aggregate_batches();
    assert!(device - device_before >= 18, "the device ran the programs");
    assert!(host - host_before >= 6, "the fallbacks were taken");
}

/// TPC-H lineitem at `scale` as GZIP Parquet with row groups of `rows`,
/// generated into a temporary folder named by `tag` (removed by the caller).
fn lineitem(tag: &str, scale: f64, rows: usize) -> (std::path::PathBuf, ParquetFile) {
    use warpread_cli::datagen::tpch::{self, GenCompression, GenFormat, GenOptions};
    let dir = std::env::temp_dir().join(format!("warpread-{tag}-{}", std::process::id()));
    let opts = GenOptions {
        rows_per_group: rows,
        ..GenOptions::new(GenFormat::Parquet, GenCompression::Gzip)
    };
    tpch::generate(scale, &opts, &dir, &["lineitem".to_string()]).unwrap();
    let file = ParquetFile::open(dir.join("lineitem.parquet")).unwrap();
    (dir, file)
}

/// A read of `cols` with each row group one batch, as aggregate scans read.
fn whole_groups(cols: &[&str]) -> ReadOptions {
    ReadOptions::default()
        .with_columns(cols.iter().copied())
        .with_batch_size(1 << 24)
}

#[test]
fn aggregates_over_decoded_lineitem_read_on_each_backend_match() {
    let Some(cuda) = cuda("aggregates_over_decoded_lineitem_read_on_each_backend_match") else {
        return;
    };
    let (dir, file) = lineitem("agg", 0.05, 50_000);
    let options = whole_groups(&[
        "l_returnflag",
        "l_linestatus",
        "l_quantity",
        "l_extendedprice",
        "l_discount",
        "l_shipdate",
        "l_linenumber",
        "l_orderkey",
    ]);
    let schema = file.projected_schema(&options).unwrap();
    let load = |c: usize| match schema.field(c).data_type() {
        DataType::Utf8 | DataType::LargeUtf8 => Load::Bytes,
        DataType::Decimal128(..) => Load::Decimal128,
        DataType::Int32 | DataType::Date32 => int(4),
        DataType::Int64 => int(8),
        t => panic!("lineitem column of type {t}"),
    };
    let mut p = q1_like(
        vec![0, 1],
        vec![
            schema.field(0).as_ref().clone(),
            schema.field(1).as_ref().clone(),
        ],
    );
    for (i, inp) in p.inputs.iter_mut().enumerate() {
        *inp = input(i, load(i));
    }
    // l_linenumber (Int32) as the "small" input of the filter.
    let cpu = CpuBackend::new();
    let want_batches = file.read(&options, &cpu).unwrap();
    let mut want = warpread::query::Groups::new(&p);
    for b in &want_batches {
        want.merge(&eval::aggregate(&p, b).unwrap());
    }
    // As the SQL provider reads for an aggregate: without column sets, and
    // then with the values of the gathered chunks left on the device alone
    // (their host bytes unwritten: a wrong input would show here).
    let plain = options
        .clone()
        .with_column_sets(warpread::exec::column_sets::Split::NONE);
    let device_only = plain.clone().with_device_values(true);
    // And as it does: decimals at their stored width as well.
    let narrow = device_only.clone().with_narrow_decimals(true);
    let mut outcome = Vec::new();
    for (what, options) in [
        ("host copies", &plain),
        ("device values", &device_only),
        ("narrow decimals", &narrow),
    ] {
        let before = cuda.profile();
        cuda.retain_decoded(true);
        let got_batches = file.read(options, cuda);
        let mut got = warpread::query::Groups::new(&p);
        let mut ran = Ok(());
        // All the read's batches in one call, as the SQL exec hands them.
        if let Ok(batches) = &got_batches {
            match cuda.aggregate_on_device(&p, batches) {
                Ok(Some(g)) => got.merge(&g),
                Ok(None) => ran = Err(format!("{what}: the device refused a batch")),
                Err(e) => ran = Err(format!("{what}: {e}")),
            }
        }
        cuda.retain_decoded(false);
        let after = cuda.profile();
        outcome.push((what, got_batches.map(|_| got), ran, before, after));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let want = rows(&want.to_batch(&p).unwrap());
    for (what, got, ran, before, after) in outcome {
        ran.unwrap();
        assert_eq!(rows(&got.unwrap().to_batch(&p).unwrap()), want, "{what}");
        println!(
            "{what}: aggregate inputs from device mirrors {} bytes, {} bytes downloaded",
            after.bytes_mirrored - before.bytes_mirrored,
            after.bytes_out - before.bytes_out
        );
    }
}

#[test]
fn decimal_overflow_is_refused_not_wrapped() {
    let Some(cuda) = cuda("decimal_overflow_is_refused_not_wrapped") else {
        return;
    };
    let mut rng = Rng::fresh("decimal_overflow_is_refused_not_wrapped");
    let b = batch(&mut rng, 10_000, false, &["A", "N"]);
    let mut p = q1_like(vec![], vec![]);
    // price (at least 900.00) times a tenth of the largest 128-bit value.
    p.aggs[1].arg = Expr::Arith {
        op: ArithOp::Mul,
        bits: 128,
        l: Box::new(Expr::Input(3)),
        r: Box::new(Expr::Int(i128::MAX / 10)),
    };
    assert!(eval::aggregate(&p, &b).is_err(), "the CPU reference fails");
    assert!(
        cuda.aggregate_on_device(&p, std::slice::from_ref(&b))
            .unwrap()
            .is_none(),
        "the device refuses the batch"
    );
    // Within range the same shape runs.
    p.aggs[1].arg = Expr::Arith {
        op: ArithOp::Mul,
        bits: 128,
        l: Box::new(Expr::Input(3)),
        r: Box::new(Expr::Int(-(i128::MAX / 100_000_000_000))),
    };
    check(cuda, &p, &b, "large products within range");
}

/// Decimals read at their stored width (`narrow_decimals`, as the SQL
/// provider reads for aggregate programs) hold the widened read's values,
/// and a program bound to them gives the same groups (CPU reference).
#[test]
fn narrow_decimals_aggregate_as_widened() {
    let (dir, file) = lineitem("narrow", 0.01, 20_000);
    let cols = [
        "l_returnflag",
        "l_quantity",
        "l_extendedprice",
        "l_discount",
        "l_tax",
    ];
    let wide = whole_groups(&cols);
    let narrow = wide.clone().with_narrow_decimals(true);
    let cpu = CpuBackend::new();
    let (w, n) = (
        file.read(&wide, &cpu).unwrap(),
        file.read(&narrow, &cpu).unwrap(),
    );
    let _ = std::fs::remove_dir_all(&dir);
    let schema = file.projected_schema(&narrow).unwrap();
    assert_eq!(schema.field(1).data_type(), &DataType::Decimal64(15, 2));
    assert_eq!(n[0].schema(), schema);
    assert_eq!(w.len(), n.len());
    for (a, b) in w.iter().zip(&n) {
        for (c, name) in cols.iter().enumerate().skip(1) {
            let cast = arrow::compute::cast(b.column(c), a.column(c).data_type()).unwrap();
            assert_eq!(&cast, a.column(c), "{name}");
        }
    }
    // By l_returnflag where l_quantity < 24: sum(l_extendedprice * (1 -
    // l_discount)), avg(l_tax), count(*).
    let dec = |name: &str, s| Field::new(name, DataType::Decimal128(38, s), true);
    let p = AggProgram {
        inputs: vec![
            input(0, Load::Bytes),
            input(1, Load::Decimal128),
            input(2, Load::Decimal128),
            input(3, Load::Decimal128),
            input(4, Load::Decimal128),
        ],
        filter: Some(Expr::Cmp {
            op: CmpOp::Lt,
            l: b(Expr::Input(1)),
            r: b(Expr::Int(2400)),
        }),
        keys: vec![0],
        aggs: vec![
            Agg {
                func: AggFn::Sum { bits: 128 },
                arg: Expr::Arith {
                    op: ArithOp::Mul,
                    bits: 128,
                    l: b(Expr::Input(2)),
                    r: b(Expr::Arith {
                        op: ArithOp::Sub,
                        bits: 128,
                        l: b(Expr::Int(100)),
                        r: b(Expr::Input(3)),
                    }),
                },
            },
            Agg {
                func: AggFn::Avg,
                arg: Expr::Input(4),
            },
            Agg {
                func: AggFn::Count,
                arg: Expr::Int(1),
            },
        ],
        schema: Arc::new(Schema::new(vec![
            schema.field(0).as_ref().clone(),
            dec("sum_disc_price", 4),
            Field::new("avg_n", DataType::UInt64, true),
            dec("avg_tax", 2),
            Field::new("count", DataType::Int64, true),
        ])),
    };
    let run = |batches: &[RecordBatch]| {
        let mut g = warpread::query::Groups::new(&p);
        for b in batches {
            g.merge(&eval::aggregate(&p, b).unwrap());
        }
        rows(&g.to_batch(&p).unwrap())
    };
    let want = run(&w);
    assert!(want.len() >= 2, "{want:?}");
    assert_eq!(run(&n), want);
}
