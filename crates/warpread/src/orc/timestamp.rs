//! ORC timestamps to Arrow nanoseconds, as the ORC C++ library (and so
//! pyarrow) reads them.
//!
//! DATA holds seconds since 2015-01-01 00:00:00 *in the writer's time zone*,
//! SECONDARY the nanoseconds with trailing decimal zeros folded into the low
//! three bits. The reader (time zone GMT) keeps the writer's wall clock: it
//! adds the writer-zone epoch and then the writer zone's UTC offset at that
//! instant. A negative second with more than 999999 nanoseconds is moved one
//! second down, matching the Java writer's historical encoding.

use chrono::{Datelike, NaiveDate, Offset, TimeZone};
use chrono_tz::Tz;
use rayon::prelude::*;

/// 2015-01-01 00:00:00 UTC in Unix seconds.
const ORC_EPOCH_UTC: i64 = 1_420_070_400;

/// The last year chrono-tz lists transitions for: like `zic`'s classic
/// output it stops at 2037, and later instants would keep the last
/// transition's offset (standard time, for a zone with DST).
const LAST_LISTED_YEAR: i32 = 2037;

/// 2038-01-01 00:00:00 UTC in Unix seconds.
const FIRST_UNLISTED_UTC: i64 = 2_145_916_800;

/// Seconds in 400 Gregorian years, after which the calendar (weekdays
/// included) repeats exactly.
const GREGORIAN_CYCLE_SECS: i64 = 146_097 * 86_400;

/// The instant whose UTC offset in any zone equals `utc`'s under the zone's
/// current rules, within the years chrono-tz lists transitions for.
///
/// ORC C++ (so pyarrow) applies the zone's recurring rule (the POSIX TZ
/// string of the TZif file) past the last listed transition. Such rules are
/// phrased in months, days and weekdays, so a year with the same length and
/// the same weekday on January 1 has the same transitions on the same dates:
/// later instants move to the latest such year up to 2037 (every one of the
/// 14 kinds occurs in 2010-2037) by whole days, which keeps the time of day
/// and so the side of each transition. The 400-year cycle first brings far
/// years into 2038-2437 exactly.
fn listed_equivalent(utc: i64) -> i64 {
    if utc < FIRST_UNLISTED_UTC {
        return utc;
    }
    let utc = FIRST_UNLISTED_UTC + (utc - FIRST_UNLISTED_UTC) % GREGORIAN_CYCLE_SECS;
    let Some(year) = chrono::DateTime::from_timestamp(utc, 0).map(|d| d.year()) else {
        return utc;
    };
    let jan1 = |y| NaiveDate::from_ymd_opt(y, 1, 1).expect("a valid date");
    let kind = |y| (jan1(y).leap_year(), jan1(y).weekday());
    let same = (1..=28)
        .map(|k| LAST_LISTED_YEAR + 1 - k)
        .find(|&y| kind(y) == kind(year))
        .expect("every year kind occurs in 28 consecutive years without a skipped leap day");
    utc - (jan1(year) - jan1(same)).num_seconds()
}

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
    // Each value on its own: in parallel for a stripe's millions of rows.
    Ok(secs
        .par_iter()
        .zip(nanos)
        .with_min_len(1 << 14)
        .map(|(&s, &n)| {
            let n = decode_nanos(n);
            let mut t = match &zone {
                Zone::Utc => s.wrapping_add(ORC_EPOCH_UTC),
                Zone::Named { tz, epoch } => {
                    let utc = s.wrapping_add(*epoch);
                    let offset = chrono::DateTime::from_timestamp(listed_equivalent(utc), 0)
                        .map_or(0, |d| {
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

    #[test]
    fn dst_continues_past_2037() {
        let secs = |y, m, d, h| {
            NaiveDate::from_ymd_opt(y, m, d)
                .and_then(|d| d.and_hms_opt(h, 0, 0))
                .unwrap()
                .and_utc()
                .timestamp()
        };
        // What a writer stores for wall clock W in a zone at UTC offset
        // `off` hours whose 2015-01-01 epoch had offset `epoch_off`: the
        // instant minus the zone's epoch.
        let stored = |w: i64, off: i64, epoch_off: i64| {
            (w - off * 3600) - (ORC_EPOCH_UTC - epoch_off * 3600)
        };
        for (y, m, d, off) in [
            (2037, 7, 1, -7),
            (2100, 5, 5, -7),
            (2100, 12, 5, -8),
            (2200, 7, 1, -7),
            (2260, 3, 20, -7),
            (2261, 11, 20, -8),
        ] {
            let w = secs(y, m, d, 12);
            let v = to_nanos(&[stored(w, off, -8)], &[0], Some("US/Pacific")).unwrap();
            assert_eq!(v[0], w * 1_000_000_000, "{y}-{m}-{d}");
        }
        // Southern hemisphere: DST across the new year, not in July.
        for (y, m, off) in [(2101, 1, 11), (2101, 7, 10)] {
            let w = secs(y, m, 1, 12);
            let v = to_nanos(&[stored(w, off, 11)], &[0], Some("Australia/Sydney")).unwrap();
            assert_eq!(v[0], w * 1_000_000_000, "{y}-{m}");
        }
    }

    #[test]
    fn equivalent_years_keep_the_calendar() {
        for utc in [
            FIRST_UNLISTED_UTC,
            FIRST_UNLISTED_UTC + 12_345_678_901,
            i64::MAX / 2,
        ] {
            let e = listed_equivalent(utc);
            assert!((FIRST_UNLISTED_UTC - 28 * 366 * 86_400..FIRST_UNLISTED_UTC).contains(&e));
            assert_eq!((utc - e).rem_euclid(7 * 86_400), 0, "same weekday");
        }
    }
}
