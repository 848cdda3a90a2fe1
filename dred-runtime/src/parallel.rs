//! Join rounds on every core: a round's delta is cut into [`Part`]s that the calling thread
//! and rayon's workers join against the relations, each into heads of its own, merged in
//! part order between rounds. No relation is written inside a join (indexes built on a
//! first probe are built once, behind a `OnceLock`), so the heads of a round do not depend
//! on which thread ran which part, and the parts together count the work the whole round
//! counts over the same tables.
//!
//! Facts, and every strategy's rounds, are therefore the same for every number of threads,
//! and so are explanations (a witness is the least instance, not the first found). Tables
//! filled from merged parts iterate in another order than tables filled by one thread,
//! though, as they do under another hash key; a search that stops at its first find counts
//! the rows it read in that order, so [`Strategy::Auto`](crate::Strategy::Auto)'s guard,
//! which reads counted work, may give up at another update.
//!
//! Only the rounds that carry no causes split: insertion, over-deletion and rederivation
//! rounds, and rederivation's derivability checks ([`derivable`]). A loss of support
//! ([`Admit::Held`]) pushes stamps in join order and chooses a head-first join per group,
//! and runs on the calling thread.

use std::collections::hash_set;
use std::hash::{BuildHasher, Hash};
use std::iter::{Skip, Take};

use crate::admit::Admit;
use crate::program::{Fact, FactSets, Program, Work};
use crate::relation::{FactHashState, FactSet, Stamp};

/// The share of a delta that one call of [`Program::fire`] joins: all of it, or one of
/// `count` parts.
///
/// A join that walks its delta fact by fact takes a contiguous run of the delta's facts;
/// one that groups its delta by key takes the keys whose hash falls in its share, so
/// that a group is never split (its later steps run once, as in one piece). A part also
/// carries which indexes were built when the round began, for the joins that may scan
/// instead of probing them: every part chooses as the whole round would.
///
/// ```
/// use dred_runtime::parallel::Part;
/// use dred_runtime::FactSet;
/// let delta: FactSet<(u32,)> = (0..10).map(|a| (a,)).collect();
/// let parts = Part::whole(0).split(3);
/// let mut walked: Vec<(u32,)> = parts.iter().flat_map(|part| part.rows(&delta).copied()).collect();
/// walked.sort_unstable();
/// assert_eq!(walked, (0..10).map(|a| (a,)).collect::<Vec<_>>());
/// let keys = (0..100u32).filter(|key| parts.iter().filter(|part| part.takes_key(key)).count() == 1);
/// assert_eq!(keys.count(), 100);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// The share walked: `span` of the delta's `count` equal slices, from slice `index`.
    index: usize,
    span: usize,
    count: usize,
    built: u64,
}

impl Part {
    /// The whole delta, with `built` the bits of [`Program::indexes_built`].
    pub fn whole(built: u64) -> Self {
        Part {
            index: 0,
            span: 1,
            count: 1,
            built,
        }
    }

    /// This part cut into `count` parts (at least 1) of about the same share.
    pub fn split(&self, count: usize) -> Vec<Part> {
        let count = count.max(1);
        let slices = self.count * count;
        let (from, to) = (self.index * count, (self.index + self.span) * count);
        let bound = |i: usize| from + (to - from) * i / count;
        (0..count)
            .map(|i| Part {
                index: bound(i),
                span: bound(i + 1) - bound(i),
                count: slices,
                built: self.built,
            })
            .collect()
    }

    /// This part cut in two: its first 1/`share` (`share` at least 1), and the rest.
    ///
    /// ```
    /// use dred_runtime::parallel::Part;
    /// use dred_runtime::FactSet;
    /// let delta: FactSet<(u32,)> = (0..640).map(|a| (a,)).collect();
    /// let (sample, rest) = Part::whole(0).cut(64);
    /// assert_eq!(sample.rows(&delta).count(), 10);
    /// assert_eq!(rest.rows(&delta).count(), 630);
    /// ```
    pub fn cut(&self, share: u32) -> (Part, Part) {
        let share = share.max(1) as usize;
        let (index, span, count) = (self.index * share, self.span * share, self.count * share);
        let first = Part {
            index,
            span: self.span,
            count,
            built: self.built,
        };
        let rest = Part {
            index: index + self.span,
            span: span - self.span,
            count,
            built: self.built,
        };
        (first, rest)
    }

    /// Whether this is the whole delta.
    #[inline]
    pub fn is_whole(&self) -> bool {
        self.count == 1
    }

    /// The facts of `set` that this part walks one by one: a contiguous run of its
    /// iteration order.
    #[inline]
    pub fn rows<'a, T>(&self, set: &'a FactSet<T>) -> Take<Skip<hash_set::Iter<'a, T>>> {
        let len = set.len();
        let start = len * self.index / self.count;
        let end = len * (self.index + self.span) / self.count;
        set.iter().skip(start).take(end - start)
    }

    /// Whether this part takes the delta facts grouped under `key`.
    #[inline]
    pub fn takes_key<K: Hash + ?Sized>(&self, key: &K) -> bool {
        if self.count == 1 {
            return true;
        }
        let hash = FactHashState.hash_one(key);
        // The hash's high bits scaled to the slices: its low bits choose table slots.
        let slice = ((u128::from(hash) * self.count as u128) >> 64) as usize;
        slice.wrapping_sub(self.index) < self.span
    }

    /// Whether the index numbered `bit` among those a scan choice reads was built when
    /// the round began (an index past the 64th always counts as built: it is probed).
    #[inline]
    pub fn built(&self, bit: u32) -> bool {
        bit >= 64 || self.built & (1 << bit) != 0
    }
}

/// [`Program::fire`], split over the program's threads when the delta is large and the
/// round carries no causes (see the [module](self) docs); on the calling thread otherwise.
pub fn fire<P: Program>(
    program: &P,
    delta: &P::Facts,
    admit: Admit<&P::Facts>,
    out: &mut P::Facts,
    stamped: &mut Vec<(Fact<P>, Stamp)>,
    work: &mut Work,
) {
    let whole = Part::whole(program.indexes_built());
    let before = work.units();
    if !admit.has_causes() && splits(program, delta.len(), work) {
        let parts = whole.split(program.bookkeeping().settings.threads());
        // Unless a spent budget may send the round back to run in one piece, the first
        // part adds to `out` itself, with the room its caller made.
        let mut first = match work.is_limited() {
            true => P::Facts::default(),
            false => std::mem::take(out),
        };
        if first.is_empty() {
            first.reserve_ratio_of(delta, 1, 2);
        }
        let others = other_parts(parts.len(), delta, 1, 2 * parts.len());
        let starts = std::iter::once(first).chain(others).collect();
        if fire_parts(program, delta, admit, &parts, starts, out, work) {
            work.rate_round(delta.len(), before);
            return;
        }
    }
    program.fire(delta, admit, out, stamped, work, &whole);
    work.rate_round(delta.len(), before);
}

/// [`fire`] for an insertion round whose heads go to the empty `out`, with room made for
/// them first. Rounds of a closure grow and shrink by several times from one to the next
/// (same-generation's double, those after a linear closure's largest halve), so any share
/// of the last round's size either grew the sets by doubling, rehashing their facts each
/// time, or left room unused when the model is at its largest.
///
/// So an unguarded round of at least [`SAMPLED_FROM`] delta facts, expected to count at
/// most [`SAMPLED_RATE`] units per delta fact, first joins two samples alone, each
/// 1/[`SAMPLE_SHARE`] of it, and estimates its distinct heads from them: as many per
/// sample as the samples found, unless the samples share heads, as when a head is
/// derived from many delta facts: then by capture and recapture, the product of the
/// samples' heads over those they share, which errs low where some heads are derived far
/// more often than others. The round's set gets room for that many, relation by relation
/// in the first sample's proportions (no more: a margin took tables past a power of two
/// at the memory peak), and the other parts' sets for their share. Any other round gets
/// room for half its delta's size.
pub fn fire_sized<P: Program>(program: &P, delta: &P::Facts, out: &mut P::Facts, work: &mut Work) {
    debug_assert!(out.is_empty(), "a round's heads start empty");
    let sampled = delta.len() >= SAMPLED_FROM && work.round_rate() <= SAMPLED_RATE;
    if work.is_limited() || !sampled {
        out.reserve_ratio_of(delta, 1, 2);
        return fire(program, delta, Admit::Absent, out, &mut Vec::new(), work);
    }
    let before = work.units();
    let (first_sample, rest) = Part::whole(program.indexes_built()).cut(SAMPLE_SHARE);
    let (second_sample, rest) = rest.cut(SAMPLE_SHARE - 1);
    let samples = [first_sample, second_sample];
    let split = splits(program, delta.len(), work);
    // Where the round splits, the samples are joined side by side, as its parts are.
    let (first, second) = match split.then(|| both_samples(program, delta, &samples, work)) {
        Some(Some(both)) => both,
        _ => sample_here(program, delta, &samples, work),
    };
    let (one, two) = (first.len().max(1), second.len());
    let shares = SAMPLE_SHARE as usize;
    let unshared = (one + two) * shares / 2;
    let expected = match first.common_len(&second) {
        0 => unshared,
        common => unshared.min(one * two / common),
    };
    // The samples' heads go first to the set with room for the round, and their tables
    // are freed.
    let found = one + two;
    out.reserve_ratio_of(&first, expected, one);
    out.merge_from(first);
    out.merge_from(second);
    let mut done = false;
    if split {
        let parts = rest.split(program.bookkeeping().settings.threads());
        // The first part adds to `out`; the others get room for their share.
        let others = other_parts(parts.len(), out, expected, found * parts.len());
        let starts = std::iter::once(std::mem::take(out)).chain(others).collect();
        done = fire_parts(program, delta, Admit::Absent, &parts, starts, out, work);
    }
    if !done {
        program.fire(delta, Admit::Absent, out, &mut Vec::new(), work, &rest);
    }
    work.rate_round(delta.len(), before);
}

/// Sets for the parts after the first of `count`, each with room for `times`/`share` as
/// many facts as `like` holds, relation by relation.
fn other_parts<F: FactSets>(count: usize, like: &F, times: usize, share: usize) -> Vec<F> {
    (1..count)
        .map(|_| {
            let mut heads = F::default();
            heads.reserve_ratio_of(like, times, share);
            heads
        })
        .collect()
}

/// [`fire_sized`]'s two samples, joined side by side on rayon's workers, with their work
/// added to `work`; `None` if the program's facts cannot cross threads.
fn both_samples<P: Program>(
    program: &P,
    delta: &P::Facts,
    samples: &[Part; 2],
    work: &mut Work,
) -> Option<(P::Facts, P::Facts)> {
    let starts = vec![P::Facts::default(), P::Facts::default()];
    let budget = work.remaining();
    let joined = program.fire_in_parts(delta, Admit::Absent, samples, &budget, starts);
    let [(first, first_work), (second, second_work)]: [_; 2] = joined.ok()?.try_into().ok()?;
    work.absorb(&first_work);
    work.absorb(&second_work);
    Some((first, second))
}

/// [`fire_sized`]'s two samples, joined on the calling thread.
fn sample_here<P: Program>(
    program: &P,
    delta: &P::Facts,
    samples: &[Part; 2],
    work: &mut Work,
) -> (P::Facts, P::Facts) {
    let [mut first, mut second] = [P::Facts::default(), P::Facts::default()];
    for (sample, heads) in samples.iter().zip([&mut first, &mut second]) {
        program.fire(delta, Admit::Absent, heads, &mut Vec::new(), work, sample);
    }
    (first, second)
}

/// [`fire_sized`] samples rounds of at least this many delta facts.
pub const SAMPLED_FROM: usize = 1 << 12;

/// [`fire_sized`] samples rounds expected to count at most this many units per delta
/// fact ([`Work::round_rate`]), as the rounds of a linear closure or of same-generation
/// do: there the heads' sets take much of a round's time. A round that counts many per
/// fact (a non-linear closure's, Andersen's) spends it in its joins, and the samples'
/// own passes over the delta (a join that groups the delta by key reads all of it for
/// each part) cost more than the room saves.
pub const SAMPLED_RATE: u64 = 8;

/// [`fire_sized`]'s samples are each this share of a round.
pub const SAMPLE_SHARE: u32 = 64;

/// [`Program::fire_in_parts`] on `parts`, each adding to its set of `starts`; merges
/// their heads into `out` ([`merge`]). Returns whether the parts ran (not if the
/// program's facts cannot cross threads, or the parts together spent `work`'s budget);
/// if not, `out` is the first of `starts` when the budget is unlimited, and as before
/// otherwise.
fn fire_parts<P: Program>(
    program: &P,
    delta: &P::Facts,
    admit: Admit<&P::Facts>,
    parts: &[Part],
    starts: Vec<P::Facts>,
    out: &mut P::Facts,
    work: &mut Work,
) -> bool {
    match program.fire_in_parts(delta, admit, parts, &work.remaining(), starts) {
        Ok(done) => merge(done, out, work),
        Err(first) if !work.is_limited() => {
            *out = first;
            false
        }
        Err(_) => false,
    }
}

/// Whether a round of `facts` delta facts (or candidates) splits: the program has more than
/// one thread, and the round is expected to count at least [`Settings::parallel_from`]
/// units, at the rate of the round before if that round was not much smaller
/// ([`Work::expected_rate`]).
///
/// [`Settings::parallel_from`]: crate::Settings::parallel_from
fn splits<P: Program>(program: &P, facts: usize, work: &Work) -> bool {
    let settings = &program.bookkeeping().settings;
    let expected = (facts as u64).saturating_mul(work.expected_rate(facts));
    settings.threads() > 1 && facts > 0 && expected >= settings.parallel_from()
}

/// [`Program::derivable`], split over the program's threads when there are many
/// candidates (see the [module](self) docs); on the calling thread otherwise.
pub fn derivable<P: Program>(program: &P, candidates: &P::Facts, work: &mut Work) -> P::Facts {
    if splits(program, candidates.len(), work) {
        let parts = Part::whole(0).split(program.bookkeeping().settings.threads());
        if let Some(done) = program.derivable_in_parts(candidates, &parts, &work.remaining()) {
            let mut derived = P::Facts::default();
            if merge(done, &mut derived, work) {
                return derived;
            }
        }
    }
    program.derivable(candidates, work, &Part::whole(0))
}

/// Adds the parts' heads to `out` and their work to `work`, unless together they spent
/// `work`'s budget: then nothing is added (the round runs again in one piece, to stop
/// where it would have stopped), and `false` is returned.
fn merge<F: FactSets>(done: Vec<(F, Work)>, out: &mut F, work: &mut Work) -> bool {
    let mut total = work.clone();
    for (_, part_work) in &done {
        if part_work.is_exhausted() {
            return false;
        }
        total.absorb(part_work);
    }
    if total.exhausted() {
        return false;
    }
    *work = total;
    for (heads, _) in done {
        out.merge_from(heads);
    }
    true
}

/// Runs [`Program::fire_in_parts`] and [`Program::derivable_in_parts`] on the calling
/// thread and rayon's workers, for programs whose facts may be shared across threads;
/// generated code calls them through [`OnThreads`] or, for a program with a column type
/// that is not `Send` and `Sync`, [`OnCaller`].
#[doc(hidden)]
pub struct Threads<'a, P>(pub &'a P);

/// The parts of a round on the calling thread and rayon's workers.
#[doc(hidden)]
pub trait OnThreads<P: Program> {
    /// See [`Program::fire_in_parts`].
    fn fire_in_parts(
        &self,
        delta: &P::Facts,
        admit: Admit<&P::Facts>,
        parts: &[Part],
        budget: &Work,
        starts: Vec<P::Facts>,
    ) -> Result<Vec<(P::Facts, Work)>, P::Facts>;

    /// See [`Program::derivable_in_parts`].
    fn derivable_in_parts(
        &self,
        candidates: &P::Facts,
        parts: &[Part],
        budget: &Work,
    ) -> Option<Vec<(P::Facts, Work)>>;
}

impl<P: Program + Sync> OnThreads<P> for Threads<'_, P>
where
    P::Facts: Send + Sync,
{
    fn fire_in_parts(
        &self,
        delta: &P::Facts,
        admit: Admit<&P::Facts>,
        parts: &[Part],
        budget: &Work,
        starts: Vec<P::Facts>,
    ) -> Result<Vec<(P::Facts, Work)>, P::Facts> {
        let program = self.0;
        let jobs = parts.iter().zip(starts).map(|(part, mut heads)| {
            move || {
                let mut work = budget.clone();
                program.fire(delta, admit, &mut heads, &mut Vec::new(), &mut work, part);
                (heads, work)
            }
        });
        Ok(here_and_on_workers(jobs))
    }

    fn derivable_in_parts(
        &self,
        candidates: &P::Facts,
        parts: &[Part],
        budget: &Work,
    ) -> Option<Vec<(P::Facts, Work)>> {
        let program = self.0;
        let jobs = parts.iter().map(|part| {
            move || {
                let mut work = budget.clone();
                let derived = program.derivable(candidates, &mut work, part);
                (derived, work)
            }
        });
        Some(here_and_on_workers(jobs))
    }
}

/// Runs `jobs` and returns their results in order: the first on the calling thread, the
/// others on rayon's workers meanwhile. A parallel iterator started from outside the pool
/// would block the calling thread until workers had woken and run every part; here the
/// calling thread works from the start and wakes only the workers the other parts need.
fn here_and_on_workers<T: Send, J: FnOnce() -> T + Send>(jobs: impl Iterator<Item = J>) -> Vec<T> {
    let mut jobs = jobs.fuse();
    let Some(first) = jobs.next() else {
        return Vec::new();
    };
    let others: Vec<J> = jobs.collect();
    let mut results: Vec<Option<T>> = others.iter().map(|_| None).collect();
    let mut first_result = None;
    rayon::in_place_scope(|scope| {
        for (job, slot) in others.into_iter().zip(results.iter_mut()) {
            scope.spawn(move |_| *slot = Some(job()));
        }
        first_result = Some(first());
    });
    std::iter::once(first_result)
        .chain(results)
        .map(|result| result.expect("a scope runs every job it spawns"))
        .collect()
}

/// The fallback of [`OnThreads`] for programs whose facts cannot cross threads: the round
/// runs in one piece on the calling thread.
#[doc(hidden)]
pub trait OnCaller<P: Program> {
    /// Always gives the first of `starts` back.
    fn fire_in_parts(
        &self,
        delta: &P::Facts,
        admit: Admit<&P::Facts>,
        parts: &[Part],
        budget: &Work,
        starts: Vec<P::Facts>,
    ) -> Result<Vec<(P::Facts, Work)>, P::Facts> {
        let _ = (delta, admit, parts, budget);
        Err(starts.into_iter().next().unwrap_or_default())
    }

    /// Always `None`.
    fn derivable_in_parts(
        &self,
        candidates: &P::Facts,
        parts: &[Part],
        budget: &Work,
    ) -> Option<Vec<(P::Facts, Work)>> {
        let _ = (candidates, parts, budget);
        None
    }
}

impl<P: Program> OnCaller<P> for &Threads<'_, P> {}

#[cfg(test)]
mod tests {
    use super::here_and_on_workers;

    #[test]
    fn jobs_give_their_results_in_order_the_first_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let jobs = (0..4).map(|i| move || (i * 10, std::thread::current().id()));
        let results = here_and_on_workers(jobs);
        let values: Vec<i32> = results.iter().map(|&(value, _)| value).collect();
        assert_eq!(values, [0, 10, 20, 30]);
        assert_eq!(results[0].1, caller);
        assert!(here_and_on_workers(std::iter::empty::<fn() -> u8>()).is_empty());
    }
}
