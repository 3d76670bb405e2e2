import type { ModelProviderV1 } from "@lattice/providers";
import { AbortError } from "@lattice/scheduler";
import { catchRejection, createAbortError } from "@lattice/scheduler/internal";
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { resolveProvider } from "./agent-options.js";
import { validateMaxDepth } from "./agent-tool.js";
import { DEFAULT_MAX_DEPTH, failureText } from "./call-agent.js";
import { type AgentDefinition, isAgentDefinition } from "./define-agent.js";
import {
  assertMailbox,
  createInMemoryMailbox,
  type Mailbox,
  type MailboxMessage,
} from "./mailbox.js";
import { createMemberRuntime, type MemberRuntime } from "./member-runtime.js";
import { HandoffError } from "./multi-agent-errors.js";
import type { InheritedModel } from "./prepare-agent.js";
import { prefixedRandomId } from "./random-id.js";
import { runAgent } from "./run-agent.js";
import type { SDKMessage, SDKResultMessage } from "./sdk-message.js";

/**
 * The options of {@link createTeam}. Checked strictly: an unknown key throws with the prefix
 * `createTeam():`.
 */
export interface TeamOptions {
  /** The members, from `defineAgent`; names must be unique (and not `"user"`). */
  readonly members: readonly AgentDefinition[];
  /** Where handed-off tasks and replies wait. Default {@link createInMemoryMailbox}(). */
  readonly mailbox?: Mailbox;
  /** The model of members whose definition names none. */
  readonly model?: string;
  /** The provider of members whose definition sets no `provider`, `apiKey` or `baseURL`. */
  readonly provider?: ModelProviderV1;
  /** The API key of the default Anthropic-compatible provider for such members. Not with `provider`. */
  readonly apiKey?: string;
  /** The base URL of the default Anthropic-compatible provider for such members. Not with `provider`. */
  readonly baseURL?: string;
  /** The deepest chain of agents (calls and handoffs) the team allows. Default {@link DEFAULT_MAX_DEPTH}. */
  readonly maxDepth?: number;
  /**
   * Receives every {@link TeamEvent}, synchronously, in order. It may be `async`; whatever it
   * throws, and a promise it returns that rejects, is ignored (never an unhandled rejection).
   */
  readonly onEvent?: (event: TeamEvent) => void;
}

const TEAM_OPTION_KEYS: ReadonlySet<string> = new Set([
  "members",
  "mailbox",
  "model",
  "provider",
  "apiKey",
  "baseURL",
  "maxDepth",
  "onEvent",
]);
const PREFIX = "createTeam():";
const USER = "user";

/** Options of {@link Team.run}. Checked strictly. */
export interface TeamRunOptions {
  /** Aborts this run (and the agents it calls); the promise rejects with an `AbortError`. */
  readonly signal?: AbortSignal;
}

/** Fields every team event carries. */
export interface TeamEventBase {
  /** Monotonic timestamp in milliseconds (`performance.now()`). */
  readonly time: number;
}

/** A message entered the mailbox: a handoff (`kind: "task"`) or a reply. */
export interface TeamMailPostedEvent extends TeamEventBase {
  readonly type: "mail_posted";
  readonly mail: MailboxMessage;
}

/** A member started a run on a message: a task (from `team.run` or a handoff), or a reply that arrived after its last run ended. */
export interface TeamRunStartedEvent extends TeamEventBase {
  readonly type: "run_started";
  /** The team's id of the run: `"run_1"`, `"run_2"`, ... */
  readonly runId: string;
  readonly member: string;
  /** The message the run works on. */
  readonly mail: MailboxMessage;
  /** How deep the run stands in its chain of agents (the first agent is 0). */
  readonly depth: number;
}

/** A reply reached a member while it was running: it is appended to its next model turn. */
export interface TeamMailDeliveredEvent extends TeamEventBase {
  readonly type: "mail_delivered";
  readonly runId: string;
  readonly member: string;
  readonly mail: MailboxMessage;
}

/** A member's run ended with a result message (which may be an error result). */
export interface TeamRunFinishedEvent extends TeamEventBase {
  readonly type: "run_finished";
  readonly runId: string;
  readonly member: string;
  readonly mail: MailboxMessage;
  readonly result: SDKResultMessage;
}

/** A member's run was aborted or threw. */
export interface TeamRunFailedEvent extends TeamEventBase {
  readonly type: "run_failed";
  readonly runId: string;
  readonly member: string;
  readonly mail: MailboxMessage;
  /** An error named `AbortError` when the run was aborted. */
  readonly error: unknown;
}

/**
 * A message of a member's run, as `agent.query()` would yield it; messages of agents it
 * called (agent tools in "call" mode) carry their `parentToolUseId`.
 */
export interface TeamAgentMessageEvent extends TeamEventBase {
  readonly type: "agent_message";
  readonly runId: string;
  readonly member: string;
  readonly message: SDKMessage;
}

/** Everything `onEvent` receives: who did what, in order. */
export type TeamEvent =
  | TeamMailPostedEvent
  | TeamRunStartedEvent
  | TeamMailDeliveredEvent
  | TeamRunFinishedEvent
  | TeamRunFailedEvent
  | TeamAgentMessageEvent;

/** A group of member agents over one mailbox: what {@link createTeam} returns. */
export interface Team {
  /** The members' names, in the order given. */
  readonly members: readonly string[];
  /** The team's mailbox. Posting to it delivers like a handoff: the recipient runs the task. */
  readonly mailbox: Mailbox;
  /** Whether {@link Team.abort} was called. */
  readonly aborted: boolean;
  /**
   * Gives `member` a task from outside the team and resolves with the result of the run that
   * works on it. Runs it starts through handoffs go on after that; await {@link Team.idle}.
   *
   * @throws {@link HandoffError} (`unknown_member`) for a name that is not a member.
   * @throws an error named `"AbortError"` when `options.signal` aborts the run, or when the
   *   team is aborted: then `"The team was aborted..."`, once every run the team had started
   *   has settled.
   * @throws the mailbox's error when posting the task fails.
   */
  run(member: string, task: string, options?: TeamRunOptions): Promise<SDKResultMessage>;
  /**
   * Resolves when the team is idle: no member running and every member's mailbox empty.
   * After {@link Team.abort}, resolves once every run has settled.
   *
   * @throws the mailbox's error when it failed to deliver.
   */
  idle(): Promise<void>;
  /**
   * Aborts every running run (and the agents they call) and starts no more. Messages taken
   * from the mailbox but not yet run go back to it. Pending `run()` promises reject with an
   * `AbortError` ("The team was aborted: <reason>. ...") once every run the team had started
   * has settled, so their tool handlers have settled too; tasks still waiting never started.
   * Later `run()` calls reject at once.
   */
  abort(reason?: unknown): void;
}

interface MemberState {
  readonly name: string;
  readonly member: MemberRuntime;
  /** Messages taken from the mailbox, waiting for the member's next run. */
  readonly pending: MailboxMessage[];
  /** Whether a pump is running the member's messages. */
  active: boolean;
  /** Set by every post; the pump looks at the mailbox again before it stops. */
  dirty: boolean;
}

interface RunWaiter {
  readonly resolve: (result: SDKResultMessage) => void;
  readonly reject: (error: unknown) => void;
  readonly signal: AbortSignal | undefined;
}

/**
 * Creates a team: named member agents over one {@link Mailbox}.
 *
 * How work flows:
 * - `team.run(member, task)` (or a message posted to `team.mailbox`) starts a run of the
 *   member. A member runs one message at a time, in arrival order; members run concurrently.
 * - In a member's run, agent tools in "handoff" mode post to the team's mailbox; the target
 *   member then runs the task (the prompt names the sender).
 * - When a run on a handed-off task ends, its result (or failure) is posted back to the
 *   sender as a reply. If the sender is running, the reply is appended as a text block to
 *   the user message of its next model turn; otherwise the sender starts a new run on it.
 *   A sender that is not a member (a task posted to `team.mailbox` from outside) finds the
 *   reply in the mailbox under its name. `team.run` resolves with the result instead.
 * - Calls and handoffs extend a chain of agents; one deeper than `maxDepth` is refused with
 *   an {@link AgentDepthError} (as an `is_error` tool_result), which stops cycles such as
 *   A → B → A → ….
 *
 * Members without their own model or endpoint use the team's `model` and `provider` (or
 * `apiKey`/`baseURL`); agents they call inherit from them.
 *
 * @example
 * ```ts
 * const team = createTeam({ members: [lead, researcher, writer], model: "claude-sonnet-4-6" });
 * const result = await team.run("lead", "Write a short report on tides");
 * await team.idle();
 * ```
 *
 * @param options - {@link TeamOptions}.
 * @throws `UnknownOptionError` for an unknown key.
 * @throws `InvalidOptionError` for no members, duplicate names, a member without any model, or a bad value.
 */
export function createTeam(options: TeamOptions): Team {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new InvalidOptionError(
      PREFIX,
      "options",
      `must be an object { members, ... }, received ${describeValue(options)}.`,
    );
  }
  assertKnownOptions(options, TEAM_OPTION_KEYS, PREFIX);
  const inner = options.mailbox ?? createInMemoryMailbox();
  assertMailbox(inner, PREFIX);
  const maxDepth = validateMaxDepth(options.maxDepth, PREFIX) ?? DEFAULT_MAX_DEPTH;
  validateEndpoint(options);
  if (options.onEvent !== undefined && typeof options.onEvent !== "function") {
    throw new InvalidOptionError(
      PREFIX,
      "onEvent",
      `must be a function (event) => void, received ${describeValue(options.onEvent)}.`,
    );
  }
  const states = validateMembers(options);
  const byName = new Map(states.map((state) => [state.name, state]));
  const controller = new AbortController();
  const waiters = new Map<string, RunWaiter>();
  const idleWaiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  let failure: { error: unknown } | undefined;
  /** `run()` waiters of an aborted team: rejected once no member runs any more. */
  const abortedWaiters: RunWaiter[] = [];
  /** The reason given to {@link Team.abort}, if any. */
  let abortReason: unknown;
  let runCount = 0;
  let inherited: InheritedModel | undefined;
  const inheritedModel = (): InheritedModel => {
    inherited ??= { provider: resolveProvider(options), model: options.model };
    return inherited;
  };

  const emit = (event: TeamEvent): void => {
    try {
      // An async listener that rejects is ignored too, never an unhandled rejection (H1).
      if (options.onEvent !== undefined) catchRejection(options.onEvent(event), ignore);
    } catch {
      // A listener must never break the team.
    }
  };
  const fail = (error: unknown): void => {
    failure ??= { error };
    for (const waiter of idleWaiters.splice(0)) waiter.reject(error);
  };

  const mailbox: Mailbox = Object.freeze({
    async post(mail: MailboxMessage): Promise<void> {
      const state = byName.get(mail?.to);
      if (state === undefined) {
        throw new HandoffError(
          "unknown_member",
          `${PREFIX} cannot deliver to ${describeValue(mail?.to)}: it is not a member of this team (members: ${[...byName.keys()].join(", ")}). Add it to createTeam({ members }).`,
        );
      }
      await inner.post(mail);
      emit({ type: "mail_posted", time: performance.now(), mail });
      schedule(state);
    },
    take: (member: string) => inner.take(member),
    size: (member?: string) => inner.size(member),
  });

  /**
   * The error `run()` rejects with once the team is aborted. `settled` says whether every run
   * the team had started has settled (so far as `run()` promises go, they reject only then).
   */
  const teamAbortError = (settled: boolean): AbortError =>
    new AbortError(
      `The team was aborted${abortDetail(abortReason)}. ${
        settled
          ? "Every run it had started has settled; tasks still waiting never started."
          : "It starts no more runs."
      }`,
      { cause: controller.signal.reason },
    );

  /** Rejects the waiters of an aborted team once no member is running. */
  const settleAborted = (): void => {
    if (!controller.signal.aborted || states.some((state) => state.active)) return;
    if (abortedWaiters.length === 0) return;
    const error = teamAbortError(true);
    for (const waiter of abortedWaiters.splice(0)) waiter.reject(error);
  };

  /** Rejects a waiter, or, for an abort of the team, keeps it for {@link settleAborted}. */
  const rejectWaiter = (waiter: RunWaiter | undefined, error: unknown): void => {
    if (waiter === undefined) return;
    if (controller.signal.aborted && (error as { name?: unknown })?.name === "AbortError") {
      abortedWaiters.push(waiter);
      return;
    }
    waiter.reject(error);
  };

  const schedule = (state: MemberState): void => {
    state.dirty = true;
    void pump(state);
  };

  const pump = async (state: MemberState): Promise<void> => {
    if (state.active || controller.signal.aborted) return;
    state.active = true;
    try {
      while (!controller.signal.aborted) {
        let mail = state.pending.shift();
        if (mail === undefined) {
          state.dirty = false;
          state.pending.push(...(await inner.take(state.name)));
          mail = state.pending.shift();
          if (mail === undefined) {
            if (state.dirty) continue;
            break;
          }
        }
        await runMail(state, mail);
      }
    } catch (error) {
      fail(error);
    } finally {
      state.active = false;
    }
    settleAborted();
    void checkIdle();
  };

  const runMail = async (state: MemberState, mail: MailboxMessage): Promise<void> => {
    const waiter = waiters.get(mail.id);
    waiters.delete(mail.id);
    const runId = `run_${++runCount}`;
    const signal =
      waiter?.signal === undefined
        ? controller.signal
        : AbortSignal.any([controller.signal, waiter.signal]);
    if (signal.aborted) {
      const error = createAbortError(signal.reason);
      emit({ type: "run_failed", time: performance.now(), runId, member: state.name, mail, error });
      rejectWaiter(waiter, error);
      return;
    }
    const depth = mail.chain.length - 1;
    emit({ type: "run_started", time: performance.now(), runId, member: state.name, mail, depth });
    let result: SDKResultMessage;
    try {
      const runtime = await state.member.runtimeFor(inheritedModel());
      result = await runAgent(
        runtime,
        { kind: "prompt", prompt: mailboxMessageText(mail) },
        signal,
        {
          parentToolUseId: null,
          emit: (message) =>
            emit({
              type: "agent_message",
              time: performance.now(),
              runId,
              member: state.name,
              message,
            }),
          depth,
          agentName: state.name,
          chain: mail.chain,
          mailbox,
          maxDepth,
          beforeModelCall: () => takeInbox(state, runId),
        },
      );
    } catch (error) {
      emit({ type: "run_failed", time: performance.now(), runId, member: state.name, mail, error });
      rejectWaiter(waiter, error);
      if (!signal.aborted && waiter === undefined) {
        const message = error instanceof Error ? error.message : String(error);
        await reply(mail, `Agent "${state.name}" failed: ${message}`, true);
      }
      return;
    }
    emit({
      type: "run_finished",
      time: performance.now(),
      runId,
      member: state.name,
      mail,
      result,
    });
    if (waiter !== undefined) {
      waiter.resolve(result);
      return;
    }
    await reply(
      mail,
      result.isError ? failureText(state.name, result) : result.result,
      result.isError,
    );
  };

  /**
   * Posts a finished task's result back to its sender: delivered when the sender is a member;
   * otherwise kept in the mailbox under the sender's name, for whoever posted the task to take.
   */
  const reply = async (mail: MailboxMessage, text: string, isError: boolean): Promise<void> => {
    if (mail.kind !== "task") return;
    const message = mailboxReply(mail, text, isError);
    if (byName.has(mail.from)) {
      await mailbox.post(message);
      return;
    }
    await inner.post(message);
    emit({ type: "mail_posted", time: performance.now(), mail: message });
  };

  /** Before a running member's next turn: replies go into the turn, tasks wait for a run. */
  const takeInbox = async (state: MemberState, runId: string): Promise<readonly string[]> => {
    if (controller.signal.aborted) return [];
    const texts: string[] = [];
    for (const mail of await inner.take(state.name)) {
      if (mail.kind !== "reply") {
        state.pending.push(mail);
        continue;
      }
      emit({ type: "mail_delivered", time: performance.now(), runId, member: state.name, mail });
      texts.push(mailboxMessageText(mail));
    }
    return texts;
  };

  const checkIdle = async (): Promise<void> => {
    if (idleWaiters.length === 0 || states.some((state) => state.active)) return;
    if (failure !== undefined) {
      fail(failure.error);
      return;
    }
    if (!controller.signal.aborted) {
      for (const state of states) {
        if (state.pending.length > 0 || (await inner.size(state.name)) > 0) {
          schedule(state);
          return;
        }
      }
      if (states.some((state) => state.active)) return;
    }
    for (const waiter of idleWaiters.splice(0)) waiter.resolve();
  };

  const team: Team = {
    members: Object.freeze(states.map((state) => state.name)),
    mailbox,
    get aborted() {
      return controller.signal.aborted;
    },
    async run(member, task, runOptions) {
      assertKnownOptions(runOptions, ["signal"], "team.run():");
      const signal = runOptions?.signal;
      if (signal !== undefined && !(signal instanceof AbortSignal)) {
        throw new InvalidOptionError(
          "team.run():",
          "signal",
          `must be an AbortSignal, received ${describeValue(signal)}.`,
        );
      }
      if (!byName.has(member)) {
        throw new HandoffError(
          "unknown_member",
          `team.run(): ${describeValue(member)} is not a member of this team (members: ${[...byName.keys()].join(", ")}).`,
        );
      }
      if (typeof task !== "string" || task === "") {
        throw new InvalidOptionError(
          "team.run():",
          "task",
          `must be a non-empty string, received ${describeValue(task)}.`,
        );
      }
      if (controller.signal.aborted) throw teamAbortError(false);
      const mail: MailboxMessage = {
        id: prefixedRandomId("mail_"),
        kind: "task",
        from: USER,
        to: member,
        task,
        createdAt: new Date().toISOString(),
        chain: [member],
      };
      let waiter: RunWaiter | undefined;
      const done = new Promise<SDKResultMessage>((resolve, reject) => {
        waiter = { resolve, reject, signal };
      });
      // The team may reject `done` (abort) while the post below is still in flight: mark it
      // handled now; the caller still gets the rejection through the promise returned below.
      done.catch(() => {});
      waiters.set(mail.id, waiter as RunWaiter);
      try {
        await mailbox.post(mail);
      } catch (error) {
        waiters.delete(mail.id);
        const index = abortedWaiters.indexOf(waiter as RunWaiter);
        if (index !== -1) abortedWaiters.splice(index, 1);
        throw error;
      }
      return done;
    },
    idle() {
      const promise = new Promise<void>((resolve, reject) => {
        idleWaiters.push({ resolve, reject });
      });
      void checkIdle();
      return promise;
    },
    abort(reason) {
      if (controller.signal.aborted) return;
      abortReason = reason;
      controller.abort(reason ?? new AbortError("The team was aborted."));
      // Tasks not started yet never will be; their callers hear so once the running runs
      // have settled (settleAborted, here or when the last pump stops).
      abortedWaiters.push(...waiters.values());
      waiters.clear();
      for (const state of states) {
        for (const mail of state.pending.splice(0)) {
          Promise.resolve(inner.post(mail)).catch(fail);
        }
      }
      settleAborted();
      void checkIdle();
    },
  };
  return Object.freeze(team);
}

/** The reason given to `team.abort()`, as `": reason"` for the message; empty without one. */
function abortDetail(reason: unknown): string {
  if (typeof reason === "string" && reason !== "") return `: ${reason}`;
  if (reason instanceof Error && !(reason instanceof DOMException) && reason.message !== "") {
    return `: ${reason.message}`;
  }
  return "";
}

/**
 * How a mailbox message reads to the member it is for, as a team shows it: a task as written
 * (with who handed it off), a reply as `Reply from "writer" to the task you handed off (...)`
 * followed by the result. For runners that deliver mail themselves (`StepOptions.takeMail`).
 *
 * @param mail - A task or a reply.
 */
export function mailboxMessageText(mail: MailboxMessage): string {
  if (mail.kind === "reply") {
    const about = `the task you handed off ("${shorten(mail.task)}")`;
    return mail.isError === true
      ? `"${mail.from}" failed ${about}:\n\n${mail.result ?? ""}`
      : `Reply from "${mail.from}" to ${about}:\n\n${mail.result ?? ""}`;
  }
  if (mail.from === USER) return mail.task;
  return `"${mail.from}" handed you this task:\n\n${mail.task}`;
}

/**
 * The reply to a handed-off task, as a team posts it back to the sender when the member's run
 * ends: from the member, to the task's sender, with the run's result text (or what went
 * wrong, with `isError`).
 *
 * @param task - The task message (`kind: "task"`) being answered.
 * @param result - The member's result text, or the failure.
 * @param isError - Whether the member's run failed.
 */
export function mailboxReply(
  task: MailboxMessage,
  result: string,
  isError: boolean,
): MailboxMessage {
  return {
    id: prefixedRandomId("mail_"),
    kind: "reply",
    from: task.to,
    to: task.from,
    task: task.task,
    createdAt: new Date().toISOString(),
    chain: [...task.chain, task.from],
    inReplyTo: task.id,
    result,
    ...(isError ? { isError: true } : {}),
  };
}

function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function validateEndpoint(options: TeamOptions): void {
  for (const key of ["model", "apiKey", "baseURL"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "string") {
      throw new InvalidOptionError(
        PREFIX,
        key,
        `must be a string, received ${describeValue(options[key])}.`,
      );
    }
  }
  if (options.provider === undefined) return;
  const provider = options.provider as Partial<ModelProviderV1> | null;
  if (
    provider === null ||
    typeof provider !== "object" ||
    typeof provider.stream !== "function" ||
    provider.specificationVersion !== "v1"
  ) {
    throw new InvalidOptionError(
      PREFIX,
      "provider",
      `must be a v1 model provider such as anthropic({...}) or openaiCompatible({...}), received ${describeValue(options.provider)}.`,
    );
  }
  for (const key of ["apiKey", "baseURL"] as const) {
    if (options[key] !== undefined) {
      throw new InvalidOptionError(
        PREFIX,
        key,
        `cannot be combined with "provider": pass it to the provider factory instead.`,
      );
    }
  }
}

function validateMembers(options: TeamOptions): MemberState[] {
  const members: unknown = options.members;
  if (!Array.isArray(members) || members.length === 0) {
    throw new InvalidOptionError(
      PREFIX,
      "members",
      `must be a non-empty array of definitions from defineAgent(), received ${describeValue(members)}.`,
    );
  }
  const states: MemberState[] = [];
  const names = new Set<string>();
  members.forEach((definition: unknown, index) => {
    if (!isAgentDefinition(definition)) {
      throw new InvalidOptionError(
        PREFIX,
        `members[${index}]`,
        `is not an agent definition (received ${describeValue(definition)}). Make members with defineAgent({ name, ... }).`,
      );
    }
    const name = definition.name;
    if (names.has(name) || name === USER) {
      throw new InvalidOptionError(
        PREFIX,
        "members",
        name === USER
          ? `holds a member named "user", a name the team keeps for tasks from outside. Rename it.`
          : `holds two members named "${name}". Member names must be unique; rename one of them.`,
      );
    }
    if (
      (definition.model === undefined || definition.model === "") &&
      options.model === undefined
    ) {
      throw new InvalidOptionError(
        PREFIX,
        `members[${index}]`,
        `("${name}") names no model: set model on its definition, or a default with createTeam({ model }).`,
      );
    }
    names.add(name);
    states.push({
      name,
      member: createMemberRuntime(definition),
      pending: [],
      active: false,
      dirty: false,
    });
  });
  return states;
}

function ignore(): void {
  // A team listener's failure is ignored, like a synchronous throw.
}
