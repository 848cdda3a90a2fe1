//! Head-bound checks of one relation's candidates, over the rules that derive it: written
//! once here; the generated code passes each relation's rules as functions.

use std::borrow::Cow;

use crate::parallel::Part;
use crate::program::Work;
use crate::relation::{FactSet, Stamp, Tuple};

/// One rule's derivability join for a head of its relation (`derives_rule_i` in
/// generated code): whether some instance of the rule with that head holds.
pub type DerivesRule<P, R> = fn(&P, &R, &mut Work) -> bool;

/// One rule's support join for a head of its relation (`support_rule_i` in generated
/// code): the lowest level of the rule's instances for the head, stopping at the first at
/// most the bound (see [`Program::check_support`](crate::Program::check_support)).
pub type SupportRule<P, R> = fn(&P, &R, Stamp, &mut Work) -> u64;

/// The hash of the bucket that a relation's sorting rule walks first for a head, if the
/// head matches that rule's head (`first_hash_rule_i` in generated code).
pub type FirstHash<P, R> = fn(&P, &R) -> Option<u64>;

/// [`Program::derivable`](crate::Program::derivable) for one relation: adds to `derived`
/// the heads of `part` of `candidates` that one of `rules` derives. Returns `false` if the
/// work budget ran out first.
///
/// ```
/// use dred_runtime::generated::derivable_of;
/// use dred_runtime::parallel::Part;
/// use dred_runtime::{FactSet, Work};
/// let even = |_: &(), head: &(u32,), _: &mut Work| head.0 % 2 == 0;
/// let candidates: FactSet<(u32,)> = (0..10).map(|i| (i,)).collect();
/// let mut derived = FactSet::default();
/// let whole = Part::whole(0);
/// assert!(derivable_of(&(), &candidates, &whole, &[even], &mut derived, &mut Work::unlimited()));
/// assert_eq!(derived, (0..10).step_by(2).map(|i| (i,)).collect());
/// ```
pub fn derivable_of<P, R: Tuple>(
    program: &P,
    candidates: &FactSet<R>,
    part: &Part,
    rules: &[DerivesRule<P, R>],
    derived: &mut FactSet<R>,
    work: &mut Work,
) -> bool {
    for head in part.rows(candidates) {
        if work.exhausted() {
            return false;
        }
        if rules.iter().any(|derives| derives(program, head, work)) {
            derived.insert(head.clone());
        }
    }
    true
}

/// The rules of one relation and how its candidates are ordered, for [`check_support_of`].
pub struct SupportRules<'r, P, R: Tuple, F> {
    /// The relation's head among the program's facts (`F`), as stored.
    pub head_of: fn(&F) -> Option<Cow<'_, R>>,
    /// The program's fact of a stored head.
    pub fact: fn(R) -> F,
    /// The relation's rules, in order.
    pub rules: &'r [SupportRule<P, R>],
    /// The relation's sorting rule's [`FirstHash`], if it has one: checks that walk one
    /// bucket first then run together, its rows still in cache, and a head of another
    /// rule comes last.
    pub first_hash: Option<FirstHash<P, R>>,
}

/// [`Program::check_support`](crate::Program::check_support) for the candidates of one
/// relation (those of `candidates` that `rules.head_of` takes): those that no rule has
/// an instance for go to `unsupported`; those whose instances are all above their stamp
/// go to `levels` with the lowest level. Returns `false` if the work budget ran out first.
///
/// ```
/// use std::borrow::Cow;
/// use dred_runtime::generated::{check_support_of, SupportRules};
/// use dred_runtime::{FactSet, Stamp, Work};
/// // A head `(n,)` has one instance, of level `n`, if `n` is even.
/// let level = |_: &(), head: &(u32,), _: Stamp, _: &mut Work| {
///     if head.0 % 2 == 0 { u64::from(head.0) } else { u64::MAX }
/// };
/// let candidates: Vec<((u32,), Stamp)> = (0..6).map(|n| ((n,), 3)).collect();
/// let rules = SupportRules {
///     head_of: |fact: &(u32,)| Some(Cow::Borrowed(fact)),
///     fact: |row| row,
///     rules: &[level],
///     first_hash: None,
/// };
/// let (mut unsupported, mut levels) = (FactSet::default(), Vec::new());
/// let work = &mut Work::unlimited();
/// assert!(check_support_of(&(), &candidates, &rules, &mut unsupported, &mut levels, work));
/// assert_eq!(unsupported, [(1,), (3,), (5,)].into_iter().collect());
/// assert_eq!(levels, [((4,), 4)]); // 0 and 2 are supported
/// ```
pub fn check_support_of<P, R: Tuple, F>(
    program: &P,
    candidates: &[(F, Stamp)],
    rules: &SupportRules<'_, P, R, F>,
    unsupported: &mut FactSet<R>,
    levels: &mut Vec<(F, Stamp)>,
    work: &mut Work,
) -> bool {
    let heads = || {
        candidates
            .iter()
            .filter_map(|(fact, stamp)| (rules.head_of)(fact).map(|head| (head, *stamp)))
    };
    let mut out = (unsupported, levels);
    match rules.first_hash {
        None => {
            // Sized for the worst case (every candidate unsupported), so that a large
            // round never grows the set step by step.
            out.0.reserve(heads().count());
            heads().all(|(head, bound)| check_head(program, rules, &head, bound, &mut out, work))
        }
        Some(first_hash) => {
            let mut sorted: Vec<(u64, Cow<'_, R>, Stamp)> = heads()
                .map(|(head, stamp)| {
                    let hash = first_hash(program, &head).unwrap_or(u64::MAX);
                    (hash, head, stamp)
                })
                .collect();
            sorted.sort_unstable_by_key(|&(hash, ..)| hash);
            out.0.reserve(sorted.len());
            sorted
                .into_iter()
                .all(|(_, head, bound)| check_head(program, rules, &head, bound, &mut out, work))
        }
    }
}

/// [`check_support_of`] for one head held at `bound`; `false` if the work budget ran out.
fn check_head<P, R: Tuple, F>(
    program: &P,
    rules: &SupportRules<'_, P, R, F>,
    head: &R,
    bound: Stamp,
    (unsupported, levels): &mut (&mut FactSet<R>, &mut Vec<(F, Stamp)>),
    work: &mut Work,
) -> bool {
    if work.exhausted() {
        return false;
    }
    let mut lowest = u64::MAX;
    for support in rules.rules {
        if lowest > u64::from(bound) {
            lowest = lowest.min(support(program, head, bound, work));
        }
    }
    if lowest <= u64::from(bound) {
        return true;
    }
    match Stamp::try_from(lowest) {
        Ok(level) if level < Stamp::MAX => levels.push(((rules.fact)(head.clone()), level)),
        _ => {
            unsupported.insert(head.clone());
        }
    }
    true
}
