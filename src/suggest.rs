//! "Did you mean": the nearest existing names to a misspelt one, for every
//! error that names something that does not exist (projects, runs, scorers,
//! scorer versions, `--target` addresses).

/// Up to three names from `candidates` closest to `wanted`, best first.
pub fn nearest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .map(|c| {
            let c_lower = c.to_lowercase();
            let mut score = strsim::jaro_winkler(&wanted_lower, &c_lower);
            if c_lower.contains(&wanted_lower) || wanted_lower.contains(&c_lower) {
                score = score.max(0.85);
            }
            (score, c)
        })
        .filter(|(score, _)| *score >= 0.7)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_owned())
        .collect()
}

/// "; did you mean `a`, `b`?" or an empty string.
pub fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
        format!("; did you mean {}?", list.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names_rank_typos_first() {
        let names = ["correctness", "completeness", "context_adherence", "bleu"];
        assert_eq!(nearest("corectness", names)[0], "correctness");
        assert!(nearest("zzzzzz", names).is_empty());
        assert_eq!(did_you_mean(&["a".into()]), "; did you mean `a`?");
    }
}
