//! Facts without static types: the program's fact enum parsed from text (`FromStr`, in the
//! rendered and the tab-separated form) and batches built from fact-enum iterators agree
//! with typed batches; malformed text and derived facts are rejected with nothing changed.

use std::collections::BTreeSet;

use dred::runtime::{Fact, FactSets, Record};
use dred::Batch;
use proptest::prelude::*;

dred::datalog! {
    pub struct Mixed;
    @input pub struct Person(pub String, pub &'static str, pub i64);
    @input pub struct Flag(pub char, pub bool);
    @input pub struct Ready();
    pub struct Tagged(pub String, pub char);
    Tagged(name, c) <- Person(name, _, _), Flag(c, true), Ready();
}

fn typed_batch() -> Batch<MixedFacts> {
    Batch::new()
        .insert(Person("ada".into(), "London", -3))
        .insert(Person("a \"quoted\", name\t\\ é".into(), "x", 7))
        .insert(Flag('\'', true))
        .insert(Flag('q', false))
        .insert(Ready())
}

fn facts(program: &Mixed) -> BTreeSet<MixedFact> {
    program.facts().to_vec().into_iter().collect()
}

#[test]
fn every_fact_reads_back_from_its_display_and_its_file_line() {
    let (program, _) = Mixed::materialize(typed_batch());
    let all = facts(&program);
    assert!(all.iter().any(|f| matches!(f, MixedFact::Tagged(_))));
    let mut lines_checked = 0;
    for fact in &all {
        let shown = fact.to_string();
        assert_eq!(&shown.parse::<MixedFact>().unwrap(), fact, "{shown}");

        let (relation, arity) = match fact {
            MixedFact::Person(_) => ("Person", 3),
            MixedFact::Flag(_) => ("Flag", 2),
            MixedFact::Ready(_) => ("Ready", 0),
            MixedFact::Tagged(_) => ("Tagged", 2),
        };
        let mut fields = String::new();
        match fact {
            MixedFact::Person(f) => Record::write_tsv(f, &mut fields),
            MixedFact::Flag(f) => Record::write_tsv(f, &mut fields),
            MixedFact::Ready(f) => Record::write_tsv(f, &mut fields),
            MixedFact::Tagged(f) => Record::write_tsv(f, &mut fields),
        }
        // A value holding a tab cannot be written to a fact file's line at all.
        if arity > 0 && fields.matches('\t').count() + 1 != arity {
            continue;
        }
        let line = if arity == 0 {
            relation.to_string()
        } else {
            format!("{relation}\t{fields}")
        };
        assert_eq!(&line.parse::<MixedFact>().unwrap(), fact, "{line:?}");
        lines_checked += 1;
    }
    assert_eq!(
        lines_checked,
        all.len() - 2,
        "all but the two facts holding a tab"
    );
}

#[test]
fn batches_from_the_fact_enum_and_from_text_agree_with_typed_batches() {
    let (typed, _) = Mixed::materialize(typed_batch());

    let enum_facts: Vec<MixedFact> = typed_batch().insertions().to_vec();
    let mut from_enum = Batch::new();
    from_enum.insert_facts(enum_facts.iter().cloned()).unwrap();
    let (from_enum, _) = Mixed::materialize(from_enum);

    let texts = [
        "Person(ada, London, -3)",
        r#"Person("a \"quoted\", name\t\\ é", x, 7)"#,
        "Flag\t'\ttrue",
        "Flag('q',false)",
        "Ready()",
    ];
    let parsed: Vec<MixedFact> = texts.iter().map(|t| t.parse().unwrap()).collect();
    let mut from_text = Batch::new();
    from_text.insert_facts(parsed).unwrap();
    let (mut from_text, _) = Mixed::materialize(from_text);

    assert_eq!(facts(&from_enum), facts(&typed));
    assert_eq!(facts(&from_text), facts(&typed));

    let mut deletion = Batch::new();
    deletion
        .delete_facts(["Ready".parse::<MixedFact>().unwrap()])
        .unwrap();
    let mut typed = typed;
    let expected = typed.update(Batch::new().delete(Ready()));
    let report = from_text.update(deletion);
    assert_eq!(report.to_string(), expected.to_string());
    assert_eq!(facts(&from_text), facts(&typed));
}

#[test]
fn a_derived_fact_in_a_batch_is_rejected_and_leaves_the_batch_unchanged() {
    let mut batch = typed_batch();
    let before = batch.insertions().to_vec();
    let derived: MixedFact = "Tagged(ada, 'q')".parse().unwrap();
    let error = batch
        .insert_facts([MixedFact::Ready(Ready()), derived])
        .unwrap_err();
    assert!(
        error.message.contains("Tagged(ada,'q')") && error.message.contains("derived"),
        "{error}"
    );
    assert_eq!(batch.insertions().to_vec(), before);
    assert!(batch.delete_facts(Vec::<Fact<Mixed>>::new()).is_ok());
}

#[test]
fn malformed_fact_text_names_the_column_at_fault() {
    for (text, column, says) in [
        ("Person(ada, London, many)", 21, "i64"),
        ("Person(ada, London)", 1, "3 column(s)"),
        ("Nobody(a)", 1, "no relation named `Nobody`"),
        ("Flag\tab\ttrue", 6, "char"),
        ("Flag('q', true", 15, "closing"),
    ] {
        let error = text.parse::<MixedFact>().unwrap_err();
        assert_eq!(error.column, Some(column), "{text}: {error}");
        assert!(error.message.contains(says), "{text}: {error}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any string and integer survive `Display` and `FromStr`.
    #[test]
    fn any_string_round_trips_through_the_rendered_form(name in any::<String>(), n in any::<i64>(), c in any::<char>()) {
        let person = MixedFact::Person(Person(name.clone(), "p", n));
        prop_assert_eq!(person.to_string().parse::<MixedFact>().unwrap(), person);
        let tagged = MixedFact::Tagged(Tagged(name, c));
        prop_assert_eq!(tagged.to_string().parse::<MixedFact>().unwrap(), tagged);
    }
}
