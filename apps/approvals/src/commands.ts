import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { type SqliteSessionStore, sqliteSessionStore } from "@lattice/store-sqlite";
import {
  type AgentQuery,
  type ApprovalDecision,
  LatticeError,
  type SDKResultMessage,
} from "agent-lattice";
import { appFiles, type Command, commandPrefix, shellQuote } from "./args.js";
import { DecisionDrafts, type SessionDraft } from "./decision-draft.js";
import { type OpsAgent, openOpsAgent } from "./ops-agent.js";
import { readSessionState, type SessionState } from "./session-log.js";
import { checkToolInput, opsTools } from "./tools.js";
import { count, messageLines, pendingLines, preview, resultLine } from "./transcript.js";

/** Exit codes: done (or paused for approval), failed, Ctrl-C. */
const OK = 0;
const FAILED = 1;
const STOPPED = 130;

/** Where a command runs and writes. */
export interface AppContext {
  /** The SQLite database, an absolute path. */
  readonly db: string;
  /** The environment: API keys, `APPROVALS_ACTIONS_LOG`, `APPROVALS_WORK_MS`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Writes a line of output. */
  readonly print: (line: string) => void;
  /** Writes a line about a failure. */
  readonly printError: (line: string) => void;
  /** Aborted by Ctrl-C: a run in progress stops and stays resumable. */
  readonly signal: AbortSignal;
}

/** What the commands of one process share: the store, the drafts, the agent and the output. */
interface App {
  readonly ctx: AppContext;
  readonly store: SqliteSessionStore;
  readonly drafts: DecisionDrafts;
  readonly prefix: string;
  /** The tools whose handlers this process started, in order. */
  readonly started: string[];
  /** Reads a session's state from the store. */
  state(sessionId: string): Promise<SessionState>;
  /** Starts the agent (and, offline, this process's scripted model server). */
  agent(): Promise<OpsAgent>;
}

/**
 * Runs one command of the app on the SQLite session store at `ctx.db` (created, with its
 * folder, when missing).
 *
 * @param command - The parsed command.
 * @param ctx - {@link AppContext}.
 * @returns The exit code: 0 when the command did its job (a run that paused for approval
 *   included), 1 when it failed or the run ended with an error, 130 after Ctrl-C.
 */
export async function runCommand(command: Command, ctx: AppContext): Promise<number> {
  let store: SqliteSessionStore;
  try {
    mkdirSync(dirname(ctx.db), { recursive: true });
    store = sqliteSessionStore({ path: ctx.db });
  } catch (error) {
    ctx.printError(`cannot open ${ctx.db}: ${error instanceof Error ? error.message : error}`);
    return FAILED;
  }
  const files = appFiles(ctx.db, ctx.env);
  let ops: OpsAgent | undefined;
  const app: App = {
    ctx,
    store,
    drafts: new DecisionDrafts(files.drafts),
    prefix: commandPrefix(ctx.db),
    started: [],
    state: async (sessionId) => readSessionState((await store.load(sessionId)).entries),
    agent: async () => {
      if (ops === undefined) {
        ops = await openOpsAgent({
          store,
          fleetPath: files.fleet,
          actionsPath: files.actions,
          workMs: workMs(ctx.env.APPROVALS_WORK_MS),
          env: ctx.env,
          onTrace: (event) => {
            if (event.type === "tool_call_started") app.started.push(event.name);
          },
        });
        ctx.print(ops.banner);
      }
      return ops;
    },
  };
  const sessionId = command.kind === "list" ? undefined : (command.session ?? newSessionId());
  try {
    return await dispatch(app, command, sessionId);
  } catch (error) {
    return failure(app, sessionId, error);
  } finally {
    await ops?.close();
    await store.close();
  }
}

function dispatch(app: App, command: Command, sessionId: string | undefined) {
  switch (command.kind) {
    case "run":
      return run(app, sessionId!, command.task);
    case "pending":
      return pending(app, sessionId!);
    case "decide":
      return decide(app, command);
    case "resume":
      return resume(app, sessionId!);
    case "list":
      return list(app);
  }
}

/** `run`: a new prompt on a session (a new one unless `--session` names one). */
async function run(app: App, sessionId: string, task: string): Promise<number> {
  const { ctx } = app;
  const state = await app.state(sessionId);
  if (state.pending.length > 0) {
    ctx.printError(
      `Session ${sessionId} waits for approval: decide its pending calls before a new task.`,
    );
    showPending(app, sessionId, state);
    return FAILED;
  }
  if (state.lastRun !== undefined && !state.lastRun.finished) {
    ctx.printError(
      `The last run of session ${sessionId} has not finished: another process is running it, or a crash or Ctrl-C cut it. ${resumeAdvice(app, sessionId)}`,
    );
    return FAILED;
  }
  const { agent } = await app.agent();
  ctx.print(`Session ${sessionId} in ${ctx.db}`);
  ctx.print(`you> ${task}`);
  const result = await show(
    app,
    agent.query(task, { sessionId, signal: ctx.signal }),
    new Map(state.toolNames),
  );
  return ended(app, sessionId, result);
}

/** `pending`: what the session waits for, from its run log and the decisions drafted. */
async function pending(app: App, sessionId: string): Promise<number> {
  const { ctx } = app;
  const state = await app.state(sessionId);
  if (!state.exists) return noSession(app, sessionId);
  if (state.pending.length > 0) {
    showPending(app, sessionId, state);
  } else if (state.lastRun !== undefined && !state.lastRun.finished) {
    ctx.print(
      `No call of session ${sessionId} waits for a decision, but its last run has not finished: another process is running it, or a crash or Ctrl-C cut it. ${resumeAdvice(app, sessionId)}`,
    );
  } else {
    const last = state.lastRun;
    ctx.print(
      `Nothing waits in session ${sessionId}: its last run finished (${last?.subtype ?? "?"})${last?.result ? `: ${preview(last.result)}` : "."}`,
    );
  }
  return OK;
}

/**
 * `approve` and `deny`: the decisions are added to the session's draft; once every pending
 * call has one, the run resumes here with all of them.
 */
async function decide(app: App, command: Extract<Command, { kind: "decide" }>): Promise<number> {
  const { ctx } = app;
  const sessionId = command.session;
  const state = await app.state(sessionId);
  if (!state.exists) return noSession(app, sessionId);
  const pendingIds = state.pending.map((approval) => approval.approvalId);
  const ids = command.all ? pendingIds : command.ids;
  const unknown = ids.filter((id) => !pendingIds.includes(id));
  if (state.pending.length === 0) {
    const why =
      state.lastRun !== undefined && !state.lastRun.finished
        ? `Its last run has not finished: another process is running it, or a crash or Ctrl-C cut it. ${resumeAdvice(app, sessionId)}`
        : "Its last run finished.";
    const named = unknown.length > 0 ? ` (${unknown.join(", ")}: not pending)` : "";
    ctx.printError(`Session ${sessionId} waits for no decision${named}, so nothing ran. ${why}`);
    return FAILED;
  }
  if (unknown.length > 0) {
    ctx.printError(
      `${unknown.join(", ")} ${unknown.length === 1 ? "is" : "are"} not pending in session ${sessionId} (already decided, or never asked). Pending now: ${state.pending.map((approval) => `${approval.approvalId} (${approval.toolName})`).join(", ")}. Nothing ran.`,
    );
    return FAILED;
  }

  if (command.input !== undefined) {
    const toolName = state.pending.find((approval) => approval.approvalId === ids[0])!.toolName;
    const tools = opsTools({ fleetPath: "", actionsPath: "", workMs: 0 });
    const problems = await checkToolInput(tools, toolName, command.input);
    if (problems !== undefined) {
      ctx.printError(
        `--input is not a valid input of ${toolName}, so nothing was recorded and nothing ran:\n  ${problems.replaceAll("\n", "\n  ")}`,
      );
      return FAILED;
    }
  }
  const decision: ApprovalDecision = command.approve
    ? command.input !== undefined
      ? { approved: true, input: command.input }
      : { approved: true }
    : command.reason !== undefined
      ? { approved: false, reason: command.reason }
      : { approved: false };
  const decidedAt = new Date().toISOString();
  const taken: Record<string, SessionDraft[string]> = {};
  for (const id of ids) {
    const approval = state.pending.find((candidate) => candidate.approvalId === id)!;
    taken[id] = { decision, toolName: approval.toolName, decidedAt };
    ctx.print(
      `${command.approve ? "Approved" : "Denied"}: ${approval.toolName} ${JSON.stringify(command.input ?? approval.input)} (${id})`,
    );
  }
  const draft = await app.drafts.add(sessionId, pendingIds, taken);
  const undecided = state.pending.filter((approval) => draft[approval.approvalId] === undefined);
  if (undecided.length > 0) {
    const others =
      undecided.length === 1
        ? "the other call is"
        : `the ${count(undecided.length, "other call")} are`;
    ctx.print(`Recorded in ${app.drafts.path}. The run resumes once ${others} decided too.`);
    showPending(app, sessionId, state, draft);
    return OK;
  }

  ctx.print(
    `Every pending call of session ${sessionId} is decided: resuming the run in this process (${process.pid}).`,
  );
  const decisions = Object.fromEntries(
    Object.entries(draft).map(([id, entry]) => [id, entry.decision]),
  );
  const { agent } = await app.agent();
  try {
    const result = await show(
      app,
      agent.resume(sessionId, { decisions, signal: ctx.signal }),
      new Map(state.toolNames),
    );
    return await ended(app, sessionId, result);
  } finally {
    // Once resume() logged the decisions, the log keeps them: the draft may go.
    const after = await app.state(sessionId);
    if (!after.pending.some((approval) => pendingIds.includes(approval.approvalId))) {
      await app.drafts.forget(sessionId, pendingIds);
    }
  }
}

/** `resume`: finishes a run cut by a crash or Ctrl-C; calls without a logged result run again. */
async function resume(app: App, sessionId: string): Promise<number> {
  const { ctx } = app;
  const state = await app.state(sessionId);
  if (!state.exists) return noSession(app, sessionId);
  if (state.pending.length > 0) {
    ctx.printError(`Session ${sessionId} waits for decisions: approve or deny its calls.`);
    showPending(app, sessionId, state);
    return FAILED;
  }
  if (state.lastRun === undefined || state.lastRun.finished) {
    ctx.print(`Nothing to resume: the last run of session ${sessionId} finished.`);
    return OK;
  }
  const { agent } = await app.agent();
  ctx.print(`↻ Resuming the unfinished run of session ${sessionId}.`);
  for (const call of state.batch) {
    if (!state.answered.has(call.id)) {
      ctx.print(`  ↻ ${call.name} runs (again, if it had started): its result was not logged`);
    }
  }
  const result = await show(
    app,
    agent.resume(sessionId, { signal: ctx.signal }),
    new Map(state.toolNames),
  );
  return ended(app, sessionId, result);
}

/** `list`: every session of the database and what it waits for. */
async function list(app: App): Promise<number> {
  const ids = await app.store.list();
  if (ids.length === 0) app.ctx.print(`No sessions in ${app.ctx.db} yet.`);
  const width = Math.max(0, ...ids.map((id) => id.length));
  for (const id of ids) {
    const state = await app.state(id);
    const last = state.lastRun;
    const what =
      state.pending.length > 0
        ? `waits for approval: ${state.pending.map((approval) => approval.toolName).join(", ")}`
        : last !== undefined && !last.finished
          ? "unfinished: resume it"
          : `finished (${last?.subtype ?? "?"})`;
    app.ctx.print(`${id.padEnd(width)}  ${what}`);
  }
  return OK;
}

/** Prints a run's messages as they come, and resolves with its result. */
async function show(
  app: App,
  query: AgentQuery,
  toolNames: Map<string, string>,
): Promise<SDKResultMessage> {
  let result: SDKResultMessage | undefined;
  for await (const message of query) {
    for (const line of messageLines(message, toolNames)) app.ctx.print(line);
    if (message.type === "result") result = message;
  }
  return result!;
}

/** Prints how a run ended: its result, or what it waits for. */
async function ended(app: App, sessionId: string, result: SDKResultMessage): Promise<number> {
  if (result.subtype === "interrupted") {
    showPending(app, sessionId, await app.state(sessionId));
    return OK;
  }
  app.ctx.print(resultLine(result));
  return result.isError ? FAILED : OK;
}

function showPending(
  app: App,
  sessionId: string,
  state: SessionState,
  draft: SessionDraft = app.drafts.read(
    sessionId,
    state.pending.map((approval) => approval.approvalId),
  ),
): void {
  const lines = pendingLines({
    session: sessionId,
    pending: state.pending,
    batch: state.batch,
    draft,
    prefix: app.prefix,
  });
  for (const line of lines) app.ctx.print(line);
}

/** What to do with an unfinished run: resume it, unless it is still running elsewhere. */
function resumeAdvice(app: App, sessionId: string): string {
  return `When no other process runs it, "${app.prefix} resume ${shellQuote(sessionId)}" finishes it (a call that had started runs again).`;
}

function noSession(app: App, sessionId: string): number {
  app.ctx.printError(
    `There is no session ${sessionId} in ${app.ctx.db}. "${app.prefix} list" lists the sessions.`,
  );
  return FAILED;
}

/** Tells the user what went wrong, and what to do; returns the exit code. */
function failure(app: App, sessionId: string | undefined, error: unknown): number {
  const { ctx } = app;
  const resumeHint =
    sessionId === undefined ? "" : ` "${app.prefix} resume ${shellQuote(sessionId)}"`;
  if (error instanceof Error && error.name === "AbortError") {
    ctx.printError(`Stopped. The run is saved unfinished:${resumeHint} finishes it.`);
    return STOPPED;
  }
  if (error instanceof LatticeError) {
    switch (error.code) {
      case "session_conflict": {
        const where = `"${app.prefix} pending ${shellQuote(sessionId ?? "")}" shows where it stands.`;
        ctx.printError(
          app.started.length === 0
            ? `Another process got to session ${sessionId} first (it resumed the run, or a run of it is still going), so nothing ran here. ${where}`
            : `Another process wrote to session ${sessionId} while this one was running it, and this one stopped. It had started ${app.started.join(", ")} here: what they did stands, though the session may not have their results. ${where}`,
        );
        ctx.printError(`(${error.message})`);
        return FAILED;
      }
      case "approval_unknown":
      case "approval_missing":
      case "not_interrupted":
        ctx.printError(error.message);
        return FAILED;
      default:
        ctx.printError(`${error.name} (${error.code}): ${error.message}`);
        return FAILED;
    }
  }
  ctx.printError(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  return FAILED;
}

function newSessionId(): string {
  return `ops-${randomBytes(4).toString("hex")}`;
}

function workMs(value: string | undefined): number {
  const ms = value === undefined || value === "" ? 400 : Number(value);
  return Number.isFinite(ms) && ms >= 0 ? ms : 400;
}
