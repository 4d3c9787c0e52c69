//! The pinned pool's block choice on a real device: a request for which no
//! block of its own size class is free borrows a free block up to four
//! times larger before page-locking a new one.

use warpread::gpu::{GpuRuntime, PinnedPool};

#[test]
fn free_larger_blocks_serve_before_new_ones_are_pinned() {
    let rt = match GpuRuntime::open(0) {
        Ok(rt) => rt,
        Err(e) => {
            println!("pinned pool: skipped: no CUDA device ({e})");
            return;
        }
    };
    let mib = 1 << 20;
    let pool = PinnedPool::new(rt.context().clone(), 64 * mib, 0);
    let mut four = pool.take(3 * mib).unwrap().expect("under the cap");
    assert_eq!(four.slice_mut().len(), 4 * mib);
    assert_eq!(pool.held(), 4 * mib);
    // Blocks start at a huge page, so the kernel can back them with one.
    assert_eq!(four.prefix_ptr(1).unwrap() as usize % (2 * mib), 0);
    assert!(pool.contains(&four.slice_mut().as_slice()[..mib]));
    drop(four);
    // 1 MiB asked, the free 4 MiB block lent: nothing new pinned.
    let mut lent = pool.take(mib).unwrap().unwrap();
    assert_eq!(lent.slice_mut().len(), 4 * mib);
    assert_eq!(pool.held(), 4 * mib);
    // With that block out, a new 1 MiB block.
    let mut one = pool.take(mib).unwrap().unwrap();
    assert_eq!(one.slice_mut().len(), mib);
    assert_eq!(pool.held(), 5 * mib);
    drop((lent, one));
    // A free 16 MiB block is too large to lend for 1 MiB (with the 1 MiB
    // and 4 MiB blocks out, a new 1 MiB block is pinned).
    let sixteen = pool.take(16 * mib).unwrap().unwrap();
    drop(sixteen);
    let a = pool.take(mib).unwrap().unwrap();
    let b = pool.take(4 * mib).unwrap().unwrap();
    let held = pool.held();
    let mut c = pool.take(mib).unwrap().unwrap();
    assert_eq!(c.slice_mut().len(), mib);
    assert_eq!(pool.held(), held + mib);
    drop((a, b, c));
}
