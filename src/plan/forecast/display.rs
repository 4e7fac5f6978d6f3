//! How forecast figures are written for people, in every format: counts
//! with thousands separators, signed changes, money in the repo's currency.

/// `12400` as `12,400`.
pub fn count(n: u64) -> String {
    group(&n.to_string())
}

/// A change as `+12,400`, `-300` or `±0`.
pub fn change(n: i128) -> String {
    match n {
        0 => "±0".to_owned(),
        n if n > 0 => format!("+{}", group(&n.to_string())),
        n => format!("-{}", group(&n.unsigned_abs().to_string())),
    }
}

fn group(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The symbol written before an amount of `currency`, when it has a common one.
fn symbol(currency: &str) -> Option<&'static str> {
    match currency {
        "USD" => Some("$"),
        "EUR" => Some("€"),
        "GBP" => Some("£"),
        "JPY" => Some("¥"),
        _ => None,
    }
}

/// An amount: whole units from 10 up (`$37`), cents below (`$0.60`), a
/// price below a cent with its significant digits (`$0.0012`).
pub fn money(currency: &str, amount: f64) -> String {
    let magnitude = amount.abs();
    let digits = if magnitude >= 10.0 {
        count(magnitude.round() as u64)
    } else if magnitude == 0.0 || magnitude >= 0.01 {
        format!("{magnitude:.2}")
    } else {
        let text = format!("{magnitude:.6}");
        text.trim_end_matches('0').to_owned()
    };
    let sign = if amount < 0.0 && digits.chars().any(|c| c.is_ascii_digit() && c != '0') {
        "-"
    } else {
        ""
    };
    match symbol(currency) {
        Some(s) => format!("{sign}{s}{digits}"),
        None => format!("{sign}{digits} {currency}"),
    }
}

/// A change of money, signed: `+$37`, `-$1.20`, `±$0.00`.
pub fn money_change(currency: &str, amount: f64) -> String {
    let shown = money(currency, amount.abs());
    if amount.abs() < 0.005 {
        format!("±{shown}")
    } else if amount > 0.0 {
        format!("+{shown}")
    } else {
        format!("-{shown}")
    }
}

/// A share as a percentage: `10%`, `2.5%`, `100%`.
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{}%", p.round() as i64)
    } else {
        let text = format!("{p:.2}");
        format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_changes_are_grouped_by_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(4200), "4,200");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(change(12_400), "+12,400");
        assert_eq!(change(-1000), "-1,000");
        assert_eq!(change(0), "±0");
    }

    #[test]
    fn money_is_whole_from_ten_and_in_cents_below() {
        assert_eq!(money("USD", 37.2), "$37");
        assert_eq!(money("USD", 1234.5), "$1,235");
        assert_eq!(money("USD", 0.6), "$0.60");
        assert_eq!(money("USD", 0.0012), "$0.0012");
        assert_eq!(money("EUR", 12.0), "€12");
        assert_eq!(money("CHF", 3.5), "3.50 CHF");
        assert_eq!(money_change("USD", 37.2), "+$37");
        assert_eq!(money_change("USD", -1.2), "-$1.20");
        assert_eq!(money_change("USD", 0.0), "±$0.00");
    }

    #[test]
    fn shares_are_percentages() {
        assert_eq!(percent(0.1), "10%");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(percent(0.025), "2.5%");
        assert_eq!(percent(0.0), "0%");
    }
}
