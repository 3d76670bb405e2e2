import type { Mailbox } from "./mailbox.js";
import type { SDKMessage } from "./sdk-message.js";
import type { SessionStore } from "./session-store.js";
import type { TraceEvent } from "./trace-event.js";

/** How a run is embedded: top level, or inside an agent tool call of a parent run. Internal. */
export interface RunPlacement {
  /** The parent's tool_use id, or `null` at top level. */
  readonly parentToolUseId: string | null;
  /** Receives every message of the run. */
  readonly emit: (message: SDKMessage) => void;
  /** Nesting depth: 0 at top level. */
  readonly depth: number;
  /** The running agent's name (`"agent"` when it has none). */
  readonly agentName?: string | undefined;
  /** The agents from the first one to this one; default `[agentName]`. */
  readonly chain?: readonly string[] | undefined;
  /** Where handoffs of this run's agent tools go when the tool has no mailbox of its own. */
  readonly mailbox?: Mailbox | undefined;
  /** The depth limit agent tools of this run apply; default `DEFAULT_MAX_DEPTH`. */
  readonly maxDepth?: number | undefined;
  /**
   * The before-step hook of a team member's run: called before each model call that follows a
   * reply. The texts it returns (team replies) are appended to the run log as a `mail` entry,
   * so they reach the next model call, or the resumed run if this one is cut first.
   */
  readonly beforeModelCall?: (() => readonly string[] | Promise<readonly string[]>) | undefined;
  /** A parent run's trace, which also receives this run's events. */
  readonly trace?: ((event: TraceEvent) => void) | undefined;
  /** The caller's context (R9), handed to every tool as `ctx.context`. */
  readonly context?: unknown;
  /** The conversation id of a run without a session: a parent run's, or a fresh one. */
  readonly sessionId?: string | undefined;
  /**
   * Where a run without a session stores its log when it is interrupted for approvals (R14),
   * so that `resume()` finds it: the agent's `sessionStore`. Absent for agent tools' child
   * runs, which cannot pause.
   */
  readonly store?: SessionStore | undefined;
  /**
   * Whether the run may still start something (H28): asked before each model request (and
   * each retry of one) and each tool call starts. A parent run's, inherited by its agent
   * tools' child runs through `ParentRun.mayStart`: a step whose lease lapsed stops its
   * children too. Absent: always.
   */
  readonly mayStart?: (() => boolean) | undefined;
}
