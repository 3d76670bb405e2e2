import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";

/**
 * The table a Postgres session store uses when its options name none:
 * `"lattice_session_entries"`.
 */
export const DEFAULT_SESSION_TABLE = "lattice_session_entries";

/** One part of a table name: lower case, so that it means the same quoted or not. */
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
/** PostgreSQL truncates longer identifiers (NAMEDATALEN - 1). */
const MAX_IDENTIFIER_LENGTH = 63;

/** A validated session table name and the SQL of every statement the store runs on it. */
export interface SessionTable {
  /** The name as given: `"lattice_session_entries"` or `"app.sessions"`. */
  readonly name: string;
  /** The schema, when the name is schema-qualified. */
  readonly schema: string | undefined;
  /** The name as SQL, quoted: `"app"."sessions"`. */
  readonly sql: string;
  readonly statements: SessionStatements;
}

/** The statements of the store, with the table's name in them. */
export interface SessionStatements {
  /** `$1` the lock's key (the table), `$2` the session: orders appends and deletes of one session. */
  readonly lockSession: string;
  /** `$1` session, `$2` expected version, `$3` entries as text[] → `{ version, inserted }`. */
  readonly append: string;
  /** `$1` session → `{ version }`. */
  readonly version: string;
  /** `$1` session → `entry` rows in order. */
  readonly load: string;
  readonly list: string;
  /** `$1` session. */
  readonly delete: string;
  /** Orders concurrent `migrate()` calls on one database. */
  readonly lockMigrate: string;
  readonly createTable: string;
  /** `$1` the table as SQL → `{ columns, keyed }`: the table's columns and whether (session_id, seq) is unique. */
  readonly describeTable: string;
}

/**
 * Checks a session table option: one identifier, or `schema.table`, each of lower-case letters,
 * digits and underscores (not starting with a digit), at most 63 characters. Returns the
 * table's quoted SQL name and the store's statements.
 *
 * @throws `InvalidOptionError` (code `"invalid_option"`) otherwise.
 */
export function sessionTable(prefix: string, given: unknown): SessionTable {
  const parts = typeof given === "string" ? given.split(".") : [];
  const valid =
    parts.length >= 1 &&
    parts.length <= 2 &&
    parts.every((part) => IDENTIFIER.test(part) && part.length <= MAX_IDENTIFIER_LENGTH);
  if (!valid) {
    throw new InvalidOptionError(
      prefix,
      "table",
      `must be a table name, optionally schema-qualified ("sessions" or "app.sessions"), of lower-case letters, digits and underscores, not starting with a digit, each part at most ${MAX_IDENTIFIER_LENGTH} characters; received ${describeValue(given)}.`,
    );
  }
  const name = given as string;
  const sql = parts.map((part) => `"${part}"`).join(".");
  return {
    name,
    schema: parts.length === 2 ? parts[0] : undefined,
    sql,
    statements: {
      lockSession: "SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))",
      // One statement: compare the session's version with the expected one and insert every
      // entry only when they agree. The unique (session_id, seq) key refuses a row that another
      // writer inserted first.
      append: `WITH current AS (
          SELECT coalesce(max(seq), 0) AS version FROM ${sql} WHERE session_id = $1
        ), inserted AS (
          INSERT INTO ${sql} (session_id, seq, entry)
          SELECT $1, $2::bigint + entries.position, entries.entry
          FROM current, unnest($3::text[]) WITH ORDINALITY AS entries (entry, position)
          WHERE current.version = $2::bigint
          RETURNING seq
        )
        SELECT (SELECT version FROM current) AS version, (SELECT count(*) FROM inserted)::int AS inserted`,
      version: `SELECT coalesce(max(seq), 0) AS version FROM ${sql} WHERE session_id = $1`,
      load: `SELECT entry FROM ${sql} WHERE session_id = $1 ORDER BY seq`,
      list: `SELECT DISTINCT session_id FROM ${sql}`,
      delete: `DELETE FROM ${sql} WHERE session_id = $1`,
      lockMigrate: "SELECT pg_advisory_xact_lock(hashtext('@lattice/store-postgres migrate'))",
      createTable: `CREATE TABLE IF NOT EXISTS ${sql} (
          session_id text NOT NULL,
          seq integer NOT NULL,
          entry text NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (session_id, seq)
        )`,
      describeTable: `SELECT
          (SELECT array_agg(attname || ' ' || format_type(atttypid, atttypmod) ORDER BY attnum)
            FROM pg_attribute
            WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped) AS columns,
          EXISTS (
            SELECT 1 FROM pg_index AS i
            WHERE i.indrelid = $1::regclass AND i.indisunique AND i.indnkeyatts = 2
              AND (SELECT array_agg(a.attname::text ORDER BY k.position)
                FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k (attnum, position)
                JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
              ) = ARRAY['session_id', 'seq']
          ) AS keyed`,
    },
  };
}
