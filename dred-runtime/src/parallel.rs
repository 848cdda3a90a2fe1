//! Join rounds on every core: a round's delta is cut into [`Part`]s that rayon's workers
//! join against the relations, each into heads of its own, merged in part order between
//! rounds. No relation is written inside a join (indexes built on a first probe are built
//! once, behind a `OnceLock`), so the heads of a round do not depend on which thread ran
//! which part, and the parts together count the work the whole round counts over the same
//! tables.
//!
//! Facts, and every strategy's rounds, are therefore the same for every number of threads,
//! and so are explanations (a witness is the least instance, not the first found). Tables
//! filled from merged parts iterate in another order than tables filled by one thread,
//! though, as they do under another hash key; a search that stops at its first find counts
//! the rows it read in that order, so [`Strategy::Auto`](crate::Strategy::Auto)'s guard,
//! which reads counted work, may give up at another update.
//!
//! Only the rounds that carry no causes split: insertion, over-deletion and rederivation
//! rounds, and rederivation's derivability checks ([`derivable`]). A loss of support ([`Admit::Held`]) pushes stamps in join order and chooses a
//! head-first join per group, and runs on the calling thread.

use std::collections::hash_set;
use std::hash::{BuildHasher, Hash};
use std::iter::{Skip, Take};

use rayon::prelude::*;

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
    index: usize,
    count: usize,
    built: u64,
}

impl Part {
    /// The whole delta, with `built` the bits of [`Program::indexes_built`].
    pub fn whole(built: u64) -> Self {
        Part {
            index: 0,
            count: 1,
            built,
        }
    }

    /// This part cut into `count` parts (at least 1).
    pub fn split(&self, count: usize) -> Vec<Part> {
        let count = count.max(1);
        (0..count)
            .map(|index| Part {
                index,
                count,
                built: self.built,
            })
            .collect()
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
        let end = len * (self.index + 1) / self.count;
        set.iter().skip(start).take(end - start)
    }

    /// Whether this part takes the delta facts grouped under `key`.
    #[inline]
    pub fn takes_key<K: Hash + ?Sized>(&self, key: &K) -> bool {
        if self.count == 1 {
            return true;
        }
        let hash = FactHashState.hash_one(key);
        // The hash's high bits scaled to the parts: its low bits choose table slots.
        ((u128::from(hash) * self.count as u128) >> 64) as usize == self.index
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
        let first = match work.is_limited() {
            true => P::Facts::default(),
            false => std::mem::take(out),
        };
        match program.fire_in_parts(delta, admit, &parts, &work.remaining(), first) {
            Ok(done) => {
                if merge(done, out, work) {
                    work.rate_round(delta.len(), before);
                    return;
                }
            }
            Err(first) if !work.is_limited() => *out = first,
            Err(_) => {}
        }
    }
    program.fire(delta, admit, out, stamped, work, &whole);
    work.rate_round(delta.len(), before);
}

/// Whether a round of `facts` delta facts (or candidates) splits: the program has more than
/// one thread, and the round is expected to count at least [`Settings::parallel_from`]
/// units, at the rate of the round before.
///
/// [`Settings::parallel_from`]: crate::Settings::parallel_from
fn splits<P: Program>(program: &P, facts: usize, work: &Work) -> bool {
    let settings = &program.bookkeeping().settings;
    let expected = (facts as u64).saturating_mul(work.round_rate());
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

/// Runs [`Program::fire_in_parts`] and [`Program::derivable_in_parts`] on rayon's
/// workers, for programs whose facts may be shared across threads; generated code calls
/// them through [`OnThreads`] or, for a program with a column type that is not `Send` and
/// `Sync`, [`OnCaller`].
#[doc(hidden)]
pub struct Threads<'a, P>(pub &'a P);

/// The parts of a round on rayon's workers.
#[doc(hidden)]
pub trait OnThreads<P: Program> {
    /// See [`Program::fire_in_parts`].
    fn fire_in_parts(
        &self,
        delta: &P::Facts,
        admit: Admit<&P::Facts>,
        parts: &[Part],
        budget: &Work,
        first: P::Facts,
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
        first: P::Facts,
    ) -> Result<Vec<(P::Facts, Work)>, P::Facts> {
        let program = self.0;
        // The first part's set has room for the whole round's heads (its caller's, or as
        // the insertion rounds reserve); the others, for their share.
        let mut first = first;
        if first.is_empty() {
            first.reserve_share_of(delta, 2);
        }
        let rest = (1..parts.len()).map(|_| {
            let mut heads = P::Facts::default();
            heads.reserve_share_of(delta, 2 * parts.len());
            heads
        });
        let starts: Vec<P::Facts> = std::iter::once(first).chain(rest).collect();
        let done = parts
            .par_iter()
            .zip(starts)
            .map(|(part, mut heads)| {
                let mut work = budget.clone();
                program.fire(delta, admit, &mut heads, &mut Vec::new(), &mut work, part);
                (heads, work)
            })
            .collect();
        Ok(done)
    }

    fn derivable_in_parts(
        &self,
        candidates: &P::Facts,
        parts: &[Part],
        budget: &Work,
    ) -> Option<Vec<(P::Facts, Work)>> {
        let program = self.0;
        let done = parts
            .par_iter()
            .map(|part| {
                let mut work = budget.clone();
                let derived = program.derivable(candidates, &mut work, part);
                (derived, work)
            })
            .collect();
        Some(done)
    }
}

/// The fallback of [`OnThreads`] for programs whose facts cannot cross threads: the round
/// runs in one piece on the calling thread.
#[doc(hidden)]
pub trait OnCaller<P: Program> {
    /// Always gives `first` back.
    fn fire_in_parts(
        &self,
        delta: &P::Facts,
        admit: Admit<&P::Facts>,
        parts: &[Part],
        budget: &Work,
        first: P::Facts,
    ) -> Result<Vec<(P::Facts, Work)>, P::Facts> {
        let _ = (delta, admit, parts, budget);
        Err(first)
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
