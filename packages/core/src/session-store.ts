import { LatticeError } from "@lattice/tools";

/**
 * A JSON value, as a session store keeps it: what `JSON.parse(JSON.stringify(value))` gives
 * back unchanged.
 */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/**
 * One entry of a session's run log: a plain JSON object. The agent loop decides what entries
 * mean (each has a schema version `v` and a `type`); a store only keeps them, in order, and
 * returns them exactly as appended (R10).
 */
export type SessionEntry = { readonly [key: string]: JsonValue };

/** What {@link SessionStore.load} returns: a session's entries and its version. */
export interface SessionSnapshot {
  /** Every entry appended to the session, in append order. Empty for an unknown session. */
  readonly entries: readonly SessionEntry[];
  /**
   * The session's version: the number of entries appended so far (0 for an unknown
   * session). `append` succeeds only when given the current version.
   */
  readonly version: number;
}

/**
 * Where sessions (conversations and their run logs) are kept: a small interface that every
 * store implements, in memory, SQLite, Postgres or Redis (R10). Stores hold JSON and know
 * nothing of the agent loop.
 *
 * A store must pass the conformance suite of `@lattice/core/testing`
 * (`sessionStoreConformance`): ordering, compare-and-append under concurrent writers,
 * reload after reopen, large entries, unicode, deletion, many sessions (R12).
 */
export interface SessionStore {
  /**
   * A short label for messages, for example `sqliteSessionStore("/var/chat.db")`: errors of a
   * run whose store failed name it. Optional.
   */
  readonly name?: string;
  /**
   * Reads a session: its entries in append order and its version. An unknown session is
   * `{ entries: [], version: 0 }`, not an error.
   *
   * @param sessionId - A non-empty string.
   */
  load(sessionId: string): Promise<SessionSnapshot>;
  /**
   * Appends entries to a session if its version is still `expectedVersion` (compare-and-append,
   * R8): all of them or none, atomically. Appending to an unknown session with
   * `expectedVersion` 0 creates it. Once the promise resolves the entries are as durable as
   * the store promises (a durable store: they survive a killed process).
   *
   * @param sessionId - A non-empty string.
   * @param expectedVersion - The version the caller last loaded or appended to.
   * @param entries - At least one entry; each a JSON object.
   * @returns The session's new version (`expectedVersion + entries.length`).
   * @throws `SessionConflictError` (code `"session_conflict"`) when the session's version
   *   is not `expectedVersion` (another writer appended first); nothing is appended.
   */
  append(
    sessionId: string,
    expectedVersion: number,
    entries: readonly SessionEntry[],
  ): Promise<number>;
  /** Every session id the store holds, sorted (code-unit order). */
  list(): Promise<string[]>;
  /**
   * Deletes a session and its entries.
   *
   * @returns `true` when the session existed.
   */
  delete(sessionId: string): Promise<boolean>;
  /** Releases the store's resources (connections, file handles). Optional. */
  close?(): Promise<void>;
}

/**
 * Two writers raced on one session (R8): the session's version was no longer the one the
 * writer expected, so nothing was appended. Code: `"session_conflict"`.
 */
export class SessionConflictError extends LatticeError {
  /** The session written to. */
  readonly sessionId: string;
  /** The version the writer expected. */
  readonly expectedVersion: number;
  /** The session's actual version, when the store knows it. */
  readonly actualVersion: number | undefined;

  /**
   * @param sessionId - The session written to.
   * @param expectedVersion - The version the writer expected.
   * @param actualVersion - The session's version at the time, if known.
   * @param message - Overrides the default message (for example to point at `resume()`).
   */
  constructor(
    sessionId: string,
    expectedVersion: number,
    actualVersion: number | undefined,
    message?: string,
  ) {
    super(
      "session_conflict",
      message ??
        `Session ${JSON.stringify(sessionId)} was written by someone else: expected version ${expectedVersion}, found ${actualVersion ?? "a newer one"}. Nothing was appended. Another run is using this session; wait for it to finish, or load the session again.`,
    );
    this.sessionId = sessionId;
    this.expectedVersion = expectedVersion;
    this.actualVersion = actualVersion;
    this.name = "SessionConflictError";
  }
}
