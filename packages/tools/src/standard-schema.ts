/**
 * A schema that implements Standard Schema v1 (https://standardschema.dev): every Zod v4
 * schema does, as do Valibot and ArkType schemas. Tools validate their input through its
 * `~standard.validate`, so the SDK needs no validator library of its own at run time.
 *
 * This is the subset of the public spec the SDK reads, declared here so that no package has
 * to be installed for it.
 *
 * @typeParam Input - What the schema accepts.
 * @typeParam Output - What a successful validation yields (after defaults and transforms).
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The Standard Schema properties. */
  readonly "~standard": StandardSchemaProps<Input, Output>;
}

/**
 * The `~standard` property of a {@link StandardSchemaV1}.
 *
 * @typeParam Input - What the schema accepts.
 * @typeParam Output - What a successful validation yields.
 */
export interface StandardSchemaProps<Input = unknown, Output = Input> {
  /** The version of the Standard Schema spec: `1`. */
  readonly version: 1;
  /** The library that made the schema, for example `"zod"`. */
  readonly vendor: string;
  /** Validates a value; may return a Promise (async refinements). May throw or reject. */
  readonly validate: (
    value: unknown,
  ) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
  /** Carries the input and output types for inference; absent at run time. */
  readonly types?: StandardSchemaTypes<Input, Output> | undefined;
}

/** The result of `~standard.validate`: the output value, or the issues found. */
export type StandardSchemaResult<Output> = StandardSchemaSuccess<Output> | StandardSchemaFailure;

/** A successful validation: `value` is the validated (and possibly transformed) input. */
export interface StandardSchemaSuccess<Output> {
  /** The validated value. */
  readonly value: Output;
  /** Always absent on success. */
  readonly issues?: undefined;
}

/** A failed validation: what was wrong, in the order the validator found it. */
export interface StandardSchemaFailure {
  /** The issues; present (and non-empty) exactly when validation failed. */
  readonly issues: readonly StandardSchemaIssue[];
}

/** One problem with a value. Validators may add their own keys (Zod adds `code`, `errors`, ...). */
export interface StandardSchemaIssue {
  /** What was wrong, written for people. */
  readonly message: string;
  /** Where in the value; absent or empty for the root. */
  readonly path?: readonly (PropertyKey | StandardSchemaPathSegment)[] | undefined;
}

/** A step of a {@link StandardSchemaIssue} path written as an object. */
export interface StandardSchemaPathSegment {
  /** The key of this step. */
  readonly key: PropertyKey;
}

/** The input and output types a schema carries for inference. */
export interface StandardSchemaTypes<Input, Output> {
  /** What the schema accepts. */
  readonly input: Input;
  /** What a successful validation yields. */
  readonly output: Output;
}

/** The output type of a {@link StandardSchemaV1}: what the handler of a tool receives. */
export type StandardSchemaOutput<Schema extends StandardSchemaV1> = NonNullable<
  Schema["~standard"]["types"]
>["output"];
