//! Query work over decoded columns: a filter, group keys and aggregates
//! fused into one [`AggProgram`] that a backend runs over a scan's batches,
//! so the rows never go through a query engine's operators. The CPU
//! reference ([`eval`]) and the CUDA kernel generated from the same program
//! ([`cuda_source`], launched by the CUDA backend) give identical groups.
//!
//! The DataFusion provider builds programs from the `AggregateExec
//! (Partial) ← [Projection] ← Filter ← scan` shape of its physical plans
//! (`datafusion::aggregate`); the states they emit are the partial
//! aggregate's, so DataFusion's final aggregate merges them unchanged.

pub mod cuda_source;
pub mod eval;
pub mod groups;
pub mod program;
pub mod rows;

pub use groups::Groups;
pub use program::{Agg, AggFn, AggProgram, ArithOp, CmpOp, Expr, Input, Load};
