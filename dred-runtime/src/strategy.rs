//! The ways an update can withdraw what a deletion took away.

#[allow(unused_imports)] // Named by the docs.
use crate::program::{DerivationSample, Program};

/// How an update withdraws what a deletion took away. Every strategy leaves exactly the
/// same facts (the least model); they differ in the work done and in what the report tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// The seed's delete-and-rederive rounds, exactly: over-delete everything that used a
    /// deleted fact, then rederive what still has a proof.
    #[default]
    DRed,
    /// Alternative proofs: before a fact's deletion propagates, look for another rule
    /// instance whose body facts are not under deletion and are older than the fact (their
    /// stamps are smaller, so no cycle can vouch for itself); only facts without one lose
    /// their support and propagate. The unsupported facts are then rederived as in DRed.
    ///
    /// A *closure relation* (the transitive closure of an input relation, and nothing else:
    /// see [`Program::closure_losses`]) over a graph dense enough is kept by reachability
    /// instead ([`crate::closure`]): what a deletion takes from it is read off the graph's
    /// strongly connected components before and after, and joins with the rest of round 1.
    /// Its facts are never checked, so their rounds need not lengthen with the shortest
    /// paths a deletion lengthens.
    AltProof,
    /// Rematerialize from the input facts after the batch.
    Recompute,
    /// Per update: [`Strategy::Recompute`] when the net deletion is a large share of the
    /// input facts; otherwise [`Strategy::DRed`] when nearly every derived fact has one
    /// derivation (a sample says so, taken at materialization and again once updates have
    /// changed an eighth of the model, see [`DerivationSample`]: then DRed over-deletes
    /// little more than is really gone, and alternative proofs would check every fact they
    /// then withdraw), else [`Strategy::AltProof`]. Either is guarded: once it has cost
    /// more than a fraction of what rematerializing would, its joins stop where they are
    /// (what it changed is discarded with the derived relations) and it rematerializes.
    /// The report says which ran and why.
    Auto,
}
