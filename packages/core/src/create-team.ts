import { AbortError } from "@lattice/scheduler";
import { catchRejection, createAbortError } from "@lattice/scheduler/internal";
import { describeValue } from "@lattice/tools/internal";
import { failureText } from "./call-agent.js";
import { errorMessage } from "./error-message.js";
import type { Mailbox, MailboxMessage } from "./mailbox.js";
import type { MemberRuntime } from "./member-runtime.js";
import { HandoffError } from "./multi-agent-errors.js";
import type { InheritedModel } from "./prepare-agent.js";
import { prefixedRandomId } from "./random-id.js";
import { resolveProvider } from "./resolve-provider.js";
import { runAgent } from "./run-agent.js";
import type { SDKResultMessage } from "./sdk-message.js";
import type { Team } from "./team.js";
import type { TeamEvent } from "./team-event.js";
import { mailboxMessageText, mailboxReply, OUTSIDE_SENDER } from "./team-mail.js";
import {
  CREATE_TEAM_PREFIX,
  checkTeamOptions,
  checkTeamRunArguments,
  type TeamOptions,
} from "./team-options.js";

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
  const checked = checkTeamOptions(options);
  const inner = checked.mailbox;
  const maxDepth = checked.maxDepth;
  const states: MemberState[] = checked.members.map(({ name, member }) => ({
    name,
    member,
    pending: [],
    active: false,
    dirty: false,
  }));
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
          `${CREATE_TEAM_PREFIX} cannot deliver to ${describeValue(mail?.to)}: it is not a member of this team (members: ${[...byName.keys()].join(", ")}). Add it to createTeam({ members }).`,
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
        const message = errorMessage(error);
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
      const signal = checkTeamRunArguments(member, task, runOptions, byName);
      if (controller.signal.aborted) throw teamAbortError(false);
      const mail: MailboxMessage = {
        id: prefixedRandomId("mail_"),
        kind: "task",
        from: OUTSIDE_SENDER,
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

function ignore(): void {
  // A team listener's failure is ignored, like a synchronous throw.
}
