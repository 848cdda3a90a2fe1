//! Tab-separated fact files in and out (one file per relation, as Soufflé's `.facts`), with
//! checked parsing: a bad file is rejected whole, naming file, line and column.

use std::path::{Path, PathBuf};

use crate::batch::{check_input_relation, Batch};
use crate::program::{Program, RelationInfo};
use crate::text::TextError;

/// Parses `text` as the facts of input relation `relation`: one fact per line, values
/// separated by tabs. A zero-arity relation holds when the text has any line.
///
/// `origin` names the text in errors (usually the file path). Either every line parses
/// and is added to `batch`, or `batch` is left as it was.
pub fn parse_tsv<P: Program>(
    relation: &str,
    text: &str,
    origin: &str,
    insert: bool,
    batch: &mut Batch<P::Facts>,
) -> Result<(), TextError> {
    check_input_relation::<P>(relation).map_err(|e| e.at(origin, 1, 1))?;
    let arity = P::RELATIONS
        .iter()
        .find(|r| r.name == relation)
        .map_or(0, |r| r.columns.len());
    let mut staged = batch.clone();
    for (line_index, fields) in fact_lines(text, arity) {
        if fields.len() != arity {
            return Err(TextError::new(format!(
                "`{relation}` has {arity} column(s), this line has {}",
                fields.len()
            ))
            .at(origin, line_index + 1, 1));
        }
        staged
            .add_text::<P>(insert, relation, &fields)
            .map_err(|e| {
                // Report the column where the offending field starts, counting characters.
                let start: usize = fields
                    .iter()
                    .take(e.field.unwrap_or(0))
                    .map(|f| f.chars().count() + 1)
                    .sum();
                TextError::new(e.message).at(origin, line_index + 1, start + 1)
            })?;
    }
    *batch = staged;
    Ok(())
}

/// The lines of a fact file of a relation of `arity` columns, numbered from 0, each as its
/// tab-separated fields: blank lines are skipped (but every line of a zero-arity
/// relation's file is one fact, with no fields), and a line's `\r` ending is dropped.
pub(crate) fn fact_lines(text: &str, arity: usize) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines().enumerate().filter_map(move |(index, line)| {
        let line = line.strip_suffix('\r').unwrap_or(line);
        match arity {
            0 => Some((index, Vec::new())),
            _ if line.trim().is_empty() => None,
            _ => Some((index, line.split('\t').collect())),
        }
    })
}

/// A fact file of an input relation, with the relation.
pub(crate) type InputFile = (&'static RelationInfo, PathBuf);

/// The `.facts` files of `dir`, in name order, split into those of input relations of `P`
/// (with the relation) and the stray ones (named for a derived relation or for none).
pub(crate) fn input_fact_files<P: Program>(
    dir: &Path,
) -> Result<(Vec<InputFile>, Vec<PathBuf>), TextError> {
    let origin = dir.display().to_string();
    let unreadable = |e: std::io::Error| {
        TextError::new(format!("cannot read the directory: {e}")).at(&origin, 1, 1)
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        if path.extension().is_some_and(|e| e == "facts") && !path.is_dir() {
            files.push(path);
        }
    }
    files.sort();
    let (mut inputs, mut stray) = (Vec::new(), Vec::new());
    for path in files {
        let relation = path.file_stem().and_then(|stem| stem.to_str());
        match relation.and_then(|name| P::RELATIONS.iter().find(|r| r.name == name)) {
            Some(info) if info.input => inputs.push((info, path)),
            _ => stray.push(path),
        }
    }
    Ok((inputs, stray))
}

/// Reads `<dir>/<Relation>.facts` for every input relation of `P` that has such a file, as
/// insertions. Any unreadable or malformed file rejects the whole directory, and so does a
/// `.facts` file named for a derived relation or for no relation of `P` (a misspelt name
/// would otherwise leave its relation silently empty): the error names the first such file
/// in name order, and its message the others. Files with other extensions are not read.
/// [`read_input_dir_lenient`] lists stray files instead.
pub fn read_input_dir<P: Program>(dir: &Path) -> Result<Batch<P::Facts>, TextError> {
    let (batch, stray) = read_input_dir_lenient::<P>(dir)?;
    match stray.split_first() {
        None => Ok(batch),
        Some((first, others)) => {
            let origin = first.display().to_string();
            let mut message = stray_reason::<P>(first);
            if !others.is_empty() {
                let names: Vec<String> = others.iter().map(|p| p.display().to_string()).collect();
                message.push_str(&format!(" (also stray: {})", names.join(", ")));
            }
            Err(TextError::new(message).at(&origin, 1, 1))
        }
    }
}

/// As [`read_input_dir`], but a `.facts` file that names no input relation is not an
/// error: it is left unread and returned, with the others of its kind, in name order.
pub fn read_input_dir_lenient<P: Program>(
    dir: &Path,
) -> Result<(Batch<P::Facts>, Vec<PathBuf>), TextError> {
    let (inputs, stray) = input_fact_files::<P>(dir)?;
    let mut batch = Batch::new();
    for (info, path) in inputs {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| TextError::new(format!("cannot read: {e}")).at(&origin, 1, 1))?;
        parse_tsv::<P>(info.name, &text, &origin, true, &mut batch)?;
    }
    Ok((batch, stray))
}

/// Why `path` is not read as input facts of `P`.
fn stray_reason<P: Program>(path: &Path) -> String {
    let name = path.file_stem().map(|stem| stem.to_string_lossy());
    let name = name.as_deref().unwrap_or("");
    if P::RELATIONS.iter().any(|r| r.name == name) {
        format!("`{name}` is a derived relation; only input relations are read from fact files")
    } else {
        let inputs: Vec<&str> = P::RELATIONS
            .iter()
            .filter(|r| r.input)
            .map(|r| r.name)
            .collect();
        format!(
            "no relation is named `{name}`; the input relations are {}",
            if inputs.is_empty() {
                "none".to_string()
            } else {
                format!("`{}`", inputs.join("`, `"))
            }
        )
    }
}

/// The facts of any relation of `program` as tab-separated text, sorted. Panics if
/// `program` is poisoned ([`crate::poison`]).
pub fn write_tsv<P: Program>(program: &P, relation: &str) -> Result<String, TextError> {
    program.bookkeeping().assert_usable();
    let mut out = String::new();
    program.write_tsv(relation, &mut out)?;
    Ok(out)
}

/// Writes every derived relation of `program` to `<dir>/<Relation>.facts`.
pub fn write_derived_dir<P: Program>(program: &P, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for info in P::RELATIONS.iter().filter(|r| !r.input) {
        let text = write_tsv(program, info.name).map_err(std::io::Error::other)?;
        std::fs::write(dir.join(format!("{}.facts", info.name)), text)?;
    }
    Ok(())
}
