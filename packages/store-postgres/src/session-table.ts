import { createHash } from "node:crypto";
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
  /**
   * The fences table beside it (H28), as SQL: `"app"."sessions_fences"` (shortened with a
   * hash when that name would pass 63 characters).
   */
  readonly fencesSql: string;
  /**
   * The checkpoints table beside it (C8), as SQL: `"app"."sessions_checkpoints"` (shortened
   * with a hash when that name would pass 63 characters).
   */
  readonly checkpointsSql: string;
  readonly statements: SessionStatements;
}

/** The statements of the store, with the table's name in them. */
export interface SessionStatements {
  /** `$1` the lock's key (the table), `$2` the session: orders appends and deletes of one session. */
  readonly lockSession: string;
  /** `$1` session, `$2` expected version, `$3` entries as text[] → `{ version, inserted }`. */
  readonly append: string;
  /**
   * A fenced append (H28): `$1` session, `$2` expected version, `$3` entries as text[], `$4`
   * fence → `{ version, inserted, fence }`, `fence` the session's before it (a bigint as text,
   * or null). Inserts and raises the fence only when neither check fails.
   */
  readonly appendFenced: string;
  /**
   * `$1` the fences table as SQL, `$2` the checkpoints table as SQL → `{ fences, checkpoints }`:
   * whether each exists.
   */
  readonly tablesPresent: string;
  /** `$1` session: forgets its fence. */
  readonly deleteFence: string;
  readonly createFencesTable: string;
  /**
   * `$1` the fences or the checkpoints table as SQL → `{ columns, keyed }`, `keyed` when
   * `session_id` alone has a unique index (the `ON CONFLICT` of a fenced append and of a
   * checkpoint's save need one).
   */
  readonly describeFencesTable: string;
  readonly createCheckpointsTable: string;
  /**
   * `$1` session, `$2` the checkpoint's version, `$3` its state as JSON text → `{ saved }`, 1
   * when kept: the session holds at least `$2` entries and its checkpoint (if any) covers fewer
   * (or more than the session holds: one left by an older release's delete). Run under the
   * session's lock (C8).
   */
  readonly saveCheckpoint: string;
  /**
   * `$1` session → the checkpoint first, as `{ seq: 0, checkpoint: its version as text, entry:
   * its state, last: the session's last seq }`, when there is one; then the entries after it in
   * order, as `{ seq, checkpoint: null, entry, last: null }`. One statement: one snapshot (C8).
   */
  readonly loadFromCheckpoint: string;
  /** `$1` session: forgets its checkpoint. */
  readonly deleteCheckpoint: string;
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
  const siblingSql = (name: string) =>
    [...parts.slice(0, -1), name].map((part) => `"${part}"`).join(".");
  const fencesSql = siblingSql(fencesName(parts[parts.length - 1]!));
  const checkpointsSql = siblingSql(checkpointsName(parts[parts.length - 1]!));
  return {
    name,
    schema: parts.length === 2 ? parts[0] : undefined,
    sql,
    fencesSql,
    checkpointsSql,
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
      // The same, fenced: a lower fence than the session's, or another version, inserts nothing
      // and leaves the fence; otherwise the entries go in and the fence is raised.
      appendFenced: `WITH fence AS (
          SELECT (SELECT fence FROM ${fencesSql} WHERE session_id = $1) AS fence
        ), current AS (
          SELECT coalesce(max(seq), 0) AS version FROM ${sql} WHERE session_id = $1
        ), allowed AS (
          SELECT 1 FROM current, fence
          WHERE current.version = $2::bigint AND coalesce(fence.fence <= $4::bigint, true)
        ), inserted AS (
          INSERT INTO ${sql} (session_id, seq, entry)
          SELECT $1, $2::bigint + entries.position, entries.entry
          FROM allowed, unnest($3::text[]) WITH ORDINALITY AS entries (entry, position)
          RETURNING seq
        ), raised AS (
          INSERT INTO ${fencesSql} AS f (session_id, fence)
          SELECT $1, $4::bigint FROM allowed
          ON CONFLICT (session_id) DO UPDATE SET fence = GREATEST(f.fence, excluded.fence)
          WHERE f.fence < excluded.fence
          RETURNING 1
        )
        SELECT (SELECT version FROM current) AS version,
          (SELECT count(*) FROM inserted)::int AS inserted,
          (SELECT fence FROM fence)::text AS fence`,
      tablesPresent:
        "SELECT to_regclass($1) IS NOT NULL AS fences, to_regclass($2) IS NOT NULL AS checkpoints",
      deleteFence: `DELETE FROM ${fencesSql} WHERE session_id = $1`,
      createFencesTable: `CREATE TABLE IF NOT EXISTS ${fencesSql} (
          session_id text PRIMARY KEY,
          fence bigint NOT NULL
        )`,
      describeFencesTable: `SELECT
          (SELECT array_agg(attname || ' ' || format_type(atttypid, atttypmod) ORDER BY attnum)
            FROM pg_attribute
            WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped) AS columns,
          EXISTS (
            SELECT 1 FROM pg_index AS i
            JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
            WHERE i.indrelid = $1::regclass AND i.indisunique AND i.indnkeyatts = 1
              AND i.indpred IS NULL AND a.attname = 'session_id'
          ) AS keyed`,
      createCheckpointsTable: `CREATE TABLE IF NOT EXISTS ${checkpointsSql} (
          session_id text PRIMARY KEY,
          version bigint NOT NULL,
          state text NOT NULL
        )`,
      saveCheckpoint: `WITH current AS (
          SELECT coalesce(max(seq), 0) AS version FROM ${sql} WHERE session_id = $1
        ), saved AS (
          INSERT INTO ${checkpointsSql} AS c (session_id, version, state)
          SELECT $1, $2::bigint, $3 FROM current WHERE current.version >= $2::bigint
          ON CONFLICT (session_id) DO UPDATE SET version = excluded.version, state = excluded.state
          WHERE c.version < excluded.version OR c.version > (SELECT version FROM current)
          RETURNING 1
        )
        SELECT count(*)::int AS saved FROM saved`,
      // The entries after the checkpoint by the (session_id, seq) key: only the tail is read.
      loadFromCheckpoint: `WITH checkpoint AS (
          SELECT version, state FROM ${checkpointsSql} WHERE session_id = $1
        )
        SELECT 0 AS seq, version::text AS checkpoint, state AS entry,
          (SELECT coalesce(max(seq), 0) FROM ${sql} WHERE session_id = $1) AS last
        FROM checkpoint
        UNION ALL
        SELECT seq, NULL, entry, NULL FROM ${sql}
        WHERE session_id = $1 AND seq > coalesce((SELECT version FROM checkpoint), 0)
        ORDER BY seq`,
      deleteCheckpoint: `DELETE FROM ${checkpointsSql} WHERE session_id = $1`,
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

/**
 * The name of the fences table of a session table (H28): `<table>_fences`, or, when that would
 * pass PostgreSQL's 63 characters, the table's first 47 characters, 8 hex digits of its
 * SHA-256 and `_fences`, so that two long names never share one.
 */
export function fencesName(table: string): string {
  return siblingName(table, "_fences");
}

/**
 * The name of the checkpoints table of a session table (C8): `<table>_checkpoints`, or, when
 * that would pass PostgreSQL's 63 characters, the table's first 42 characters, 8 hex digits of
 * its SHA-256 and `_checkpoints`.
 */
export function checkpointsName(table: string): string {
  return siblingName(table, "_checkpoints");
}

function siblingName(table: string, suffix: string): string {
  const name = `${table}${suffix}`;
  if (name.length <= MAX_IDENTIFIER_LENGTH) return name;
  const hash = createHash("sha256").update(table).digest("hex").slice(0, 8);
  return `${table.slice(0, MAX_IDENTIFIER_LENGTH - 9 - suffix.length)}_${hash}${suffix}`;
}
