use serde_json::json;

use super::*;

fn text<const MAX: usize, R: Rule>(v: Value) -> Result<String, String> {
    serde_json::from_value::<Text<MAX, R>>(v)
        .map(Text::into_string)
        .map_err(|e| e.to_string())
}

#[test]
fn exact_text_is_kept_as_sent_blank_included() {
    assert_eq!(text::<5, Exact>(json!(" a ")), Ok(" a ".to_owned()));
    assert_eq!(text::<5, Exact>(json!("")), Ok(String::new()));
}

#[test]
fn a_length_is_counted_in_characters_not_bytes() {
    assert_eq!(text::<3, Exact>(json!("été")), Ok("été".to_owned()));
    assert_eq!(
        text::<3, Exact>(json!("étés")),
        Err("must be at most 3 characters".to_owned())
    );
}

#[test]
fn not_blank_text_is_trimmed_and_blank_refused() {
    assert_eq!(text::<9, NotBlank>(json!("  run ")), Ok("run".to_owned()));
    assert_eq!(
        text::<9, NotBlank>(json!(" \t")),
        Err("must not be empty".to_owned())
    );
    assert_eq!(text::<9, Filled>(json!(" a ")), Ok(" a ".to_owned()));
}

#[test]
fn a_value_that_is_not_a_string_is_named_so() {
    for v in [json!(1), json!(null), json!(["a"]), json!({"a": 1})] {
        assert_eq!(text::<9, NotBlank>(v), Err("must be a string".to_owned()));
    }
}

struct Required;
impl Rule for Required {
    const NOT_BLANK: bool = true;
    const NULL_IS_BLANK: bool = true;
    fn words(refusal: Refusal, max: usize) -> String {
        match refusal {
            Refusal::Blank => "is required".to_owned(),
            r => r.words(max),
        }
    }
}

#[test]
fn a_rule_words_its_own_refusals_and_may_call_null_blank() {
    assert_eq!(
        text::<9, Required>(json!(null)),
        Err("is required".to_owned())
    );
    assert_eq!(
        text::<9, Required>(json!(" ")),
        Err("is required".to_owned())
    );
    assert_eq!(
        text::<2, Required>(json!("abc")),
        Err("must be at most 2 characters".to_owned())
    );
}

#[test]
fn the_schema_says_the_limit_the_check_enforces() {
    let s = serde_json::to_value(<Text<80, NotBlank> as utoipa::PartialSchema>::schema())
        .unwrap_or_default();
    assert_eq!(s["maxLength"], json!(80));
    assert_eq!(s["pattern"], json!(r"\S"));
    let w =
        serde_json::to_value(<Whole<0, 10> as utoipa::PartialSchema>::schema()).unwrap_or_default();
    assert_eq!(
        (w["minimum"].clone(), w["maximum"].clone()),
        (json!(0), json!(10))
    );
}

#[test]
fn a_whole_number_may_be_written_with_a_zero_fraction() {
    let read = |v| serde_json::from_value::<Whole<0, 10>>(v).map(Whole::get);
    assert_eq!(read(json!(7)).ok(), Some(7));
    assert_eq!(read(json!(7.0)).ok(), Some(7));
    for bad in [json!(7.5), json!(11), json!(-1), json!("7")] {
        let e = read(bad).err().map(|e| e.to_string());
        assert_eq!(e.as_deref(), Some("must be an integer from 0 to 10"));
    }
}
