//! What a front end is asked to read: a local path, or a URL of an object
//! store (`s3://`, `gs://`, `az://`/`abfs://`, `http(s)://`; `file://` is a
//! local path), and which format a file is from its first bytes.
//! Credentials and endpoints come from the usual environment through
//! `object_store`'s builders (`from_env`), as datafusion-cli takes them
//! (`AWS_*`, `GOOGLE_*`, `AZURE_*`; for an S3-compatible server,
//! `AWS_ENDPOINT_URL` and `AWS_ALLOW_HTTP=true`). The command line and the
//! Python module use it; the library crates take a store and a path
//! instead and read no environment.

#![warn(missing_docs)]

use std::path::PathBuf;
use std::sync::Arc;

use object_store::ObjectStore;
use object_store::path::Path as ObjectPath;
use url::Url;

use warpread_core::error::{Error, Result};

/// A file to read.
#[derive(Debug, Clone)]
pub enum Input {
    /// A local file.
    Local(PathBuf),
    /// An object in a store.
    Object(Object),
}

/// An object in a store, with the URL it was named by.
#[derive(Debug, Clone)]
pub struct Object {
    /// The store.
    pub store: Arc<dyn ObjectStore>,
    /// The object's path in it.
    pub location: ObjectPath,
    /// The URL of the store's root (`s3://bucket/`), for DataFusion's
    /// registry.
    pub root: Url,
    /// The URL as given.
    pub url: Url,
}

/// Whether `s` names an object store URL rather than a local path.
pub fn is_url(s: &str) -> bool {
    s.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+')
    })
}

impl Input {
    /// Parses a command-line input: a URL, else a local path.
    pub fn parse(s: &str) -> Result<Self> {
        if !is_url(s) {
            return Ok(Self::Local(PathBuf::from(s)));
        }
        let url = Url::parse(s).map_err(|e| Error::Unsupported(format!("{s}: not a URL ({e})")))?;
        if url.scheme() == "file" {
            let path = url
                .to_file_path()
                .map_err(|_| Error::Unsupported(format!("{s}: not a local file URL")))?;
            return Ok(Self::Local(path));
        }
        let (store, location) = store_for(&url)?;
        let mut root = url.clone();
        root.set_path("/");
        root.set_query(None);
        root.set_fragment(None);
        Ok(Self::Object(Object {
            store,
            location,
            root,
            url,
        }))
    }

    /// The name shown in messages.
    pub fn name(&self) -> String {
        match self {
            Self::Local(p) => p.display().to_string(),
            Self::Object(o) => o.url.to_string(),
        }
    }
}

/// The store serving `url`, configured from the environment, and the
/// object's path in it.
pub fn store_for(url: &Url) -> Result<(Arc<dyn ObjectStore>, ObjectPath)> {
    let err = |e: object_store::Error| Error::object_store(url.as_str(), e);
    let location = ObjectPath::from_url_path(url.path()).map_err(|e| err(e.into()))?;
    let store: Arc<dyn ObjectStore> = match url.scheme() {
        "s3" | "s3a" => Arc::new(
            object_store::aws::AmazonS3Builder::from_env()
                .with_url(url.as_str())
                .build()
                .map_err(err)?,
        ),
        "gs" => Arc::new(
            object_store::gcp::GoogleCloudStorageBuilder::from_env()
                .with_url(url.as_str())
                .build()
                .map_err(err)?,
        ),
        "az" | "adl" | "azure" | "abfs" | "abfss" => Arc::new(
            object_store::azure::MicrosoftAzureBuilder::from_env()
                .with_url(url.as_str())
                .build()
                .map_err(err)?,
        ),
        "http" | "https" => {
            let mut root = url.clone();
            root.set_path("/");
            // A plain `http://` URL asks for plain HTTP, which object_store
            // refuses unless allowed.
            let options =
                object_store::ClientOptions::new().with_allow_http(url.scheme() == "http");
            Arc::new(
                object_store::http::HttpBuilder::new()
                    .with_url(root.as_str())
                    .with_client_options(options)
                    .build()
                    .map_err(err)?,
            )
        }
        other => {
            return Err(Error::Unsupported(format!(
                "{url}: no object store for `{other}://` (s3, gs, az, abfs, http, https, file)"
            )));
        }
    };
    Ok((store, location))
}

/// The file format of an input: from its first bytes (`PAR1`, `ORC`,
/// `ARROW1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Parquet.
    Parquet,
    /// ORC.
    Orc,
    /// An Arrow IPC file (a GSST container or a plain one).
    Arrow,
}

impl Kind {
    /// The kind of a file starting with `head`.
    pub fn of(head: &[u8], name: &str) -> Result<Self> {
        if head.starts_with(b"ARROW1") {
            Ok(Self::Arrow)
        } else if head.starts_with(b"PAR1") || head.starts_with(b"PARE") {
            Ok(Self::Parquet)
        } else if head.starts_with(b"ORC") {
            Ok(Self::Orc)
        } else {
            Err(Error::Unsupported(format!(
                "{name}: neither ORC, Parquet nor an Arrow IPC file (it starts with {:02x?})",
                &head[..head.len().min(8)]
            )))
        }
    }
}

impl Object {
    /// The object's size and first bytes.
    pub async fn head(&self) -> Result<(u64, Vec<u8>)> {
        use object_store::ObjectStoreExt;
        let err = |e| Error::object_store(self.url.as_str(), e);
        let meta = self.store.head(&self.location).await.map_err(err)?;
        let n = meta.size.min(8);
        let head = self
            .store
            .get_range(&self.location, 0..n)
            .await
            .map_err(err)?;
        Ok((meta.size, head.to_vec()))
    }
}

impl Input {
    /// The kind of a local input, from its first bytes.
    pub fn local_kind(path: &std::path::Path) -> Result<Kind> {
        use std::io::Read;
        let mut head = Vec::with_capacity(8);
        std::fs::File::open(path)
            .and_then(|f| f.take(8).read_to_end(&mut head))
            .map_err(|e| Error::io(path, e))?;
        Kind::of(&head, &path.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths() {
        assert!(is_url("s3://bucket/a.parquet") && is_url("https://h/x.orc"));
        assert!(!is_url("/data/a.parquet") && !is_url("a:b/c") && !is_url("://x"));
        assert!(matches!(
            Input::parse("/tmp/x.orc").unwrap(),
            Input::Local(_)
        ));
        assert!(
            matches!(Input::parse("file:///tmp/x.orc").unwrap(), Input::Local(p) if p == std::path::Path::new("/tmp/x.orc"))
        );
        let e = Input::parse("ftp://h/x").unwrap_err().to_string();
        assert!(e.contains("ftp"), "{e}");
        match Input::parse("http://127.0.0.1:9/d/x.parquet").unwrap() {
            Input::Object(o) => {
                assert_eq!(o.location.as_ref(), "d/x.parquet");
                assert_eq!(o.root.as_str(), "http://127.0.0.1:9/");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn kinds_from_magic() {
        assert_eq!(Kind::of(b"PAR1xxxx", "f").unwrap(), Kind::Parquet);
        assert_eq!(Kind::of(b"ORC\x0a", "f").unwrap(), Kind::Orc);
        assert_eq!(Kind::of(b"ARROW1\0\0", "f").unwrap(), Kind::Arrow);
        assert!(Kind::of(b"", "f").is_err());
    }
}
