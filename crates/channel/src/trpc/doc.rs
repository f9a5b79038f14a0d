//! The procedures in `/openapi.json`: each at `/api/trpc/<name>`, a query
//! as GET with its input in `?input=` (URL-encoded JSON), a mutation as
//! POST with a JSON body, answering `{"result":{"data": <output>}}`.

use utoipa::ToSchema;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, Required, ResponseBuilder};

use super::{Access, Kind, Procedure, Procedures};

/// What the document says of every procedure besides its own shapes.
pub struct Describe {
    /// The security scheme a signed-in procedure requires.
    pub security_scheme: &'static str,
    /// Who a signed-in caller is, e.g. "The signed-in owner".
    pub signed_in: &'static str,
    /// The errors any procedure may answer, in words.
    pub errors: &'static str,
}

type Named = Vec<(String, RefOr<Schema>)>;

/// A procedure's input and output schemas, with the schemas they refer to.
pub struct Shapes {
    input: Option<RefOr<Schema>>,
    output: RefOr<Schema>,
    components: Named,
}

impl Shapes {
    pub fn of<I: ToSchema, O: ToSchema>(has_input: bool) -> Self {
        let mut components = Vec::new();
        if has_input {
            I::schemas(&mut components);
        }
        O::schemas(&mut components);
        Self {
            input: has_input.then(I::schema),
            output: O::schema(),
            components,
        }
    }
}

/// The client errors a procedure can answer besides its own.
fn errors<C>(p: &Procedure<C>) -> Vec<(&'static str, &'static str)> {
    let mut out = vec![(
        "405",
        "METHOD_NOT_SUPPORTED: a query by POST or a mutation by GET",
    )];
    if p.doc.input.is_some() {
        out.push(("400", "BAD_REQUEST (naming the field) or PARSE_ERROR"));
    }
    if p.access == Access::SignedIn {
        out.push(("401", "UNAUTHORIZED: not signed in"));
    }
    if p.kind == Kind::Mutation {
        out.push(("403", "FORBIDDEN: a change from another site"));
    }
    out
}

/// Whether an input of `schema` (resolved among `components`) has a field
/// it cannot do without.
fn requires_fields(schema: &RefOr<Schema>, components: &Named) -> bool {
    let resolved = match schema {
        RefOr::Ref(r) => {
            let name = r.ref_location.rsplit('/').next().unwrap_or_default();
            components.iter().find(|(n, _)| n == name).map(|(_, s)| s)
        }
        inline => Some(inline),
    };
    matches!(resolved, Some(RefOr::T(Schema::Object(o))) if !o.required.is_empty())
}

/// Adds every procedure to `doc`.
pub fn document<C: Send + 'static>(
    doc: &mut OpenApi,
    procedures: &Procedures<C>,
    describe: &Describe,
) {
    for p in procedures.iter() {
        let envelope: RefOr<Schema> = ObjectBuilder::new()
            .property(
                "result",
                ObjectBuilder::new()
                    .property("data", p.doc.output.clone())
                    .required("data"),
            )
            .required("result")
            .into();
        let who = match p.access {
            Access::Public => "Anyone.".to_owned(),
            Access::SignedIn => format!("{} (UNAUTHORIZED otherwise).", describe.signed_in),
        };
        let mut op = OperationBuilder::new()
            .securities(Some(match p.access {
                Access::Public => Vec::new(),
                Access::SignedIn => vec![SecurityRequirement::new(
                    describe.security_scheme,
                    Vec::<String>::new(),
                )],
            }))
            .tag("trpc")
            .operation_id(Some(p.name))
            .summary(Some(p.summary))
            .description(Some(format!("{who} {}", describe.errors)))
            .response(
                "200",
                ResponseBuilder::new()
                    .description("The procedure's output")
                    .content(
                        "application/json",
                        ContentBuilder::new().schema(Some(envelope)).build(),
                    ),
            )
            .response(
                "default",
                ResponseBuilder::new().description("A tRPC error").content(
                    "application/json",
                    ContentBuilder::new()
                        .schema(Some(Ref::from_schema_name("ErrorBody")))
                        .build(),
                ),
            );
        for (status, what) in errors(p) {
            op = op.response(
                status,
                ResponseBuilder::new().description(what).content(
                    "application/json",
                    ContentBuilder::new()
                        .schema(Some(Ref::from_schema_name("ErrorBody")))
                        .build(),
                ),
            );
        }
        let method = match (p.kind, &p.doc.input) {
            (Kind::Query, input) => {
                if let Some(schema) = input {
                    op = op.parameter(
                        ParameterBuilder::new()
                            .name("input")
                            .parameter_in(ParameterIn::Query)
                            .required(Required::False)
                            .description(Some("The input as URL-encoded JSON"))
                            .schema(Some(schema.clone())),
                    );
                }
                HttpMethod::Get
            }
            (Kind::Mutation, Some(schema)) => {
                // No body, or `null`, is an empty input: the body is
                // required, and not null, when that is refused.
                let required = requires_fields(schema, &p.doc.components);
                let body: RefOr<Schema> = if required {
                    schema.clone()
                } else {
                    OneOfBuilder::new()
                        .item(ObjectBuilder::new().schema_type(Type::Null))
                        .item(schema.clone())
                        .into()
                };
                op = op.request_body(Some(
                    RequestBodyBuilder::new()
                        .content(
                            "application/json",
                            ContentBuilder::new().schema(Some(body)).build(),
                        )
                        .required(Some(if required {
                            Required::True
                        } else {
                            Required::False
                        }))
                        .build(),
                ));
                HttpMethod::Post
            }
            (Kind::Mutation, None) => HttpMethod::Post,
        };
        doc.paths
            .add_path_operation(format!("/api/trpc/{}", p.name), vec![method], op.build());
        let components = doc.components.get_or_insert_with(Default::default);
        for (name, schema) in &p.doc.components {
            components
                .schemas
                .entry(name.clone())
                .or_insert_with(|| schema.clone());
        }
    }
}
