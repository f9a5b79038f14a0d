//! The body readers' tests.
use super::*;
use serde_json::json;

fn pairs(s: &str) -> Value {
    from_pairs(form_urlencoded::parse(s.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())))
}

#[test]
fn brackets_make_objects_and_arrays() {
    assert_eq!(
        pairs("fields%5Bname%5D=Ada&fields[email]=a%40b.c&app_check_token=t"),
        json!({"fields": {"name": "Ada", "email": "a@b.c"}, "app_check_token": "t"})
    );
    assert_eq!(
        pairs("target[push_tokens][]=A&target[push_tokens][]=B&target[device_type]=ios"),
        json!({"target": {"push_tokens": ["A", "B"], "device_type": "ios"}})
    );
    assert_eq!(pairs("a=1&a=2"), json!({"a": "2"}), "the last value wins");
    assert_eq!(pairs("weird]=x&[y]=z"), json!({"weird]": "x", "[y]": "z"}));
    assert_eq!(pairs(""), json!({}));
}

#[tokio::test]
async fn bodies_are_read_by_their_content_type() {
    let mut h = HeaderMap::new();
    h.insert(
        CONTENT_TYPE,
        "application/json; charset=utf-8"
            .parse()
            .unwrap_or_else(|_| unreachable!()),
    );
    let v = parse(&h, Bytes::from_static(b"{\"a\":1}"), Formats::JSON).await;
    assert_eq!(v, Ok(json!({"a": 1})));
    h.insert(
        CONTENT_TYPE,
        "application/x-www-form-urlencoded"
            .parse()
            .unwrap_or_else(|_| unreachable!()),
    );
    let v = parse(&h, Bytes::from_static(b"a=1"), Formats::JSON).await;
    assert!(matches!(v, Err(PlatformError::UnsupportedMediaType(_))));
    let v = parse(&h, Bytes::from_static(b"a[b]=1"), Formats::ANY).await;
    assert_eq!(v, Ok(json!({"a": {"b": "1"}})));
    h.insert(
        CONTENT_TYPE,
        "multipart/form-data; boundary=XyZ"
            .parse()
            .unwrap_or_else(|_| unreachable!()),
    );
    let body = "--XyZ\r\nContent-Disposition: form-data; name=\"fields[name]\"\r\n\r\nAda\r\n--XyZ\r\nContent-Disposition: form-data; name=\"push_token\"\r\n\r\nT\r\n--XyZ--\r\n";
    let v = parse(&h, Bytes::from(body), Formats::ANY).await;
    assert_eq!(v, Ok(json!({"fields": {"name": "Ada"}, "push_token": "T"})));
    let body = "--XyZ\r\nContent-Disposition: form-data; name=\"target\"\r\nContent-Type: application/json\r\n\r\n{\"locale\": \"en\"}\r\n--XyZ--\r\n";
    let v = parse(&h, Bytes::from(body), Formats::ANY).await;
    assert_eq!(
        v,
        Ok(json!({"target": {"locale": "en"}})),
        "a JSON part is its value"
    );
    let body = "--XyZ\r\nContent-Disposition: form-data; name=\"data\"\r\nContent-Type: application/json\r\n\r\n{oops\r\n--XyZ--\r\n";
    let v = parse(&h, Bytes::from(body), Formats::ANY).await;
    assert!(matches!(v, Err(PlatformError::BadRequest(m)) if m.contains("\"data\"")));
    let v = parse(&HeaderMap::new(), Bytes::new(), Formats::JSON).await;
    assert_eq!(v, Ok(json!({})));
}
