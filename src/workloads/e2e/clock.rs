//! Whether the CPU clock fell during a point: a reading over its first second against one
//! over its last (passively cooled boards throttle after half a minute). Taken beside the
//! load by a thread of its own, bounded by the point's length.

use crate::sys::clock::Sampler;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The clock counts as fallen below this share of its first reading.
const FELL_BELOW: f64 = 0.95;
/// Each reading's length.
const READING_S: f64 = 0.8;

pub struct ClockWatch(Option<JoinHandle<Option<bool>>>);

impl ClockWatch {
    /// Starts with a load of `duration_s`; none for a point too short for two readings.
    pub fn start(duration_s: u32) -> ClockWatch {
        let d = duration_s as f64;
        if d < 2.0 * READING_S + 0.2 {
            return ClockWatch(None);
        }
        let t0 = Instant::now();
        ClockWatch(Some(std::thread::spawn(move || {
            let first = reading(t0, 0.1)?;
            let last = reading(t0, d - READING_S - 0.1)?;
            Some(last < FELL_BELOW * first)
        })))
    }

    /// True: the clock fell; false: it held; None: not observable here (no clock source,
    /// a point too short, or stopped).
    pub fn finish(self) -> Option<bool> {
        self.0.and_then(|h| h.join().ok().flatten())
    }
}

/// The mean clock (MHz) over READING_S from `from_s` after `t0`; None when stopped or no
/// source reads.
fn reading(t0: Instant, from_s: f64) -> Option<f64> {
    sleep_until(t0 + Duration::from_secs_f64(from_s))?;
    let s = Sampler::start()?;
    sleep_until(Instant::now() + Duration::from_secs_f64(READING_S))?;
    s.stop().map(|r| r.mhz)
}

/// Sleeps in short steps, so that a stop (Ctrl-C) is never waited out.
fn sleep_until(t: Instant) -> Option<()> {
    while Instant::now() < t {
        if crate::measure::stopped() {
            return None;
        }
        std::thread::sleep(
            Duration::from_millis(20).min(t.saturating_duration_since(Instant::now())),
        );
    }
    Some(())
}
