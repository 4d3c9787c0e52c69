//! The crate's error type.

use std::path::PathBuf;

/// What can go wrong starting or running workers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A worker could not listen on its address.
    #[error("worker: cannot listen on {addr}: {source}")]
    Listen {
        /// The address asked for.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// The gRPC server of a worker stopped with an error.
    #[error("worker on {addr}: {source}")]
    Serve {
        /// The address it listened on.
        addr: String,
        /// Why.
        source: tonic::transport::Error,
    },
    /// A worker process could not be started.
    #[error("worker {index}: cannot start {program}: {source}")]
    Spawn {
        /// Which worker of the cluster.
        index: usize,
        /// The program started.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A worker process did not say where it listens.
    #[error("worker {index} ({program}): {why}")]
    Start {
        /// Which worker of the cluster.
        index: usize,
        /// The program started.
        program: PathBuf,
        /// What it did instead (exit status, last output).
        why: String,
    },
    /// A worker address that is not a URL.
    #[error("worker address {text:?}: {source}")]
    Url {
        /// The address as given.
        text: String,
        /// Why.
        source: url::ParseError,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
