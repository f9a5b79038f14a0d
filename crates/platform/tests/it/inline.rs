//! Short reads run inline on SQLite read what the pool reads: every column
//! type SeaORM derives for this codebase's models, NULLs, and filters on
//! each bound type (a timestamp bound differently would compare
//! differently).

use chrono::{DateTime, Duration, Utc};
use keel_platform::db::inline::Miss;
use keel_platform::sea_orm::entity::prelude::*;
use keel_platform::sea_orm::{ConnectionTrait, QueryOrder, QuerySelect, Set, Statement};
use keel_testkit::TestPlatform;

pub mod thing {
    use keel_platform::sea_orm;
    use keel_platform::sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, EnumIter, DeriveActiveEnum)]
    #[sea_orm(rs_type = "String", db_type = "String(StringLen::N(8))")]
    pub enum Shade {
        #[sea_orm(string_value = "light")]
        Light,
        #[sea_orm(string_value = "dark")]
        Dark,
    }

    #[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
    #[sea_orm(table_name = "inline_things")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub owner: Option<String>,
        pub small: i32,
        pub big: i64,
        pub flag: bool,
        pub ratio: f64,
        pub shade: Shade,
        pub at: DateTimeUtc,
        pub until: Option<DateTimeUtc>,
        pub raw: Vec<u8>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod with_json {
    use keel_platform::sea_orm;
    use keel_platform::sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
    #[sea_orm(table_name = "inline_json")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: String,
        pub doc: Json,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

async fn platform_with_things() -> Option<(TestPlatform, DateTime<Utc>)> {
    let p = TestPlatform::start(&[]).await;
    if p.platform.db.is_postgres() {
        return None;
    }
    let base = create_things(&p).await;
    Some((p, base))
}

/// The `thing` and `with_json` tables, forty things in the first; the
/// base time they were written around.
pub async fn create_things(p: &TestPlatform) -> DateTime<Utc> {
    let db = &p.platform.db;
    let schema = keel_platform::sea_orm::Schema::new(db.backend());
    for stmt in [
        schema.create_table_from_entity(thing::Entity),
        schema.create_table_from_entity(with_json::Entity),
    ] {
        db.write().execute(&stmt).await.unwrap();
    }
    // Sub-second times of every precision, as sqlx writes them.
    let base = DateTime::from_timestamp(1_767_225_600, 123_456_789).unwrap();
    for i in 0..40_i64 {
        let at = base + Duration::nanoseconds(i * 1_000_001) + Duration::seconds(i);
        thing::ActiveModel {
            id: Set(format!("t{i:02}")),
            owner: Set((i % 3 != 0).then(|| format!("owner \"{i}\" é\u{1}"))),
            small: Set(i32::try_from(i).unwrap() - 20),
            big: Set(i64::MAX - i),
            flag: Set(i % 2 == 0),
            ratio: Set(0.1 * i as f64 + 1e-300),
            shade: Set(if i % 2 == 0 {
                thing::Shade::Light
            } else {
                thing::Shade::Dark
            }),
            at: Set(at),
            until: Set((i % 4 == 0).then_some(at + Duration::days(1))),
            raw: Set(vec![0, 255, u8::try_from(i).unwrap()]),
        }
        .insert(db.write())
        .await
        .unwrap();
    }
    base
}

/// Selects over `thing` filtering on every bound type, and a page.
pub fn selects(base: DateTime<Utc>) -> Vec<Select<thing::Entity>> {
    vec![
        thing::Entity::find().order_by_asc(thing::Column::Id),
        thing::Entity::find().filter(thing::Column::Flag.eq(true)),
        thing::Entity::find().filter(thing::Column::Owner.is_null()),
        thing::Entity::find().filter(thing::Column::Owner.like("owner%")),
        thing::Entity::find().filter(thing::Column::Small.lt(0)),
        thing::Entity::find().filter(thing::Column::Big.gte(i64::MAX - 3)),
        thing::Entity::find().filter(thing::Column::Ratio.gt(2.05)),
        thing::Entity::find().filter(thing::Column::Shade.eq(thing::Shade::Dark)),
        thing::Entity::find().filter(thing::Column::At.gt(base + Duration::seconds(20))),
        thing::Entity::find().filter(thing::Column::At.lte(base + Duration::nanoseconds(5))),
        thing::Entity::find().filter(thing::Column::Until.is_not_null()),
        thing::Entity::find().filter(thing::Column::Raw.eq(vec![0_u8, 255, 7])),
        thing::Entity::find()
            .order_by_desc(thing::Column::At)
            .limit(7)
            .offset(3),
        thing::Entity::find_by_id("t05"),
        thing::Entity::find_by_id("none"),
    ]
}

#[tokio::test]
async fn an_inline_read_gives_the_models_the_pool_gives() {
    let Some((p, base)) = platform_with_things().await else {
        return;
    };
    let db = &p.platform.db;
    for select in selects(base) {
        let inline = db.try_inline(&select).expect("read inline");
        let pooled = select.clone().all(db.read()).await.unwrap();
        assert_eq!(inline, pooled, "{}", {
            use keel_platform::sea_orm::QueryTrait;
            select.build(db.backend()).to_string()
        });
        assert_eq!(db.all_short(select.clone()).await.unwrap(), pooled);
        assert_eq!(
            db.one_short(select.clone()).await.unwrap(),
            select.one(db.read()).await.unwrap()
        );
    }
}

#[tokio::test]
async fn what_an_inline_read_cannot_do_is_read_through_the_pool() {
    let Some((p, _)) = platform_with_things().await else {
        return;
    };
    let db = &p.platform.db;
    db.write()
        .execute_unprepared(r#"INSERT INTO inline_json (id, doc) VALUES ('j', '{"a": [1, 2]}')"#)
        .await
        .unwrap();
    // A column type it does not decode.
    let json = with_json::Entity::find();
    assert!(matches!(db.try_inline(&json), Err(Miss::ColumnType(c)) if c == "doc"));
    assert_eq!(
        db.all_short(json.clone()).await.unwrap(),
        json.all(db.read()).await.unwrap()
    );
    // A stored value of another class than the model's type.
    db.write()
        .execute_unprepared("UPDATE inline_things SET big = 'many' WHERE id = 't01'")
        .await
        .unwrap();
    let one = thing::Entity::find_by_id("t01");
    assert!(matches!(db.try_inline(&one), Err(Miss::Decode { column, .. }) if column == "big"));
    assert!(db.one_short(one).await.is_err(), "the pool reports it");
    // Not the entity's columns.
    let cols = thing::Entity::find()
        .select_only()
        .column(thing::Column::Id);
    assert!(matches!(db.try_inline(&cols), Err(Miss::Columns)));
    // An SQL error is the pool's to report.
    let stmt = Statement::from_string(db.backend(), "SELECT nothing FROM nowhere");
    assert!(db.read().query_all_raw(stmt).await.is_err());
}

#[tokio::test]
async fn a_database_in_memory_or_on_postgresql_is_never_read_inline() {
    let p = TestPlatform::start(&[("KEEL_SQLITE_INLINE_READS", "false")]).await;
    let db = &p.platform.db;
    let select = keel_platform::jobs::entity::Entity::find();
    // (a database in memory is never given inline reads: unit-tested)
    assert!(matches!(db.try_inline(&select), Err(Miss::Off)));
    assert!(db.all_short(select).await.is_ok());
}
