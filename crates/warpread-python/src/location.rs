//! Where a file lies: a local path, or an object named by a URL
//! (`s3://`, `gs://`, `az://`/`abfs://`, `http(s)://`; `file://` is a
//! local path), the way the command line reads its inputs. A store's
//! credentials and endpoint come from `object_store`'s builders
//! (`from_env`), as datafusion-cli takes them; this crate reads no
//! variable itself.

use std::path::PathBuf;
use std::sync::Arc;

use object_store::ObjectStore;
use object_store::path::Path as ObjectPath;
use url::Url;
use warpread::{Error, Result};

/// An object in a store.
#[derive(Debug, Clone)]
pub struct Remote {
    /// The store serving the object.
    pub store: Arc<dyn ObjectStore>,
    /// The object's path in the store.
    pub location: ObjectPath,
    /// The store's root (`s3://bucket/`), as DataFusion registers it.
    pub root: Url,
    /// The URL as given.
    pub url: Url,
}

/// A file to read.
#[derive(Debug, Clone)]
pub enum Where {
    /// A local file (or folder, for a table).
    Local(PathBuf),
    /// An object in a store.
    Remote(Remote),
}

/// Whether `s` is a URL (`scheme://...`) rather than a local path.
fn is_url(s: &str) -> bool {
    s.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+')
    })
}

impl Where {
    /// Parses a path or URL.
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
        Ok(Self::Remote(Remote {
            store,
            location,
            root,
            url,
        }))
    }

    /// The name errors and `repr` show.
    pub fn name(&self) -> String {
        match self {
            Self::Local(p) => p.display().to_string(),
            Self::Remote(r) => r.url.to_string(),
        }
    }
}

/// The store serving `url` and the object's path in it.
fn store_for(url: &Url) -> Result<(Arc<dyn ObjectStore>, ObjectPath)> {
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
            // object_store refuses plain HTTP unless allowed; a plain
            // `http://` URL asks for it.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_file_urls_and_store_urls() {
        assert!(
            matches!(Where::parse("testdata/x.parquet").unwrap(), Where::Local(p) if p == std::path::Path::new("testdata/x.parquet"))
        );
        assert!(
            matches!(Where::parse("file:///tmp/a.orc").unwrap(), Where::Local(p) if p == std::path::Path::new("/tmp/a.orc"))
        );
        // A colon without `//` is a path (a Windows drive, a odd name).
        assert!(matches!(Where::parse("a:b.orc").unwrap(), Where::Local(_)));
        match Where::parse("http://localhost:9/dir/a.parquet").unwrap() {
            Where::Remote(r) => {
                assert_eq!(r.location.as_ref(), "dir/a.parquet");
                assert_eq!(r.root.as_str(), "http://localhost:9/");
            }
            other => panic!("{other:?}"),
        }
        let e = Where::parse("ftp://h/a.orc").unwrap_err().to_string();
        assert!(
            e.contains("ftp://h/a.orc") && e.contains("no object store"),
            "{e}"
        );
    }
}
