//! ORC timestamps to Arrow nanoseconds, as the ORC C++ library (and so
//! pyarrow) reads them.
//!
//! DATA holds seconds since 2015-01-01 00:00:00 *in the writer's time zone*,
//! SECONDARY the nanoseconds with trailing decimal zeros folded into the low
//! three bits. The reader (time zone GMT) keeps the writer's wall clock: it
//! adds the writer-zone epoch and then the writer zone's UTC offset at that
//! instant. A negative second with more than 999999 nanoseconds is moved one
//! second down, matching the Java writer's historical encoding.

use chrono::{NaiveDate, Offset, TimeZone};
use chrono_tz::Tz;

/// 2015-01-01 00:00:00 UTC in Unix seconds.
const ORC_EPOCH_UTC: i64 = 1_420_070_400;

/// Decodes the SECONDARY stream's encoding of nanoseconds. The C++ writer
/// stores the (negative) nanoseconds of pre-1970 instants as two's
/// complement, and its reader shifts them arithmetically: so do we.
pub fn decode_nanos(v: u64) -> i64 {
    let zeros = v & 7;
    let mut n = (v as i64) >> 3;
    if zeros != 0 {
        for _ in 0..=zeros {
            n = n.wrapping_mul(10);
        }
    }
    n
}

enum Zone {
    Utc,
    Named { tz: Tz, epoch: i64 },
}

fn zone(name: Option<&str>) -> Result<Zone, String> {
    let Some(name) = name else {
        return Ok(Zone::Utc);
    };
    if matches!(name, "UTC" | "GMT" | "Etc/UTC" | "Etc/GMT" | "Z") {
        return Ok(Zone::Utc);
    }
    let tz: Tz = name
        .parse()
        .map_err(|_| format!("unknown writer time zone {name:?}"))?;
    let local = NaiveDate::from_ymd_opt(2015, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .expect("a valid date");
    let epoch = tz
        .from_local_datetime(&local)
        .earliest()
        .ok_or_else(|| format!("2015-01-01 does not exist in {name}"))?
        .timestamp();
    Ok(Zone::Named { tz, epoch })
}

/// Combines seconds and encoded nanoseconds into Unix nanoseconds for the
/// given writer time zone (`None`: UTC, as for timestamps with local time
/// zone, which are instants).
pub fn to_nanos(secs: &[i64], nanos: &[u64], writer_tz: Option<&str>) -> Result<Vec<i64>, String> {
    if nanos.len() != secs.len() {
        return Err(format!(
            "{} seconds but {} nanoseconds values",
            secs.len(),
            nanos.len()
        ));
    }
    let zone = zone(writer_tz)?;
    Ok(secs
        .iter()
        .zip(nanos)
        .map(|(&s, &n)| {
            let n = decode_nanos(n);
            let mut t = match &zone {
                Zone::Utc => s.wrapping_add(ORC_EPOCH_UTC),
                Zone::Named { tz, epoch } => {
                    let utc = s.wrapping_add(*epoch);
                    let offset = chrono::DateTime::from_timestamp(utc, 0).map_or(0, |d| {
                        i64::from(
                            tz.offset_from_utc_datetime(&d.naive_utc())
                                .fix()
                                .local_minus_utc(),
                        )
                    });
                    utc.wrapping_add(offset)
                }
            };
            if t < 0 && n > 999_999 {
                t -= 1;
            }
            t.wrapping_mul(1_000_000_000).wrapping_add(n)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanos_encoding() {
        assert_eq!(decode_nanos(0), 0);
        assert_eq!(decode_nanos(5 << 3), 5);
        // 1000 = 1 with 3 zeros: stored as 1 << 3 | 2.
        assert_eq!(decode_nanos(1 << 3 | 2), 1000);
    }

    #[test]
    fn utc_and_named_zones() {
        let v = to_nanos(&[0, -1], &[0, 0], None).unwrap();
        assert_eq!(v[0], ORC_EPOCH_UTC * 1_000_000_000);
        assert_eq!(v[1], (ORC_EPOCH_UTC - 1) * 1_000_000_000);
        // A Los Angeles writer's 2015-01-01 00:00 wall clock reads as that
        // wall clock in UTC.
        let v = to_nanos(&[0], &[0], Some("America/Los_Angeles")).unwrap();
        assert_eq!(v[0], ORC_EPOCH_UTC * 1_000_000_000);
        assert!(to_nanos(&[0], &[0], Some("Mars/Base")).is_err());
    }
}
