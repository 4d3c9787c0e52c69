//! `http://` inputs: a minimal HTTP/1.1 server on the loopback (HEAD, and
//! GET of one byte range, as object_store's HTTP store asks) serving the
//! fixtures; `cat` and `inspect` of a URL give what they give of the file.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;

/// Serves files under `root` until the test process ends.
fn serve(root: PathBuf) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let root = root.clone();
            std::thread::spawn(move || {
                let _ = answer(conn, &root);
            });
        }
    });
    port
}

/// One request, then the connection closes.
fn answer(conn: TcpStream, root: &std::path::Path) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let mut range: Option<(u64, Option<u64>)> = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" {
            break;
        }
        let lower = h.to_ascii_lowercase();
        if let Some(r) = lower.strip_prefix("range: bytes=") {
            let (a, b) = r.trim().split_once('-').unwrap_or(("0", ""));
            range = Some((a.parse().unwrap_or(0), b.parse().ok()));
        }
    }
    let mut out = conn;
    let file = root.join(path.trim_start_matches('/'));
    let Ok(bytes) = std::fs::read(&file) else {
        return write!(
            out,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
    };
    let len = bytes.len() as u64;
    match (method, range) {
        ("HEAD", _) => write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
        ),
        ("GET", Some((a, b))) => {
            let end = b.map_or(len, |b| (b + 1).min(len));
            if a >= end {
                return write!(
                    out,
                    "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
            }
            write!(
                out,
                "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {a}-{}/{len}\r\nConnection: close\r\n\r\n",
                end - a,
                end - 1
            )?;
            out.write_all(&bytes[a as usize..end as usize])
        }
        ("GET", None) => {
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
            )?;
            out.write_all(&bytes)
        }
        _ => write!(
            out,
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
    }
}

fn warpread() -> Command {
    let bin =
        std::env::var_os("WARPREAD_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_warpread").into());
    let mut c = Command::new(bin);
    c.arg("--backend=cpu");
    c
}

fn run(args: &[&str]) -> Vec<u8> {
    let out = warpread().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn cat_and_inspect_take_http_urls() {
    let testdata = crate::common::root().join("testdata");
    let port = serve(testdata.clone());
    for file in [
        "orc/rowgroups_v12_zlib.orc",
        "parquet/page_index_gzip_v1.parquet",
    ] {
        let url = format!("http://127.0.0.1:{port}/{file}");
        let local = testdata.join(file);
        let local = local.to_str().unwrap();
        assert_eq!(
            run(&["cat", &url, "--format", "json", "--batch-size", "1000"]),
            run(&["cat", local, "--format", "json", "--batch-size", "1000"]),
            "{file}"
        );
        let remote = String::from_utf8(run(&["inspect", &url])).unwrap();
        let here = String::from_utf8(run(&["inspect", local])).unwrap();
        // The same report but for the name of the file.
        let strip = |s: &str| {
            s.lines()
                .filter(|l| !l.starts_with("file:"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(strip(&remote), strip(&here), "{file}");
    }
    let out = warpread()
        .args(["cat", &format!("http://127.0.0.1:{port}/orc/none.orc")])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("none.orc"));
}
