//! Reading from an S3-compatible server on the loopback: the moto server
//! (a Python package) is started on a free port and stopped by the test.
//! TPC-H at scale 0.01 (ORC and Parquet) uploaded to it gives, through
//! SQL, the same answers to all 22 queries as the same files read locally;
//! `cat`, `inspect` and `sql` take `s3://` URLs; an object rewritten in
//! place is read afresh.
//!
//! Without moto (`pip install 'moto[server]'`) the tests say
//! `skipped: no moto server`, unless `WARPREAD_REQUIRE_S3` is set (as
//! `.ci/run` sets it), when they fail.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use datafusion::prelude::SessionContext;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use url::Url;
use warpread::exec::CpuBackend;
use warpread_cli::datagen::tpch::{self, GenCompression, GenFormat, GenOptions};
use warpread_datafusion::{
    TPCH, WarpreadConfig, compare_results, register_path, register_tpch, run_sql, session,
};

const BUCKET: &str = "warpread";
const KEY_ID: &str = "testing";
const SECRET: &str = "testing";
const REGION: &str = "us-east-1";

/// A moto server, stopped when dropped.
struct Moto {
    child: Child,
    port: u16,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Moto {
    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The environment the command line's stores read.
    fn env(&self) -> [(&'static str, String); 5] {
        [
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", KEY_ID.into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET.into()),
            ("AWS_REGION", REGION.into()),
        ]
    }

    fn store(&self) -> Arc<dyn ObjectStore> {
        Arc::new(
            AmazonS3Builder::new()
                .with_endpoint(self.endpoint())
                .with_allow_http(true)
                .with_bucket_name(BUCKET)
                .with_access_key_id(KEY_ID)
                .with_secret_access_key(SECRET)
                .with_region(REGION)
                .build()
                .unwrap(),
        )
    }
}

/// One server for the test binary's run (tests share it; each uses its
/// own keys). `None`, after printing why, when moto is not installed and
/// not required.
fn moto() -> Option<&'static Moto> {
    static SERVER: OnceLock<Option<Moto>> = OnceLock::new();
    SERVER
        .get_or_init(|| match start() {
            Ok(m) => Some(m),
            Err(why) => {
                if std::env::var_os("WARPREAD_REQUIRE_S3").is_some() {
                    panic!("WARPREAD_REQUIRE_S3 is set, but {why}");
                }
                None
            }
        })
        .as_ref()
        .or_else(|| {
            println!("skipped: no moto server (pip install 'moto[server]')");
            None
        })
}

fn start() -> Result<Moto, String> {
    // A free port: bound, read, released.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let args = ["-H", "127.0.0.1", "-p", &port.to_string()];
    let spawn = |program: &str, pre: &[&str]| {
        Command::new(program)
            .args(pre)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
    };
    let child = spawn("moto_server", &[])
        .or_else(|_| spawn("python3", &["-m", "moto.server"]))
        .map_err(|e| format!("moto_server could not start: {e}"))?;
    let mut moto = Moto { child, port };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(status)) = moto.child.try_wait() {
            return Err(format!("moto_server exited with {status}"));
        }
        if request(port, "PUT", &format!("/{BUCKET}")).is_ok_and(|s| s.starts_with("HTTP/1.1 200"))
        {
            return Ok(moto);
        }
        if Instant::now() > deadline {
            let _ = moto.child.kill();
            return Err("moto_server did not answer within 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// An unsigned HTTP/1.1 request without a body (moto does not check
/// signatures); the response's status line and headers.
fn request(port: u16, method: &str, path: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out)
}

/// TPC-H at scale 0.01, ORC (ZLIB) and Parquet (GZIP), groups of 8192 rows.
fn data() -> &'static PathBuf {
    static DATA: OnceLock<PathBuf> = OnceLock::new();
    DATA.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("warpread-s3-{}", std::process::id()));
        for (format, compression, dir) in [
            (GenFormat::Orc, GenCompression::Zlib, "orc"),
            (GenFormat::Parquet, GenCompression::Gzip, "parquet"),
        ] {
            let o = GenOptions {
                rows_per_group: 8192,
                ..GenOptions::new(format, compression)
            };
            tpch::generate(0.01, &o, &root.join(dir), &[]).unwrap();
        }
        root
    })
}

async fn upload(store: &dyn ObjectStore, file: &Path, key: &str) {
    let bytes = std::fs::read(file).unwrap();
    store
        .put(&ObjectPath::from(key), PutPayload::from(bytes))
        .await
        .unwrap();
}

fn cpu_session() -> SessionContext {
    session(
        WarpreadConfig::with_backend(Arc::new(CpuBackend::new())),
        Default::default(),
    )
}

#[test]
fn tpch_through_sql_on_s3_matches_the_local_read() {
    let Some(moto) = moto() else { return };
    let rt = warpread_datafusion::runtime().unwrap();
    rt.block_on(async {
        let store = moto.store();
        for ext in ["orc", "parquet"] {
            for t in warpread_datafusion::TPCH_TABLES {
                let file = data().join(ext).join(format!("{t}.{ext}"));
                upload(store.as_ref(), &file, &format!("tpch/{ext}/{t}.{ext}")).await;
            }
        }
        for ext in ["orc", "parquet"] {
            let local = cpu_session();
            register_tpch(&local, &data().join(ext), ext).await.unwrap();
            let remote = cpu_session();
            remote.register_object_store(
                &Url::parse(&format!("s3://{BUCKET}")).unwrap(),
                store.clone(),
            );
            for t in warpread_datafusion::TPCH_TABLES {
                // lineitem as a folder (its objects listed through the
                // store), the others as single objects.
                let url = if t == "lineitem" {
                    let file = data().join(ext).join(format!("{t}.{ext}"));
                    upload(
                        store.as_ref(),
                        &file,
                        &format!("tpch/{ext}/lineitem/part-0.{ext}"),
                    )
                    .await;
                    format!("s3://{BUCKET}/tpch/{ext}/lineitem/")
                } else {
                    format!("s3://{BUCKET}/tpch/{ext}/{t}.{ext}")
                };
                register_path(&remote, t, &url).await.unwrap();
            }
            let mut failures = Vec::new();
            for (i, sql) in TPCH.iter().enumerate() {
                let a = run_sql(&remote, sql).await.unwrap();
                let b = run_sql(&local, sql).await.unwrap();
                let (a, b) = (&a.last().unwrap().batches, &b.last().unwrap().batches);
                if let Err(e) = compare_results(a, b, 1e-12) {
                    failures.push(format!("{ext} Q{}: {e}", i + 1));
                }
            }
            assert!(failures.is_empty(), "{failures:#?}");
            // The scans really went through the store.
            let explain = run_sql(
                &remote,
                "EXPLAIN SELECT o_orderkey FROM orders WHERE o_orderkey < 10",
            )
            .await
            .unwrap();
            let text = warpread_datafusion::sorted_rows(&explain[0].batches)
                .concat()
                .join("\n");
            assert!(text.contains(&format!("tpch/{ext}/orders.{ext}")), "{text}");
        }
    });
}

#[test]
fn a_rewritten_object_is_read_afresh() {
    let Some(moto) = moto() else { return };
    let rt = warpread_datafusion::runtime().unwrap();
    rt.block_on(async {
        let store = moto.store();
        let ctx = cpu_session();
        ctx.register_object_store(
            &Url::parse(&format!("s3://{BUCKET}")).unwrap(),
            store.clone(),
        );
        let key = "rewrite/t.parquet";
        let count = |ctx: SessionContext| async move {
            register_path(&ctx, "t", &format!("s3://{BUCKET}/{key}"))
                .await
                .unwrap();
            let r = run_sql(&ctx, "SELECT count(*) AS n FROM t").await.unwrap();
            let rows = warpread_datafusion::sorted_rows(&r.last().unwrap().batches);
            let _ = ctx.deregister_table("t");
            rows.concat().join(",")
        };
        upload(store.as_ref(), &data().join("parquet/nation.parquet"), key).await;
        let first = count(ctx.clone()).await;
        upload(store.as_ref(), &data().join("parquet/region.parquet"), key).await;
        let second = count(ctx.clone()).await;
        assert!(
            first.contains("25") && second.contains('5') && first != second,
            "{first} then {second}"
        );
    });
}

fn warpread() -> Command {
    let bin =
        std::env::var_os("WARPREAD_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_warpread").into());
    let mut c = Command::new(bin);
    c.arg("--backend=cpu");
    c
}

#[test]
fn the_command_line_takes_s3_urls() {
    let Some(moto) = moto() else { return };
    let rt = warpread_datafusion::runtime().unwrap();
    let local = data().join("orc/customer.orc");
    let local_pq = data().join("parquet/supplier.parquet");
    rt.block_on(async {
        let store = moto.store();
        upload(store.as_ref(), &local, "cli/customer.orc").await;
        upload(store.as_ref(), &local_pq, "cli/supplier.parquet").await;
    });
    let run = |args: &[&str]| {
        let out = warpread().envs(moto.env()).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let url = format!("s3://{BUCKET}/cli/customer.orc");
    let remote = run(&["cat", &url, "--format", "csv", "--batch-size", "100"]);
    let here = run(&[
        "cat",
        local.to_str().unwrap(),
        "--format",
        "csv",
        "--batch-size",
        "100",
    ]);
    assert_eq!(remote, here);
    assert!(remote.len() > 10_000);
    let inspect = String::from_utf8(run(&["inspect", &url])).unwrap();
    assert!(
        inspect.contains("stripes:") && inspect.contains("stream"),
        "{inspect}"
    );
    let pq_url = format!("s3://{BUCKET}/cli/supplier.parquet");
    let inspect = String::from_utf8(run(&["inspect", &pq_url])).unwrap();
    assert!(inspect.contains("row group"), "{inspect}");
    let sql = String::from_utf8(run(&[
        "sql",
        "--format",
        "csv",
        "--table",
        &format!("s={pq_url}"),
        "SELECT count(*) AS n FROM s",
    ]))
    .unwrap();
    assert!(sql.contains("100"), "{sql}");
    // A missing object: an error naming it.
    let out = warpread()
        .envs(moto.env())
        .args(["cat", &format!("s3://{BUCKET}/cli/none.orc")])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("none.orc"), "{err}");
}
