//! # dred: positive Datalog in Rust, maintained incrementally with delete-and-rederive
//!
//! `dred` lets you write Datalog rules inside Rust with [`datalog!`], checks them at compile
//! time, and keeps every derived fact exactly up to date as input facts are deleted and
//! inserted, using the delete-and-rederive (DRed) algorithm of Gupta, Mumick and
//! Subrahmanian (SIGMOD 1993). Every update reports the facts of each round of each phase,
//! so every conclusion it withdraws or restores can be accounted for.
//!
//! ```
//! use dred::Batch;
//!
//! dred::datalog! {
//!     /// Reachability over a directed graph.
//!     pub struct Graph;
//!     @input pub struct Edge(pub &'static str, pub &'static str);
//!     pub struct Reach(pub &'static str, pub &'static str);
//!     Reach(x, y) <- Edge(x, y);
//!     Reach(x, z) <- Reach(x, y), Reach(y, z);
//! }
//!
//! let edges = [("a", "b"), ("a", "e"), ("b", "c"), ("c", "b"), ("c", "d"), ("e", "d")];
//! let (mut graph, _) = Graph::materialize(Batch::new().insert_all(edges.map(|(a, b)| Edge(a, b))));
//! assert!(graph.contains(&Reach("a", "d")));
//!
//! // Delete an input fact: DRed over-deletes, rederives, and reports every round.
//! let report = graph.update(Batch::new().delete(Edge("a", "b")));
//! assert_eq!(
//!     report.to_string(),
//!     "net_delete: Edge(a,b)\n\
//!      net_insert:\n\
//!      overdelete 1: Edge(a,b)\n\
//!      overdelete 2: Reach(a,b)\n\
//!      overdelete 3: Reach(a,c) Reach(a,d)\n\
//!      overdeleted_idb: Reach(a,b) Reach(a,c) Reach(a,d)\n\
//!      rederive 1: Reach(a,d)\n\
//!      rederive 2:\n"
//! );
//! assert!(graph.contains(&Reach("a", "d"))); // still true, through a → e → d
//! assert!(!graph.contains(&Reach("a", "c"))); // withdrawn
//! ```
//!
//! ## The language
//!
//! A `datalog!` block holds, separated by `;`:
//!
//! - **The program's name**, as a unit struct: `pub struct Graph;`. It becomes the program
//!   type (so one module can hold several programs).
//! - **Relations**, as tuple structs, one field per column: `@input` marks an input (EDB)
//!   relation, every other relation is derived (IDB). A relation with no columns is written
//!   `struct Ready();`. Column types can be any `Clone + Eq + Hash + Ord + Debug + 'static`
//!   type: integers, `&'static str`, `String`, `char`, `bool`, your own types. Doc comments,
//!   other attributes and visibility carry over to the generated struct; `datalog!` derives
//!   `Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug` itself.
//! - **Rules**: `Head(x, y) <- A(x, z), B(z, y);`. Arguments are variables (any identifier),
//!   `_` (in bodies), or constants: integer, string, char and bool literals, and paths such
//!   as `Color::Red` for your own types. A variable may repeat (`Loop(x) <- Edge(x, x);`).
//!   Recursion of any shape is allowed: linear, non-linear, mutual.
//! - **Facts of derived relations**, as rules with no body: `Ready();`, `Root("a");`.
//!
//! ```
//! dred::datalog! {
//!     pub struct Access;
//!     /// `Member(user, group)`
//!     @input pub struct Member(pub String, pub u32);
//!     /// `Grant(group, document)`
//!     @input pub struct Grant(pub u32, pub &'static str);
//!     /// `Includes(document, included)`
//!     @input pub struct Includes(pub &'static str, pub &'static str);
//!     pub struct CanRead(pub String, pub &'static str);
//!     pub struct Public(pub &'static str);
//!     pub struct Open();
//!     CanRead(user, doc) <- Member(user, group), Grant(group, doc);
//!     CanRead(user, inner) <- CanRead(user, doc), Includes(doc, inner);
//!     Public(doc) <- Grant(0, doc);
//!     Public("README");
//!     Open() <- Public(_);
//! }
//!
//! let mut access = Access::new();
//! assert!(access.contains(&Open())); // from the fact `Public("README")`
//! access.update(
//!     dred::Batch::new()
//!         .insert(Member("ann".to_string(), 7))
//!         .insert(Grant(7, "plan"))
//!         .insert(Includes("plan", "budget")),
//! );
//! assert!(access.contains(&CanRead("ann".to_string(), "budget")));
//! access.update(dred::Batch::new().delete(Grant(7, "plan")));
//! assert!(access.relation::<CanRead>().is_empty());
//! ```
//!
//! The macro rejects, with one message on the offending token and all mistakes of a program
//! at once: undeclared relations (with the closest declared name), relations declared twice,
//! arity mismatches, rules deriving an `@input` relation, unsafe rules (a head variable bound
//! by no body atom, `_` in a head), negation, aggregation, arithmetic, function and method
//! calls, conditions, column types that cannot hold facts, and constants that do not fit
//! their column. These are the limits of finite positive Datalog, the class DRed maintains
//! exactly.
//!
//! ### Limits, exactly as enforced
//!
//! - **Column types** are `'static` and implement `Clone + Eq + Hash + Ord + Debug`. The
//!   macro names on the type, in one message each: `f32` and `f64`, `HashMap`, `HashSet`,
//!   `Cell`, `RefCell`, `Mutex` and `RwLock` anywhere in a column type; a reference
//!   without `'static` (`&str`), any lifetime other than `'static`; an unsized column
//!   (`str`, a slice, a trait object); `_`. A type of your own that lacks one of the
//!   traits is reported by rustc, on the type, once per missing trait.
//! - **One variable, one type.** The macro compares column types by spelling; where one
//!   variable joins columns spelt differently (`NodeId` and `u32` after
//!   `type NodeId = u32;`), rustc decides: an alias is accepted, two different types are
//!   one error on the variable that names both columns. A closure relation is kept by
//!   reachability only when its columns and its edges' are spelt alike.
//! - **Arity**: any; index keys and rows wider than std's 12-element tuples nest (tested
//!   with 32 columns joined on one column and on 31).
//! - **Names**: any identifier, raw identifiers (`r#type`, printed as `type`) and the
//!   prelude's names (`Some`, `Option`, `Vec`, ...) included, except the names the macro
//!   gives what it generates: `{Program}Facts`, `{Program}Fact` and a query's `{Query}Ask`
//!   (each reported on the clashing name); identifiers starting with `__Dred` are reserved.
//! - **Declarations**: one program per macro call; relations are tuple structs, not
//!   generic.
//! - **Rules**: doc comments document a rule (explanations print them beside it); no other
//!   attribute applies to a rule.
//!
//! ## What the macro generates
//!
//! For `pub struct Graph;` with relations `Edge` and `Reach`:
//!
//! - the relation structs `Edge` and `Reach`;
//! - `Graph`, the program: it owns the relations and their indexes.
//!   `Graph::new()` (constant facts only), `materialize(batch)` (its report keeps every
//!   round's facts), `materialize_with(batch, trace)` (with [`Trace::Counts`], counts only:
//!   no second copy of the model at the memory peak), `update(batch)`,
//!   `update_with(batch, trace)`, `relation::<Reach>()` (a [`runtime::TypedRelation`]:
//!   `iter` and `sorted` give `Reach` facts, `contains`, `stamp`, `len`; `rows()` the
//!   stored [`Relation`]), `contains(&fact)`, `facts()`, `heap_bytes()` (what the relations
//!   keep allocated), `from_facts_unchecked`, `verify`, `poisoned` and `recover` (see
//!   below: when an update fails part-way).
//!   A relation whose columns are all plain values (integers, `char`, `bool`,
//!   `&'static str`; at most twelve) stores its facts as the tuple of its column types,
//!   its *row* (`Reach`'s is `(&'static str, &'static str)`; [`runtime::Stored`] converts):
//!   every relation of the same column types and indexes is then one type, and the
//!   runtime's generic code is compiled once for all of them, not once per relation.
//!   Other relations store their structs.
//!   A relation keeps its facts and their stamps in sixteen hash-table shards, so that
//!   growing moves one shard at a time and never holds two copies of the whole table;
//!   or, where its columns are small integers (see the bitset below) whose box an array
//!   of stamps, 4 bytes a point, covers in no more room than the table (13 bytes a fact
//!   for a pair of `u32`, at a load of 7/16 to 7/8), *dense*: a fact of the box holds
//!   when its bit is set, its stamp at its point, and is rebuilt from its columns when
//!   iterated; only facts outside the box stay in a table, and a recompute hands the
//!   array to the new relation. An index bucket,
//!   built at its exact size (an eighth more if built in order from a bitset), grows by
//!   an eighth. Buckets are exact (one per key), and where every column of a relation is a plain value (integers, `char`, `bool`,
//!   `&'static str`) a bucket's rows keep only the columns outside its key, from which a
//!   probe rebuilds each fact at no cost: a binary relation's index costs half the bytes
//!   its facts do. The indexes whose
//!   buckets support checks and head-first joins read with their stamps keep each row's
//!   stamp too, so that a bucket's stamps come in one pass rather than a lookup a row;
//! - `GraphFacts`, one [`runtime::FactSet`] of stored facts per relation (public fields
//!   named after the relations): the shape of batches, rounds and reports;
//! - `GraphFact`, an enum over all relations' facts;
//! - one join function per rule for semi-naive firing (a join order per delta position,
//!   indexes chosen at compile time and shared between rules, each built when first
//!   probed while its relation holds facts, the rest when a materialization ends, so that
//!   a materialization does not keep in step an index only its first round asks for;
//!   where a delta input fact's join probes a derived relation's index that no other join
//!   needs, and scanning one other input relation leaves the derived atoms fully known,
//!   the join has a second plan (that scan, then membership tests), taken while the index
//!   is unbuilt and |delta| × |scanned| is at most the derived relation's facts, so that
//!   a materialization leaves the index unbuilt and only a large update builds it;
//!   where a later step walks a derived relation, the delta is grouped by the values the
//!   later steps read, so that walk runs once per group (sorted 2^14 facts at a time, so
//!   that the sorted copy stays small beside a materialization's largest round, its
//!   memory peak); in an insertion round the atoms
//!   before the delta's walk only facts older than the delta, the prefix of each index
//!   bucket that came before it, so an instance with two new facts is found once; a
//!   probe whose key an outer step or the head binds is made once there, not once per row
//!   of the loops in between; once the head's relation outgrows the cache, 8 MiB of
//!   facts, the heads a join finds are tested 32 at a time, all looked up before any is
//!   added, so that the lookups' cache misses overlap; where the relation's columns are all
//!   integers, chars or bools and their values span a small box, the test reads one bit
//!   of a bitset over that box instead, kept beside the fact table once it holds 512 KiB
//!   of facts if the box takes at most half the table's bytes; and one join function per
//!   rule for head-bound rederivation. What each of these choices saved is in
//!   `BENCHMARKS.md`, *Design measurements*, "The generated program's layout".
//!
//! ## Updates, exactly as the seed defines them
//!
//! A [`Batch`] lists input facts to delete and to insert; deletions apply first. It is
//! normalized to the real change: D⁻ = (I ∩ deletions) \ insertions and A⁺ = insertions \ I,
//! so deleting an absent fact or inserting a present one does nothing, and deleting and
//! re-inserting a fact is no change. Then:
//!
//! 1. **over-deletion**: round 1 is D⁻; round r+1 holds the heads, not yet over-deleted, of
//!    rule instances that held in the *old* facts and used a fact of round r;
//! 2. **rederivation** (when a derived fact was over-deleted): round 1 restores those that
//!    some rule derives from the surviving facts; round k+1 those derivable using a fact
//!    restored in round k; the last round is empty;
//! 3. **insertion**: round 1 is A⁺; each next round holds the new heads of instances using a
//!    fact of the previous round, re-matching rules on the updated relations.
//!
//! No ground rule instance is ever stored: each phase is a delta join over the stored
//! relations. The [`UpdateReport`] holds every round's facts (or only their counts, with
//! [`Trace::Counts`]); its `Display` prints the canonical trace lines.
//!
//! ## When an update fails part-way
//!
//! Column types are yours, and their `Clone`, `Hash`, `Eq` or `Ord` may panic (or memory
//! run out) in the middle of an update. Where such a panic is caught (with
//! [`std::panic::catch_unwind`], or by a thread or task boundary that outlives the
//! program), the program is either exactly as before the update (the panic came while the
//! batch was being checked against the facts) or *poisoned*: `poisoned()` returns
//! [`runtime::Poisoned`], and every query and update (`update*`, `relation`, `contains`,
//! `facts`, `explain`, `verify`, a query's `answers`, writing fact files) panics with its
//! message instead of answering from half-updated facts. `recover()` rebuilds the program
//! exactly as it was before the failed update: the update kept its batch until it ended,
//! so the inputs from before it are those held now with its changes undone, and the
//! program is rematerialized from them with its settings and symbols. If a table's own
//! upkeep lost input facts in the panic, `recover()` says so
//! ([`runtime::Unrecoverable`]) and the program stays poisoned; rebuild it from a copy of
//! its inputs. A materialization that panics returns no program, so it leaves nothing
//! half-built. See [`runtime::poison`].
//!
//! ## Maintenance strategies
//!
//! `update` runs the seed's DRed, round for round. `update_using(batch, strategy, trace)`
//! withdraws what a deletion took away another way; every [`Strategy`] leaves exactly the
//! same facts, and the report says which ran and what it did.
//!
//! - [`Strategy::DRed`] (the default) over-deletes every fact that used a deleted fact, then
//!   rederives what still has a proof. Its cost follows the over-deletion: small where facts
//!   have few derivations (trees, chains without shortcuts), but on a graph with one giant
//!   strongly connected component one deleted edge over-deletes nearly the whole closure.
//! - [`Strategy::AltProof`] checks before it propagates, in the backward/forward spirit.
//!   Every fact carries the stamp of the round that derived it (one `u32`). A fact is
//!   checked when it loses a body fact of an instance that could have been its support (all
//!   of whose derived facts were older than it), and keeps its place if some rule instance
//!   still derives it from facts that hold and are *older* — so facts that only support each
//!   other, like the seed's `R(a,b)` and `R(a,c)`, can never vouch for one another. A fact
//!   whose instances are all younger is kept by raising its stamp above them, once per
//!   update (as a shortest-path tree re-attaches a node one level down), and checked again
//!   at its new stamp; its heads between the two stamps are checked too. Rounds' stamps
//!   are spaced apart, so a fact raised above a fact of its own round stays below the
//!   next round, whose facts that counted on it need no check: in a dense recursive
//!   component, a deletion no longer shifts whole rounds up one after another. Only facts with neither propagate;
//!   rederivation then restores those that still have a proof. A round's checks run in
//!   the order of the index bucket they walk first, so that checks walking the same bucket
//!   (in non-linear closure, the candidates `R(x, z)` of one `x` all walk `R(x, _)`) read
//!   its stamps once and visit the rows older than the fact first. Finding what to check
//!   can start from the heads: where a derived delta atom binds part of the head, the head
//!   relation already keeps an index on those columns, and the rest of the body is then
//!   fully known (non-linear closure's `R(x, z)` for a delta `R(x, y)`), the heads sharing
//!   those values are read once per group of delta facts with their stamps, and only those
//!   in a delta fact's stamp range cost a lookup of the rest; a group or fact for which that
//!   reads more rows than the body-first join runs that one instead. Its report prints
//!   `check r` (facts checked), `unsupported r` and `restamp r` lines.
//!
//!   A *closure relation* is kept by reachability instead, in the spirit of modular
//!   materialization (Hu, Motik and Horrocks, AAAI 2019: a custom algorithm for a
//!   recognized group of rules). The macro recognizes a derived relation defined as the
//!   transitive closure of an input relation and by nothing else (`R(x, y) <- E(x, y);`
//!   with `R(x, z) <- R(x, y), E(y, z);`, its mirror `E(x, y), R(y, z)`, or the
//!   non-linear `R(x, y), R(y, z)`). Deleting edges then finds the pairs the closure loses
//!   from the graph alone ([`runtime::closure`]): Tarjan's strongly connected components
//!   before and after, one reachability bitset per component, one bitset difference per
//!   node, then they join round 1 with the deleted facts (the report's `unreachable` line)
//!   and reach the other rules as usual. No fact of the closure is checked, so a deletion
//!   inside a strongly connected component no longer lengthens the rounds by every pair
//!   whose shortest path it lengthens. A pair kept this way keeps its stamp even when the
//!   path it stood for is gone, so the choice is made at materialization and kept until
//!   the next: by reachability when the graph's `n` nodes have at least `n²/8` pairs in
//!   their closure (the bitsets then take at most two bytes a pair), by stamps otherwise
//!   ([`Bookkeeping::reachability`](runtime::Bookkeeping::reachability),
//!   [`Settings::with_reachability`]). Its cost
//!   is the graph's edges and the closure's lost pairs, not the closure's size: on a large
//!   sparse graph whose closure is small, stamps remain the better choice, and remain it.
//! - [`Strategy::BackwardForward`] keeps what alternative proofs would keep on a support
//!   at once, and searches the others a proof backward (Motik, Nenov, Piro and Horrocks,
//!   AAAI 2015, in spirit): through each body fact of each instance, down to the input
//!   facts that stay, sharing what every search has proved or disproved during the update;
//!   a proof carried forward to the instances that waited for it completes those a cycle
//!   held up, and a fact the search leaves unproved has no proof left. Only facts without
//!   one propagate, and nothing is rederived: its deletion takes away exactly what is gone.
//!   A fact kept on a proof without a support rises to the level where it has one, as
//!   alternative proofs raise it. Its report prints `check r` and `unprovable r` lines.
//! - [`Strategy::Recompute`] rematerializes from the input facts.
//! - [`Strategy::Auto`] recomputes when the net deletion is more than a twentieth of the
//!   input facts. Otherwise it runs DRed or alternative proofs, as a sample says: each
//!   materialization (and recompute) counts, among the first 256 facts of each derived
//!   relation in hash order, those with a second rule instance, and so does an update
//!   once the updates since the last sample have changed an eighth of the input facts or
//!   of the derived ones ([`DerivationSample`](runtime::DerivationSample)). At most one
//!   in 64, and DRed over-deletes little that is not really gone, while alternative proofs
//!   would check every fact before withdrawing it: Auto runs DRed; more, and it runs
//!   alternative proofs. Either runs under a guard: the joins and rounds count their work
//!   (rows visited, facts looked up one by one, facts taken out or put back, weighted as
//!   [`Counted`](runtime::program::Counted) says), and once an update has counted a ninth
//!   of what the last materialization counted (scaled to today's size), the joins stop
//!   where they are and it recomputes. Work is counted, never timed, so that the same
//!   program, facts and batch take the same decisions, and give the same report, on any
//!   machine and in any run. The larger the deletion, the smaller that share: it falls
//!   linearly to nothing at the twentieth where Auto recomputes outright, as a larger
//!   deletion tends to leave less to recompute. An update that gives up thus costs about
//!   a ninth more than a recompute of the model it started from; more where the counts
//!   run behind time (lookups that miss the cache more often than the weights assume), or
//!   when the update takes away much of the model (the suite's back-to-back pairs in
//!   `BENCHMARKS.md` measure it). Where closures are kept by reachability, it also
//!   recomputes when they lose more than an eighth of all facts: found at once, each
//!   still costs more to take out of its relation and indexes than a fact kept costs a
//!   recompute. The report's `account` says, as data, what ran and why.
//!
//! When each wins (`BENCHMARKS.md`, "Deletions, by strategy", and *Design measurements*,
//! "When each strategy wins"): alternative proofs win wherever facts have several
//! derivations, and on closures, reachability wins wherever the graph has cycles, by two to
//! three orders of magnitude over DRed's over-deletion on a graph with a giant component.
//! Reachability loses where there is little to find (a deleted shortcut spanned by other
//! edges), since it reads the graph. Where nearly everything over-deleted is really gone
//! (same-generation on a tree, whose facts have one derivation each) DRed does the same
//! work without the checks, and [`Strategy::Auto`] runs it, its sample finding no fact
//! with a second derivation. DRed's removals there cost a bit each: a relation that keeps
//! a bitset (see above) only clears an over-deleted fact's bit, and leaves its table entry
//! as a *ghost* until ghosts pass an eighth of the facts, a table must grow, shrink or
//! split, or the bitset is rebuilt, as a table entry out of the cache costs two misses to
//! take out. Alternative proofs can pass the ninth of dred's own recompute that
//! [`Strategy::Auto`]'s guard allows (Andersen's ten deletions), and then it gives up on
//! them and recomputes.
//! Neither incremental strategy suits batches that delete a large share of the input or
//! reach most of the closure: there a recompute wins, which is what [`Strategy::Auto`] and
//! its guard are for.
//!
//! A recompute drops the old relations before it builds the new ones, so it needs the
//! memory of one materialization. After 1-fact updates (recomputes included) the resident
//! set stays near the from-scratch peak and what the relations keep allocated stays where
//! it was (`BENCHMARKS.md`, "Memory while updating" and "Long-run memory"). The rest is the
//! allocator's. Part of it can be glibc's heap: glibc raises its mmap threshold when a
//! large block is freed, so tables allocated after a recompute grow in its heap, which
//! keeps the smaller tables they outgrow. That is why a recompute gives its new tables the
//! old ones' sizes at once.
//! The tables only an update uses (retired facts, the old stamps of risen facts) are given
//! back when it ends; the tests soak every strategy for 10⁴ batches and require
//! `heap_bytes()` to stay within 1.25× of the materialization's.
//!
//! ```
//! use dred::{Batch, Settings, Strategy, Trace};
//! dred::datalog! {
//!     pub struct Graph;
//!     @input pub struct E(pub &'static str, pub &'static str);
//!     pub struct R(pub &'static str, pub &'static str);
//!     R(x, y) <- E(x, y);
//!     R(x, z) <- R(x, y), R(y, z);
//! }
//! let edges = [("a", "b"), ("a", "e"), ("b", "c"), ("c", "b"), ("c", "d"), ("e", "d")];
//! // `R` is a closure, which alternative proofs would keep by reachability (see below):
//! // this program checks its support by stamps instead.
//! let settings = Settings::default().with_reachability(false);
//! let inputs = Batch::new().insert_all(edges.map(|(a, b)| E(a, b)));
//! let (mut graph, _) = Graph::materialize_with_settings(inputs, settings, Trace::Rounds);
//! let report = graph.update_using(Batch::new().delete(E("a", "b")), Strategy::AltProof, Trace::Rounds);
//! let trace = report.to_string();
//! // R(a,b) and R(a,c) rise once each, through each other, then lose their support;
//! // R(a,d) keeps its older support R(a,e), R(e,d) and is never checked: its instance
//! // through R(a,b) also uses R(b,d), which is no older than R(a,d).
//! assert!(trace.contains("check 3: R(a,b) R(a,c)\nunsupported 3:\nrestamp 3: R(a,c)\n"));
//! assert!(trace.contains("unsupported 4: R(a,b) R(a,c)\n"));
//! assert!(trace.contains("unsupported_idb: R(a,b) R(a,c)\n"));
//! assert!(graph.contains(&R("a", "d")) && !graph.contains(&R("a", "c")));
//! ```
//!
//! ## Settings
//!
//! How a program stores its facts and runs its joins is one [`Settings`] value that the
//! program owns: chosen when it is built (`with_settings`, `materialize_with_settings`;
//! the defaults otherwise), kept through its recomputes, read back with `settings()`.
//! Nothing an update does depends on the thread that runs it, so a program can move to
//! another thread and programs with different settings can live side by side. The
//! defaults suit real workloads; the other values exist so that tests can drive small
//! programs down the paths large ones take, and so that benchmarks can compare the
//! alternatives (for instance, [`Settings::with_reachability`]`(false)` checks closures
//! by stamps, as in the example above).
//!
//! ## Threads
//!
//! A program runs its large join rounds on every core: [`Settings::with_threads`] (by
//! default, the number of cores the process may use) cuts each round expected to count
//! [`Settings::with_parallel_from`] units of work into as many parts, which rayon's
//! workers join against the relations, each into heads of its own, merged in order
//! between rounds ([`runtime::parallel`]). Insertion, over-deletion and rederivation
//! rounds split, and so do rederivation's derivability checks; a loss of support's rounds, which record stamps in join order, run on
//! the calling thread. With `with_threads(1)` no round ever leaves the calling thread.
//! The facts, every strategy's rounds and every explanation are the same for every
//! number of threads; [`Strategy::Auto`]'s guard counts work, which follows table order
//! as under another hash key (see below). A program whose column types are not `Send`
//! and `Sync` (an `Rc<str>` column) runs every round on the calling thread.
//!
//! ```
//! use dred::{Batch, Settings, Trace};
//! dred::datalog! {
//!     pub struct Graph;
//!     @input pub struct E(pub u32, pub u32);
//!     pub struct R(pub u32, pub u32);
//!     R(x, y) <- E(x, y);
//!     R(x, z) <- R(x, y), R(y, z);
//! }
//! let edges = || Batch::new().insert_all((0..300).map(|i| E(i, (i + 1) % 300)));
//! let one = Settings::default().with_threads(1);
//! let (sequential, _) = Graph::materialize_with_settings(edges(), one, Trace::Counts);
//! let (parallel, _) = Graph::materialize_with_settings(edges(), one.with_threads(4), Trace::Counts);
//! assert_eq!(parallel.relation::<R>().len(), 300 * 300);
//! assert_eq!(sequential.relation::<R>().sorted(), parallel.relation::<R>().sorted());
//! ```
//!
//! ## Beyond one machine: timely dataflow
//!
//! With the cargo feature `dataflow` (off by default), every program is also a
//! differential-dataflow dataflow (`runtime::dataflow::Dataflow`, generated from the same
//! checked program and join plans, magic-set rewrites included), and
//! `runtime::dataflow::run` runs it on timely workers: threads of one process, or
//! processes on several machines, with timely's standard arguments. Input facts and update batches come from the same fact files as
//! [`runtime::io::read_input_dir`] reads, each worker feeding its share of their lines.
//!
//! Which to choose:
//! - **The local engine** (this page): the facts fit one machine. It gives the fastest
//!   updates, the seed's per-round trace, the choice of deletion strategy, explanations,
//!   and queries of the relations in place.
//! - **The dataflow**: the facts outgrow one machine's memory, or the work several
//!   machines' cores. After every batch it holds exactly the same least model, spread over
//!   the workers by hash; it reports each derived relation's number of facts and, when
//!   asked, writes the relations as fact files. It prints no rounds (differential-dataflow
//!   keeps per-iteration differences instead), chooses no strategy, and explains nothing.
//!
//! Column values cross processes by serde: the runtime's column types do (a `&'static
//! str` is interned where it arrives), and a column of your own type must implement
//! serde's traits (`runtime::dataflow::serde`) for its program to be a `Dataflow`; without
//! them the program still compiles, and running it as a dataflow is an error at that call
//! naming the missing trait. The README shows how to start two processes.
//!
//! ## Hashing
//!
//! Every table of facts hashes them with a keyed hash (ahash, under keys drawn at random
//! once per process; [`runtime::FactHashState`]), so that a service that maintains rules
//! over facts sent by users cannot be sent facts chosen to collide. The key only changes
//! the order in which sets iterate, never a result, a trace, a report's facts or
//! [`Strategy::Auto`]'s choice. Counted work follows the order in which support searches
//! meet rows, so two processes can count a support check a few rows apart, and a guard
//! that stops on the very edge of its budget can stop in one and not in the other; build
//! with the feature `fixed-hash` to hash with [`runtime::FixedHasher`], faster and the
//! same in every process, for inputs you trust.
//!
//! ## Queries: magic sets
//!
//! `@query Name = Relation(args);` generates a second program, `Name`, that derives only
//! what the query needs: the magic-set rewrite with adorned copies of the relations the query
//! reaches (`Reach_bf`: b = bound, f = free), a demand relation per adorned relation
//! (`demand_Reach_bf`), left-to-right sideways information passing, and the query's seed as
//! a fact. Constants are bound at compile time; an identifier is bound at run time through
//! a generated input relation `NameAsk`, so asking and withdrawing a question are ordinary
//! updates. DRed maintains demand and answers together: a demand that only a deleted path
//! supported is withdrawn with the answers it alone supported. The generated relations live
//! in a module named after the query (`from_a::R_bf`); `Name::RULES_TEXT` shows the rewrite,
//! `answers()` returns the answers as the original relation's type, and the original
//! program is unchanged.
//!
//! ```
//! use dred::Batch;
//! dred::datalog! {
//!     pub struct Graph;
//!     @input pub struct E(pub u32, pub u32);
//!     pub struct R(pub u32, pub u32);
//!     R(x, y) <- E(x, y);
//!     R(x, z) <- R(x, y), R(y, z);
//!     @query pub FromOne = R(1, _);
//!     @query pub From = R(source, _);
//! }
//! assert!(FromOne::RULES_TEXT.starts_with("demand_R_bf(1);\nR_bf(x, y) <- demand_R_bf(x), E(x, y);"));
//! let edges = [E(1, 2), E(2, 3), E(7, 8)];
//! let (mut query, _) = From::materialize(Batch::new().insert_all(edges).insert(FromAsk(2)));
//! assert_eq!(query.answers(), [R(2, 3)]);
//! assert!(query.relation::<from::R_bf>().iter().all(|r| r.0 != 7)); // never demanded
//! query.update(Batch::new().delete(FromAsk(2)).insert(FromAsk(1)));
//! assert_eq!(query.answers(), [R(1, 2), R(1, 3)]);
//! ```
//!
//! ## Explanations
//!
//! `program.explain(fact)` returns a finite proof tree grounded in input facts and the
//! program's own facts, or [`runtime::NotDerived`] when the fact does not hold. Proofs are
//! well-founded: each step uses only facts of strictly earlier semi-naive rounds, so
//! conclusions that merely support each other never prove themselves. Nothing is stored
//! for this while updating; an explainer recomputes the rounds once when asked
//! (`program.explainer()` explains many facts for that one cost).
//!
//! `update_with(batch, Trace::Explained)` also records, for each fact of each round, the
//! rule instance that put it there, and for over-deletion the fact of the previous round
//! that pulled it in; [`UpdateReport::explained`] prints them.
//!
//! ```
//! use dred::{Batch, Trace};
//! dred::datalog! {
//!     pub struct Graph;
//!     @input pub struct E(pub &'static str, pub &'static str);
//!     pub struct R(pub &'static str, pub &'static str);
//!     R(x, y) <- E(x, y);
//!     R(x, z) <- R(x, y), R(y, z);
//! }
//! let edges = [("a", "b"), ("a", "e"), ("b", "c"), ("c", "b"), ("c", "d"), ("e", "d")];
//! let (mut graph, _) = Graph::materialize(Batch::new().insert_all(edges.map(|(a, b)| E(a, b))));
//! let report = graph.update_with(Batch::new().delete(E("a", "b")), Trace::Explained);
//! assert!(report.explained().contains("overdelete 3: R(a,c) <- R(a,b), R(b,c)  (pulled in by R(a,b))"));
//! assert!(graph.explain(R("a", "d")).unwrap().to_string().starts_with("R(a,d) <- R(a,e), R(e,d)"));
//! assert!(graph.explain(R("a", "c")).is_err());
//! ```
//!
//! ## Facts from files, and an existing materialization
//!
//! [`io::read_input_dir`] reads `<Relation>.facts` files (tab-separated, one fact per line);
//! [`io::parse_tsv`] parses text; each value is checked against its column's type, and a
//! bad file is rejected whole with its file, line and column. A `.facts` file named for a
//! derived relation or for no relation rejects the directory too
//! ([`io::read_input_dir_lenient`] lists such files instead). [`io::write_tsv`] and
//! [`io::write_derived_dir`] write relations back out.
//!
//! Strings read from files belong in [`Symbol`] columns: a `&'static str`
//! column must leak each string it reads for the life of the process, where a symbol is
//! reference-counted and freed with the last fact that holds it. Text parsed into a batch
//! interns its symbols in the batch's table, which a program materialized from it keeps as
//! its own (`symbols()`); a later batch made with `Batch::new().with_symbols(program.symbols())`
//! shares the strings the program already holds, and the table drops those no fact holds
//! any more as it grows:
//!
//! ```
//! use dred::{io::parse_tsv, Batch, Symbol};
//! dred::datalog! {
//!     pub struct Visits;
//!     @input pub struct Visit(pub Symbol, pub Symbol);
//!     pub struct Reach(pub Symbol, pub Symbol);
//!     Reach(x, y) <- Visit(x, y);
//!     Reach(x, z) <- Reach(x, y), Visit(y, z);
//! }
//! let mut batch = Batch::new();
//! parse_tsv::<Visits>("Visit", "Paris\tLyon\n", "visits.facts", true, &mut batch).unwrap();
//! let (mut visits, _) = Visits::materialize(batch);
//! let mut batch = Batch::new().with_symbols(visits.symbols());
//! parse_tsv::<Visits>("Visit", "Lyon\tNice\n", "more.facts", true, &mut batch).unwrap();
//! visits.update(batch);
//! assert!(visits.contains(&Reach("Paris".into(), "Nice".into())));
//! assert_eq!(visits.symbols().len(), 3);
//! ```
//!
//! Code that handles several programs, or facts typed by a user, needs no static types:
//! every program has a fact enum (`GraphFact` for `Graph`, one variant per relation) that
//! parses with `FromStr` from the form reports print (`E(a,"New York")`) or from a fact
//! file's line after the relation's name and a tab, and a batch takes such facts from an
//! iterator, rejecting facts of derived relations:
//!
//! ```
//! # use dred::Batch;
//! # dred::datalog! {
//! #     pub struct Graph;
//! #     @input pub struct E(pub &'static str, pub &'static str);
//! #     pub struct R(pub &'static str, pub &'static str);
//! #     R(x, y) <- E(x, y);
//! # }
//! let facts: Vec<GraphFact> = ["E(a,b)", "E\tb\tNew York"].iter().map(|t| t.parse().unwrap()).collect();
//! let mut batch = Batch::new();
//! batch.insert_facts(facts).unwrap();
//! let (graph, _) = Graph::materialize(batch);
//! assert!(graph.contains(&R("b", "New York")));
//! assert!(Batch::<GraphFacts>::new().insert_facts(["R(a,b)".parse().unwrap()]).is_err());
//! ```
//!
//! `from_facts_unchecked` builds a program from inputs *and* derived facts without
//! recomputing: DRed requires them to be exactly the least model, which it does not check;
//! `verify` checks it by full recomputation.
//!
//! ## Checking the engine
//!
//! [`oracle::least_model`] computes a least model by naive iteration over facts in text
//! form, sharing no code with the engine's joins; the test suite compares every update
//! against it and against a literal instance-based implementation of the seed's rounds.

#![warn(missing_docs)]

/// Declares a positive Datalog program; see the [crate documentation](crate).
pub use dred_macros::datalog;

/// The runtime the generated code calls; most users need only the items re-exported here.
pub use dred_runtime as runtime;

pub use dred_runtime::{
    io, oracle, text, Abandoned, Account, Batch, FactSets, GroundFact, Mismatch, Program, Reason,
    Relation, Settings, Strategy, Symbol, Symbols, TextError, Trace, UnknownStrategy, UpdateReport,
};
