//! NVRTC compilation of one kernel source to a CUBIN for the device's exact
//! architecture, cached on disk by a hash of everything that affects the
//! result (sources, options, NVRTC version, architecture).

use std::borrow::Cow;
use std::ffi::{CStr, CString, c_char};
use std::path::{Path, PathBuf};

use cudarc::nvrtc::sys;

use super::kernels::{HEADERS, KernelSource};
use super::launch;
use crate::error::{Error, Result};

/// FNV-1a, 64-bit: stable across Rust versions, unlike `DefaultHasher`.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for p in parts {
        for &b in *p {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        // separate parts so that ("ab","c") and ("a","bc") differ
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// How a runtime compiles its kernels (from its [`CudaOptions`](super::CudaOptions)).
#[derive(Debug, Clone)]
pub struct Compile {
    /// Folder of cached CUBINs (`None`: none kept).
    pub cache: Option<PathBuf>,
    /// Folder of replacement kernel sources.
    pub kernel_dir: Option<PathBuf>,
    /// Launch shape of the GSST kernels, passed as defines.
    pub gsst_shape: launch::GsstShape,
}

/// The text NVRTC compiles for `src`: the file of that name in `dir` when
/// given and the file exists, else the source built into the binary.
fn source_text(src: &KernelSource, dir: Option<&Path>) -> Result<Cow<'static, str>> {
    let Some(dir) = dir else {
        return Ok(src.text.into());
    };
    let path = dir.join(src.file);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            tracing::info!("kernel source {} from {}", src.file, path.display());
            Ok(text.into())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(src.text.into()),
        Err(e) => Err(Error::KernelCompile {
            kernel: src.file.to_string(),
            log: format!("reading the override {}: {e}", path.display()),
        }),
    }
}

fn nvrtc_version() -> (i32, i32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: out-pointers to locals; probe() has checked that NVRTC loads.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    (major, minor)
}

/// NVRTC options: the architecture and the launch constants as defines
/// (so the cache key below covers the GSST shape too).
fn options(arch: &str, shape: &launch::GsstShape) -> Vec<String> {
    let mut o = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
        "--device-as-default-execution-space".to_string(),
        "-lineinfo".to_string(),
    ];
    o.extend(launch::defines(shape));
    o
}

/// The cache key of a compilation: everything NVRTC's output depends on,
/// the options (and with them the launch-shape defines) included.
fn cache_key(text: &str, headers: &[Cow<'static, str>], opts: &[String], version: &str) -> u64 {
    let joined = opts.join(" ");
    let mut parts = vec![text.as_bytes()];
    parts.extend(headers.iter().map(|h| h.as_bytes()));
    parts.extend([joined.as_bytes(), version.as_bytes()]);
    fnv1a(&parts)
}

/// Returns the CUBIN of `src` for `arch` (e.g. `sm_90`), from `how`'s cache
/// when present, else compiled and stored there. Cache I/O problems only cost a
/// recompile.
pub fn cubin(src: &KernelSource, arch: &str, how: &Compile) -> Result<Vec<u8>> {
    let text = source_text(src, how.kernel_dir.as_deref())?;
    let headers = HEADERS
        .iter()
        .map(|h| source_text(h, how.kernel_dir.as_deref()))
        .collect::<Result<Vec<_>>>()?;
    let opts = options(arch, &how.gsst_shape);
    let (major, minor) = nvrtc_version();
    let key = cache_key(&text, &headers, &opts, &format!("{major}.{minor}"));
    let stem = src.file.trim_end_matches(".cu");
    let path = how
        .cache
        .as_ref()
        .map(|d| d.join(format!("{stem}-{arch}-{key:016x}.cubin")));
    if let Some(p) = &path
        && let Ok(bytes) = std::fs::read(p)
    {
        tracing::debug!("kernel cache hit {}", p.display());
        return Ok(bytes);
    }
    let t = std::time::Instant::now();
    let bin = compile(src.file, &text, &headers, &opts)?;
    tracing::info!("compiled {} for {arch} in {:.2?}", src.file, t.elapsed());
    if let Some(p) = &path {
        let tmp = p.with_extension(format!("tmp{}", std::process::id()));
        let stored = p
            .parent()
            .map(std::fs::create_dir_all)
            .transpose()
            .and_then(|_| std::fs::write(&tmp, &bin))
            .and_then(|_| std::fs::rename(&tmp, p));
        if let Err(e) = stored {
            tracing::warn!("kernel cache not written ({}): {e}", p.display());
        }
    }
    Ok(bin)
}

struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram, destroyed once.
        unsafe { sys::nvrtcDestroyProgram(&mut self.0) };
    }
}

fn check(r: sys::nvrtcResult, file: &str, what: &str) -> Result<()> {
    if r == sys::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(Error::KernelCompile {
            kernel: file.to_string(),
            log: format!("{what} failed: {r:?}"),
        })
    }
}

fn compile(
    file: &str,
    text: &str,
    headers: &[Cow<'static, str>],
    opts: &[String],
) -> Result<Vec<u8>> {
    let cstr = |s: &str| {
        CString::new(s).map_err(|_| Error::KernelCompile {
            kernel: file.to_string(),
            log: "source contains a NUL byte".into(),
        })
    };
    let text = cstr(text)?;
    let name = cstr(file)?;
    let texts = headers
        .iter()
        .map(|h| cstr(h))
        .collect::<Result<Vec<_>>>()?;
    let names = HEADERS
        .iter()
        .map(|h| cstr(h.file))
        .collect::<Result<Vec<_>>>()?;
    let header_ptrs: Vec<*const c_char> = texts.iter().map(|c| c.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = names.iter().map(|c| c.as_ptr()).collect();
    let mut prog: sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: all pointers outlive the call; NVRTC copies the strings.
    let r = unsafe {
        sys::nvrtcCreateProgram(
            &mut prog,
            text.as_ptr(),
            name.as_ptr(),
            header_ptrs.len() as i32,
            header_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
    };
    check(r, file, "nvrtcCreateProgram")?;
    let prog = Program(prog);
    let copts: Vec<CString> = opts.iter().map(|o| cstr(o)).collect::<Result<_>>()?;
    let optp: Vec<*const c_char> = copts.iter().map(|c| c.as_ptr()).collect();
    // SAFETY: option strings outlive the call.
    let r = unsafe { sys::nvrtcCompileProgram(prog.0, optp.len() as i32, optp.as_ptr()) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(Error::KernelCompile {
            kernel: file.to_string(),
            log: program_log(&prog),
        });
    }
    let mut size = 0usize;
    // SAFETY: out-pointer to a local.
    check(
        unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) },
        file,
        "nvrtcGetCUBINSize",
    )?;
    let mut bin = vec![0u8; size];
    // SAFETY: the buffer holds `size` bytes as NVRTC asked.
    check(
        unsafe { sys::nvrtcGetCUBIN(prog.0, bin.as_mut_ptr().cast()) },
        file,
        "nvrtcGetCUBIN",
    )?;
    let log = program_log(&prog);
    if !log.trim().is_empty() {
        tracing::debug!("NVRTC log for {file}: {log}");
    }
    Ok(bin)
}

fn program_log(prog: &Program) -> String {
    let mut size = 0usize;
    // SAFETY: out-pointer to a local.
    if unsafe { sys::nvrtcGetProgramLogSize(prog.0, &mut size) } != sys::nvrtcResult::NVRTC_SUCCESS
    {
        return "(no log)".into();
    }
    let mut buf = vec![0u8; size.max(1)];
    // SAFETY: the buffer holds `size` bytes.
    unsafe { sys::nvrtcGetProgramLog(prog.0, buf.as_mut_ptr().cast()) };
    CStr::from_bytes_until_nul(&buf)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_only_the_files_they_hold() {
        let dir = std::env::temp_dir().join(format!("warpread-kdir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("inflate.cu"), "// variant").unwrap();
        let text = |src, d| source_text(src, d).unwrap().into_owned();
        assert_eq!(
            text(&super::super::kernels::INFLATE, Some(&dir)),
            "// variant"
        );
        assert_eq!(
            text(&super::super::kernels::CRC32, Some(&dir)),
            super::super::kernels::CRC32.text
        );
        assert_eq!(
            text(&super::super::kernels::INFLATE, None),
            super::super::kernels::INFLATE.text
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn hash_separates_parts_and_is_stable() {
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
        assert_eq!(fnv1a(&[b"warpread"]), fnv1a(&[b"warpread"]));
    }

    #[test]
    fn options_carry_arch_and_constants() {
        for shape in [
            launch::GsstShape::DEFAULT,
            launch::GsstShape::new(256, 5, 4).unwrap(),
        ] {
            let o = options("sm_90", &shape);
            assert!(o.contains(&"--gpu-architecture=sm_90".to_string()));
            assert!(o.iter().any(|x| x.starts_with("-DCODAG_WARPS_PER_BLOCK=")));
            for d in shape.defines() {
                assert!(o.contains(&d), "{d} missing from {o:?}");
            }
        }
    }

    #[test]
    fn cache_key_covers_every_header() {
        let opts = options("sm_90", &launch::GsstShape::DEFAULT);
        let key =
            |a: &'static str, b: &'static str| cache_key("k", &[a.into(), b.into()], &opts, "13.0");
        assert_ne!(key("codag", "deflate"), key("codag", "deflate v2"));
        assert_ne!(key("codag", "deflate"), key("codag v2", "deflate"));
        assert_eq!(HEADERS.len(), 2);
        assert!(
            HEADERS
                .iter()
                .all(|h| h.file.ends_with(".cuh") && !h.text.is_empty())
        );
    }

    #[test]
    fn cache_key_covers_the_gsst_shape() {
        let opts = |s: launch::GsstShape| options("sm_90", &s);
        let base = launch::GsstShape::DEFAULT;
        let key = |s| cache_key("k", &["h".into()], &opts(s), "13.0");
        let shapes = [
            base,
            launch::GsstShape::new(256, 5, 4).unwrap(),
            launch::GsstShape::new(192, 4, 4).unwrap(),
            launch::GsstShape::new(192, 5, 6).unwrap(),
        ];
        for (i, a) in shapes.iter().enumerate() {
            for b in &shapes[i + 1..] {
                assert_ne!(key(*a), key(*b), "{a} and {b} share a cache entry");
            }
        }
        assert_eq!(key(base), key(base));
    }
}
