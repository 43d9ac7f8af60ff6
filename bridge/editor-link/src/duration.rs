//! Durations from numbers people and peers send (`TimeoutSeconds: 1e19`,
//! `--time-scale 1e300`), without the panics of `Duration::from_secs_f64`
//! and `Instant + Duration` on huge, negative or NaN values.

use std::time::{Duration, Instant};

/// The longest duration any of this project's timers takes: ten years is
/// "never" for a tool call, and leaves room to add to an `Instant`.
pub const LONGEST: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// `seconds` as a duration: NaN and negatives are zero, anything longer
/// than [`LONGEST`] is [`LONGEST`].
pub fn saturating_seconds(seconds: f64) -> Duration {
    if seconds.is_nan() || seconds <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(seconds).map_or(LONGEST, |d| d.min(LONGEST))
}

/// `from + after`, or [`LONGEST`] from `from` when that would overflow.
pub fn instant_after(from: Instant, after: Duration) -> Instant {
    from.checked_add(after.min(LONGEST)).unwrap_or(from + LONGEST.min(Duration::from_secs(3600)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_number_is_a_duration() {
        assert_eq!(saturating_seconds(1.5), Duration::from_millis(1500));
        assert_eq!(saturating_seconds(-3.0), Duration::ZERO);
        assert_eq!(saturating_seconds(f64::NAN), Duration::ZERO);
        assert_eq!(saturating_seconds(1e19), LONGEST);
        assert_eq!(saturating_seconds(f64::INFINITY), LONGEST);
        let now = Instant::now();
        assert!(instant_after(now, Duration::MAX) > now);
    }
}
