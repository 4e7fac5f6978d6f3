//! How the command line spells the choices that lower layers define as plain
//! enums (`-o text|json|markdown`, `--color auto|always|never`): clap's
//! `ValueEnum` implemented here, so clap stays in the command layer.

use clap::ValueEnum;
use clap::builder::PossibleValue;

use crate::output::ColorChoice;
use crate::render::Format;

impl ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &[Format::Text, Format::Json, Format::Markdown]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Format::Text => {
                PossibleValue::new("text").help("Human-readable, Terraform-like; the default")
            }
            Format::Json => {
                PossibleValue::new("json").help("One pretty-printed JSON document, versioned")
            }
            Format::Markdown => PossibleValue::new("markdown")
                .help("GitHub-flavoured markdown for a pull-request comment"),
        })
    }
}

impl ValueEnum for ColorChoice {
    fn value_variants<'a>() -> &'a [Self] {
        &[ColorChoice::Auto, ColorChoice::Always, ColorChoice::Never]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            ColorChoice::Auto => PossibleValue::new("auto")
                .help("Colour on a terminal (TERM not dumb) unless NO_COLOR or CLICOLOR=0; CLICOLOR_FORCE forces it"),
            ColorChoice::Always => PossibleValue::new("always").help("Always colour"),
            ColorChoice::Never => PossibleValue::new("never").help("Never colour"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_a_name_that_parses_back() {
        for format in Format::value_variants() {
            let name = format.to_possible_value().map(|v| v.get_name().to_owned());
            let name = name.unwrap_or_default();
            assert_eq!(Format::from_str(&name, false).ok(), Some(*format), "{name}");
        }
        for choice in ColorChoice::value_variants() {
            let name = choice.to_possible_value().map(|v| v.get_name().to_owned());
            let name = name.unwrap_or_default();
            assert_eq!(
                ColorChoice::from_str(&name, false).ok(),
                Some(*choice),
                "{name}"
            );
        }
    }
}
