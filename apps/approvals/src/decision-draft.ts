import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";
import type { ApprovalDecision } from "agent-lattice";

/** A decision taken before the others of its interrupt, kept until the last one is taken. */
export interface DraftDecision {
  /** The decision, as `agent.resume(sessionId, { decisions })` takes it. */
  readonly decision: ApprovalDecision;
  /** The tool of the call decided on, for the listings. */
  readonly toolName: string;
  /** When it was taken (ISO 8601). */
  readonly decidedAt: string;
}

/** The decisions taken so far on one session's pending calls, by approval id. */
export type SessionDraft = Readonly<Record<string, DraftDecision>>;

/** The file's content: the drafts by session id. */
interface DraftFile {
  readonly v: 1;
  readonly sessions: Readonly<Record<string, SessionDraft>>;
}

const LOCK_WAIT_MS = 5_000;
const LOCK_STALE_MS = 30_000;
const LOCK_RETRY_MS = 20;

/**
 * Decisions on pending approvals that were taken one by one, kept in a small JSON file until
 * every pending call of the session is decided: `agent.resume()` needs all of them at once.
 * The run log in the session store stays untouched until then; the decisions it keeps are
 * those `resume()` logged.
 *
 * Each change is a read, a change and a write under a lock file (created exclusively next to
 * the file), so two processes deciding at the same time do not lose a decision.
 */
export class DecisionDrafts {
  readonly #path: string;

  /** @param path - The JSON file; it and its folder are created when first written. */
  constructor(path: string) {
    this.#path = path;
  }

  /** The file's path. */
  get path(): string {
    return this.#path;
  }

  /**
   * The decisions taken so far on a session's pending calls. Decisions on ids that are no
   * longer pending (another process resumed the run meanwhile) are left out.
   *
   * @param sessionId - The session.
   * @param pendingIds - The approval ids pending now, read from the session's log.
   * @returns The drafted decisions among them, by approval id.
   */
  read(sessionId: string, pendingIds: readonly string[]): SessionDraft {
    return onlyPending(this.#load().sessions[sessionId] ?? {}, pendingIds);
  }

  /**
   * Adds decisions to a session's draft (a later decision on the same id replaces the
   * earlier one) and drops those on ids no longer pending.
   *
   * @param sessionId - The session.
   * @param pendingIds - The approval ids pending now, read from the session's log.
   * @param decisions - The new decisions, by approval id.
   * @returns The session's draft after the change.
   */
  async add(
    sessionId: string,
    pendingIds: readonly string[],
    decisions: SessionDraft,
  ): Promise<SessionDraft> {
    return this.#locked(() => {
      const file = this.#load();
      const draft = onlyPending({ ...file.sessions[sessionId], ...decisions }, pendingIds);
      this.#save({ v: 1, sessions: { ...file.sessions, [sessionId]: draft } });
      return draft;
    });
  }

  /**
   * Forgets decisions of a session's draft: once `resume()` logged them, the log keeps them.
   *
   * @param sessionId - The session.
   * @param approvalIds - The approval ids whose decisions `resume()` took.
   */
  async forget(sessionId: string, approvalIds: readonly string[]): Promise<void> {
    await this.#locked(() => {
      const file = this.#load();
      const draft = file.sessions[sessionId];
      if (draft === undefined) return;
      const { [sessionId]: _dropped, ...others } = file.sessions;
      const left = Object.fromEntries(
        Object.entries(draft).filter(([id]) => !approvalIds.includes(id)),
      );
      const sessions = Object.keys(left).length === 0 ? others : { ...others, [sessionId]: left };
      this.#save({ v: 1, sessions });
    });
  }

  #load(): DraftFile {
    if (!existsSync(this.#path)) return { v: 1, sessions: {} };
    const file = JSON.parse(readFileSync(this.#path, "utf8")) as Partial<DraftFile>;
    if (file.v !== 1 || file.sessions === null || typeof file.sessions !== "object") {
      throw new Error(
        `${this.#path} is not a decisions file of this app. Move it away to start with no pending decisions.`,
      );
    }
    return file as DraftFile;
  }

  #save(file: DraftFile): void {
    mkdirSync(dirname(this.#path), { recursive: true });
    const temporary = `${this.#path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`);
    renameSync(temporary, this.#path);
  }

  async #locked<T>(work: () => T): Promise<T> {
    const lock = `${this.#path}.lock`;
    mkdirSync(dirname(lock), { recursive: true });
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        closeSync(openSync(lock, "wx"));
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        if (isStale(lock)) {
          rmSync(lock, { force: true });
          continue;
        }
        if (Date.now() > deadline) {
          throw new Error(
            `${lock} has been held for more than ${LOCK_WAIT_MS / 1000} s. If no other approvals command is running, delete it.`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
      }
    }
    try {
      return work();
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

function onlyPending(draft: SessionDraft, pendingIds: readonly string[]): SessionDraft {
  return Object.fromEntries(Object.entries(draft).filter(([id]) => pendingIds.includes(id)));
}

/** A lock file left by a process that died while holding it. */
function isStale(lock: string): boolean {
  try {
    return Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS;
  } catch {
    return false;
  }
}
