//! A scan partition's host budget over the session's `MemoryPool`: the
//! decode stages of its reads reserve their output bytes there before they
//! allocate them ([`crate::exec::memory`]), so a query's memory limit
//! covers what its scans decode and a file that claims more than the pool
//! has fails cleanly.

use std::sync::Arc;

use datafusion::execution::memory_pool::{MemoryConsumer, MemoryPool, MemoryReservation};

use crate::exec::memory::{HostBudget, HostMemory};

/// One partition's reservation in the pool.
#[derive(Debug)]
pub(crate) struct PoolBudget {
    reservation: MemoryReservation,
}

impl PoolBudget {
    /// A budget of a consumer `name` registered in `pool`.
    pub(crate) fn register(pool: &Arc<dyn MemoryPool>, name: String) -> HostBudget {
        let reservation = MemoryConsumer::new(name).register(pool);
        HostBudget(Arc::new(Self { reservation }))
    }
}

impl HostMemory for PoolBudget {
    fn try_grow(&self, bytes: u64) -> Result<(), String> {
        let bytes = usize::try_from(bytes).map_err(|_| format!("{bytes} bytes do not fit"))?;
        self.reservation.try_grow(bytes).map_err(|e| e.to_string())
    }

    fn shrink(&self, bytes: u64) {
        let r = &self.reservation;
        // Never more than it holds: shrinking past zero panics.
        let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        let _ = r.try_shrink(bytes.min(r.size()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::execution::memory_pool::GreedyMemoryPool;

    #[test]
    fn reservations_come_from_the_pool_and_go_back() {
        let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(100));
        let HostBudget(a) = PoolBudget::register(&pool, "a".into());
        let HostBudget(b) = PoolBudget::register(&pool, "b".into());
        a.try_grow(70).unwrap();
        let e = b.try_grow(40).unwrap_err();
        assert!(e.contains("Resources exhausted"), "{e}");
        assert_eq!(pool.reserved(), 70);
        a.shrink(70);
        b.try_grow(40).unwrap();
        assert_eq!(pool.reserved(), 40);
        b.shrink(1000);
        assert_eq!(pool.reserved(), 0);
        assert!(a.try_grow(u64::MAX).is_err());
    }
}
