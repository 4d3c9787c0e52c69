//! warpread scans inside [datafusion-distributed]: a query planned on a
//! coordinator runs its stages on worker processes, each decoding its share
//! of the files with its own backend (one GPU per worker, or the CPU).
//!
//! - [`WarpCodec`] carries a warpread scan (its files, schema, projection,
//!   pushed filters and `warpread.*` settings) across the worker boundary
//!   as the engine's user codec.
//! - [`coordinator_session`] makes a `SessionContext` whose queries are
//!   planned into stages for a list of workers.
//! - [`WorkerSessions`] builds each worker's session around the worker's
//!   own [`WarpreadConfig`](warpread_datafusion::WarpreadConfig), and
//!   [`serve`] runs a worker on a TCP listener.
//! - [`LocalCluster`] starts worker processes on the loopback and stops
//!   them when dropped.
//!
//! Where warpread's physical optimizer rules run: a coordinator runs
//! DataFusion's rules and [`RowFiltersWithinLimits`](warpread_datafusion::RowFiltersWithinLimits)
//! (it needs the limits above a scan, which may sit in another stage);
//! each worker runs [`ScanAggregate`](warpread_datafusion::ScanAggregate),
//! [`StartScansEarly`](warpread_datafusion::StartScansEarly) and
//! [`FastLike`](warpread_datafusion::FastLike) over the stage it is given
//! ([`worker_rules`]), so aggregates run on the worker's device and no
//! plan node of warpread's other than the scan crosses the boundary.
//! [`JoinKeySets`](warpread_datafusion::JoinKeySets) does not run: a key
//! set hands a join's build keys to a scan through shared memory, which
//! two processes do not have. DataFusion's own dynamic filters still
//! reach scans in the same stage as their join.
//!
//! [datafusion-distributed]: https://crates.io/crates/datafusion-distributed

#![warn(missing_docs)]

mod cluster;
mod codec;
mod coordinator;
mod error;
mod worker;

pub use cluster::{LocalCluster, WORKER_LISTENING};
pub use codec::WarpCodec;
pub use coordinator::{StaticWorkers, coordinator_session};
pub use error::{Error, Result};
pub use worker::{WorkerSessions, serve, worker_rules};
