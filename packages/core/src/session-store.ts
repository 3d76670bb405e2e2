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
  /**
   * Every entry appended to the session, in append order. Empty for an unknown session. When
   * `checkpoint` is set, only the entries after it: the entries at indexes
   * `checkpoint.version` to `version - 1`.
   */
  readonly entries: readonly SessionEntry[];
  /**
   * The session's version: the number of entries appended so far (0 for an unknown
   * session). `append` succeeds only when given the current version.
   */
  readonly version: number;
  /**
   * The session's latest checkpoint (C8), only when `load` was asked for it
   * (`{ fromCheckpoint: true }`) and the store keeps one for the session; `entries` then start
   * after it. Read in the same atomic step as the entries, so the two always fit together.
   */
  readonly checkpoint?: SessionCheckpoint;
}

/**
 * A checkpoint of a session (C8): the state the run loop derived from the session's first
 * `version` entries, kept so that loading the session costs what happened since, not its whole
 * life. Written by the session's owner (the agent loop, after a compaction or every so many
 * entries); a store keeps the latest one per session without reading its `state`. The entries
 * themselves are never removed: the log stays whole (an audit trail).
 */
export interface SessionCheckpoint {
  /** How many entries of the session the state covers (`1 ≤ version ≤` the session's version). */
  readonly version: number;
  /** The derived state, as JSON; its meaning is the agent loop's, like an entry's. */
  readonly state: JsonValue;
}

/** Options of {@link SessionStore.load}. */
export interface SessionLoadOptions {
  /**
   * Read from the session's latest checkpoint (C8): the snapshot then carries `checkpoint` and
   * only the entries after it. A store without checkpoints, or a session without one, returns
   * every entry as usual. Default `false`.
   */
  readonly fromCheckpoint?: boolean;
}

/** Options of {@link SessionStore.append}. */
export interface SessionAppendOptions {
  /**
   * A fencing token (H28): the generation of the lease the caller writes under, a
   * non-negative safe integer that is higher for each new holder of the lease (a
   * `@lattice/bullmq` worker passes its session lease's). The store keeps, per session, the
   * highest fence an append has carried, and in the same atomic step as the version check:
   *
   * - refuses an append whose fence is lower, with {@link SessionFencedError}, before it looks
   *   at the version, so a writer whose lease was taken over is told to stop, not to reload;
   * - otherwise raises the session's fence to this one once the version check passed.
   *
   * So once a new holder has appended with its fence (an append of no entries is enough), a
   * holder whose lease lapsed (a worker frozen or cut off past it) can append nothing more.
   * An append without a fence is neither checked against the session's fence nor changes it.
   * `delete()` forgets the fence with the session. Only a store that declares
   * {@link SessionStore.fencedAppends} honours it; others ignore the option.
   */
  readonly fence?: number;
}

/**
 * Where sessions (conversations and their run logs) are kept: a small interface that every
 * store implements, in memory, SQLite, Postgres or Redis (R10). Stores hold JSON and know
 * nothing of the agent loop.
 *
 * A store must pass the conformance suite of `@lattice/core/testing`
 * (`sessionStoreConformance`): ordering, compare-and-append under concurrent writers,
 * reload after reopen, large entries, unicode, deletion, many sessions (R12), and fenced
 * appends (H28), which it declares with `fencedAppends: true`.
 */
export interface SessionStore {
  /**
   * A short label for messages, for example `sqliteSessionStore("/var/chat.db")`: errors of a
   * run whose store failed name it. Optional.
   */
  readonly name?: string;
  /**
   * `true` when `append` honours `options.fence` (H28): it keeps the highest fence per session
   * and refuses a lower one with `SessionFencedError`, atomically with the version check, and
   * accepts a fenced append of no entries (see `SessionAppendOptions.fence`). The
   * memory, SQLite, Postgres and Redis stores declare it; `createRunWorker` of
   * `@lattice/bullmq` refuses a store without it, since a store that ignored the fence would
   * let a worker frozen past its lease log results. Declare it only once the store passes the
   * `H28:` checks of the conformance suite. Optional: absent means the store does not fence
   * (fine for runs in one process).
   */
  readonly fencedAppends?: boolean;
  /**
   * `true` when the store keeps checkpoints (C8): it implements `saveCheckpoint` and honours
   * `load(sessionId, { fromCheckpoint: true })`. Declare it only once the store passes the
   * `C8:` checks of the conformance suite. Optional: a store without checkpoints still works;
   * loading a long session then folds its whole log.
   */
  readonly checkpoints?: boolean;
  /**
   * Reads a session: its entries in append order and its version. An unknown session is
   * `{ entries: [], version: 0 }`, not an error.
   *
   * With `{ fromCheckpoint: true }`, a store that keeps checkpoints returns the session's
   * latest checkpoint as `checkpoint` and only the entries after it, read atomically together
   * (C8).
   *
   * @param sessionId - A non-empty string.
   * @param options - `fromCheckpoint`. Optional.
   */
  load(sessionId: string, options?: SessionLoadOptions): Promise<SessionSnapshot>;
  /**
   * Keeps a checkpoint of a session (C8), replacing the one it had, atomically with respect to
   * appends: only when the session holds at least `checkpoint.version` entries and its current
   * checkpoint (if any) covers fewer. Otherwise nothing changes: an older checkpoint never
   * replaces a newer one, and a checkpoint never covers entries the session does not hold.
   * `delete()` removes the checkpoint with the session. Implemented by stores that declare
   * `checkpoints: true`.
   *
   * @param sessionId - A non-empty string.
   * @param checkpoint - `version` (an integer ≥ 1) and `state` (JSON).
   * @returns `true` when the checkpoint was kept, `false` when it was not (an unknown session,
   *   a version beyond the session's, or one not newer than the current checkpoint).
   * @throws `InvalidOptionError` for a bad argument (an empty id, a version that is not an
   *   integer ≥ 1, a state that is not JSON).
   */
  saveCheckpoint?(sessionId: string, checkpoint: SessionCheckpoint): Promise<boolean>;
  /**
   * Appends entries to a session if its version is still `expectedVersion` (compare-and-append,
   * R8): all of them or none, atomically. Appending to an unknown session with
   * `expectedVersion` 0 creates it. Once the promise resolves the entries are as durable as
   * the store promises (a durable store: they survive a killed process).
   *
   * With `options.fence` the append is also fenced (H28): the store keeps the highest fence
   * each session has seen, refuses an append whose fence is lower, and raises the session's
   * fence to the append's, all in the same atomic step as the version check. See
   * `SessionAppendOptions.fence`.
   *
   * @param sessionId - A non-empty string.
   * @param expectedVersion - The version the caller last loaded or appended to.
   * @param entries - At least one entry, each a JSON object; may be empty with a `fence` (the
   *   append then only raises the session's fence).
   * @param options - `fence`, a fencing token. Optional.
   * @returns The session's new version (`expectedVersion + entries.length`).
   * @throws `SessionFencedError` (code `"session_fenced"`) when `options.fence` is lower
   *   than the session's fence; `SessionConflictError` (code `"session_conflict"`) when
   *   the session's version is not `expectedVersion` (another writer appended first). Either
   *   way nothing is appended and the fence is unchanged.
   */
  append(
    sessionId: string,
    expectedVersion: number,
    entries: readonly SessionEntry[],
    options?: SessionAppendOptions,
  ): Promise<number>;
  /** Every session id the store holds, sorted (code-unit order). */
  list(): Promise<string[]>;
  /**
   * Deletes a session: its entries and its fence. Forgetting the fence is a choice: a session
   * deleted and written again starts afresh, like a new one, so a writer with any fence (or
   * none) may create it again. Fences are lease generations that only grow (`@lattice/bullmq`
   * takes them from Redis's clock), so a worker frozen past its lease across a delete would
   * still be refused once the session's next lease holder raised the fence; a session deleted
   * and recreated by unfenced writers has no fence at all until a fenced append raises one.
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

/**
 * A fenced append was refused (H28): its fence is lower than the highest one the session has
 * seen, so a newer holder of the writer's lease has written since (the writer was frozen or
 * cut off past its lease), or the writer's own lease check found the lease lapsed before the
 * append was sent. Nothing was appended. Unlike a {@link SessionConflictError}, loading the
 * session again does not help: the writer must stop, and the lease's new holder goes on.
 * Code: `"session_fenced"`.
 */
export class SessionFencedError extends LatticeError {
  /** The session written to. */
  readonly sessionId: string;
  /** The fence the append carried. */
  readonly fence: number;
  /**
   * The session's fence, the highest seen, when the store refused the append; `undefined`
   * when the writer's lease check stopped it before it reached the store.
   */
  readonly currentFence: number | undefined;

  /**
   * @param sessionId - The session written to.
   * @param fence - The fence the append carried.
   * @param currentFence - The session's fence, when the store refused the append.
   * @param message - Overrides the default message.
   */
  constructor(
    sessionId: string,
    fence: number,
    currentFence: number | undefined,
    message?: string,
  ) {
    super(
      "session_fenced",
      message ??
        `Session ${JSON.stringify(sessionId)} refused an append with fence ${fence}: a newer lease holder raised the session's fence to ${currentFence ?? "a higher one"}. Nothing was appended. This writer's lease was taken over (it was frozen or cut off past it): stop writing; the lease's new holder goes on from the log.`,
    );
    this.sessionId = sessionId;
    this.fence = fence;
    this.currentFence = currentFence;
    this.name = "SessionFencedError";
  }
}
