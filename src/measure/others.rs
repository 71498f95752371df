//! Other processes' CPU while a point's trials ran: the machine's busy time (/proc/stat)
//! less our own (the process CPU clock).
//!
//! /proc/stat counts whole ticks, so one short window's busy time is off by up to a tick
//! either way. Clamping each window's difference at zero and then summing made the error
//! one-sided: a 3 ms trial that caught a tick added up to 10 ms of "others", one that
//! missed it could not subtract (16.5% of an idle 2-CPU machine at 3 ms trials). So the
//! differences are summed unclamped over the whole point, where the tick errors cancel,
//! and clamped once; a trial is judged disturbed only over a stretch of the point's trials
//! long enough to hold many ticks.

/// How the figure is measured, for the record's environment.
pub const METHOD: &str = "/proc/stat busy time less this process's CPU clock, each summed over all of a point's trials before the difference; in percent of every CPU /proc/stat counts";

/// The least span of trials over which a disturbance is judged: ten ticks at least.
const STRETCH_TICKS: f64 = 10.0;
const STRETCH_MIN_S: f64 = 0.1;
/// A stretch is disturbed when others took at least half of one CPU over it.
const DISTURBED_SHARE_OF_ONE_CPU: f64 = 0.5;

/// Sums of busy, own and window seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sums {
    busy_s: f64,
    own_s: f64,
    window_s: f64,
    trials: u32,
}

impl Sums {
    fn add(&mut self, busy_s: f64, own_s: f64, window_s: f64) {
        self.busy_s += busy_s;
        self.own_s += own_s;
        self.window_s += window_s;
        self.trials += 1;
    }

    /// Others' CPU seconds: busy less own, at least 0 and at most what the CPUs had left.
    fn others_s(&self, cpus: usize) -> f64 {
        (self.busy_s - self.own_s).clamp(0.0, (self.window_s * cpus as f64 - self.own_s).max(0.0))
    }
}

/// Others' CPU over one point's trials.
#[derive(Clone, Debug)]
pub struct OthersCpu {
    cpus: usize,
    tick_s: f64,
    point: Sums,
    /// The trials not yet judged (shorter together than a stretch).
    stretch: Sums,
    disturbed_trials: u32,
}

impl OthersCpu {
    /// For a machine of `cpus` CPUs whose /proc/stat counts `ticks_per_s`.
    pub fn new(cpus: usize, ticks_per_s: f64) -> OthersCpu {
        OthersCpu {
            cpus,
            tick_s: 1.0 / ticks_per_s.max(1.0),
            point: Sums::default(),
            stretch: Sums::default(),
            disturbed_trials: 0,
        }
    }

    fn stretch_s(&self) -> f64 {
        (STRETCH_TICKS * self.tick_s).max(STRETCH_MIN_S)
    }

    /// One trial: the machine's busy seconds and ours over its window.
    pub fn add(&mut self, busy_s: f64, own_s: f64, window_s: f64) {
        self.point.add(busy_s, own_s, window_s);
        self.stretch.add(busy_s, own_s, window_s);
        if self.stretch.window_s >= self.stretch_s() {
            if self.disturbed(&self.stretch) {
                self.disturbed_trials += self.stretch.trials;
            }
            self.stretch = Sums::default();
        }
    }

    /// A stretch shorter than [`STRETCH_TICKS`] (the end of a short point) must show more
    /// than two ticks' worth, which its reading error alone cannot.
    fn disturbed(&self, s: &Sums) -> bool {
        let floor = if s.window_s >= self.stretch_s() {
            0.0
        } else {
            2.0 * self.tick_s
        };
        s.trials > 0
            && s.others_s(self.cpus) >= (DISTURBED_SHARE_OF_ONE_CPU * s.window_s).max(floor)
    }

    /// Trials that ran while others took at least half a CPU, the last short stretch
    /// included.
    pub fn disturbed_trials(&self) -> u32 {
        self.disturbed_trials
            + if self.disturbed(&self.stretch) {
                self.stretch.trials
            } else {
                0
            }
    }

    /// Others' CPU seconds over the point.
    pub fn seconds(&self) -> f64 {
        self.point.others_s(self.cpus)
    }

    /// Others' CPU in percent of every CPU of the machine, 0 to 100.
    pub fn pct(&self) -> f64 {
        share_pct(self.seconds(), self.point.window_s, self.cpus)
    }
}

/// Other processes' CPU seconds over a window, as a share of all `cpus` CPUs, in percent.
pub fn share_pct(others_s: f64, window_s: f64, cpus: usize) -> f64 {
    if window_s <= 0.0 || cpus == 0 {
        return 0.0;
    }
    (others_s / (window_s * cpus as f64) * 100.0).clamp(0.0, 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An idle machine read at 100 ticks/s in 3 ms windows: our own 3 ms of CPU shows as
    /// 0 or 10 ms of busy time, in proportion (3 in 10 windows catch a tick).
    #[test]
    fn tick_errors_cancel_over_the_point() {
        let mut o = OthersCpu::new(2, 100.0);
        for k in 0..1000 {
            let busy = if k % 10 < 3 { 0.010 } else { 0.0 };
            o.add(busy, 0.003, 0.003);
        }
        assert!(o.pct() < 0.01, "{}", o.pct());
        assert_eq!(o.disturbed_trials(), 0);
        // The old rule (clamp each window, then sum) read 300 × 7 ms over 3 s of 2 CPUs.
        let clamped: f64 = (0..1000)
            .map(|k| if k % 10 < 3 { 0.007 } else { 0.0 })
            .sum();
        assert!((share_pct(clamped, 3.0, 2) - 35.0).abs() < 1e-9);
    }

    /// One CPU of two busy with another process: half the machine.
    #[test]
    fn a_busy_cpu_is_half_of_two() {
        let mut o = OthersCpu::new(2, 100.0);
        for k in 0..1020 {
            // Our 3 ms plus the other CPU's 3 ms, read in whole ticks.
            let busy = if k % 10 < 6 { 0.010 } else { 0.0 };
            o.add(busy, 0.003, 0.003);
        }
        assert!((o.pct() - 50.0).abs() < 1e-6, "{}", o.pct());
        // Thirty whole stretches of 34 trials (100 ms), each disturbed.
        assert_eq!(o.disturbed_trials(), 1020);
    }

    #[test]
    fn a_short_burst_marks_only_its_stretch() {
        let mut o = OthersCpu::new(2, 100.0);
        // 100 ms stretches of 3 ms trials: 34 trials each. The second stretch is busy.
        for k in 0..102 {
            let busy = if (34..68).contains(&k) { 0.006 } else { 0.003 };
            o.add(busy, 0.003, 0.003);
        }
        assert_eq!(o.disturbed_trials(), 34);
    }

    #[test]
    fn a_short_point_needs_more_than_its_reading_error() {
        // Five 3 ms trials, one catching a tick: 7 ms of "others" in 15 ms is no evidence.
        let mut o = OthersCpu::new(2, 100.0);
        for k in 0..5 {
            o.add(if k == 0 { 0.010 } else { 0.0 }, 0.003, 0.003);
        }
        assert_eq!(o.disturbed_trials(), 0);
        // Thirty ms of others over ten 3 ms trials (the whole other CPU) is: more than two
        // ticks' reading error.
        let mut o = OthersCpu::new(2, 100.0);
        for _ in 0..10 {
            o.add(0.006, 0.003, 0.003);
        }
        assert_eq!(o.disturbed_trials(), 10);
    }

    #[test]
    fn never_beyond_the_machine() {
        let mut o = OthersCpu::new(2, 100.0);
        o.add(0.05, 0.01, 0.015);
        assert!((o.seconds() - 0.02).abs() < 1e-12);
        assert_eq!(share_pct(0.4, 0.1, 2), 100.0);
        assert_eq!(share_pct(1.0, 0.0, 2), 0.0);
        let mut none = OthersCpu::new(2, 100.0);
        none.add(0.005, 0.01, 0.015);
        assert_eq!(none.seconds(), 0.0);
    }
}
