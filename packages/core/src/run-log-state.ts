import type { ContentBlock, ModelMessage, ToolResultBlock } from "@lattice/providers";
import type { TextBlock } from "@lattice/tools";
import { historyProblem } from "./check-history.js";
import { checkLogEntry, checkStoredEntry } from "./check-log-entry.js";
import {
  addChildUsage,
  addModelUsage,
  type LoggedRun,
  newRun,
  type OpenBatch,
} from "./logged-run.js";
import { blockText } from "./next-step.js";
import { duplicateToolUseId, toolUsesOf } from "./reply-content.js";
import type {
  CompactionEntry,
  LoggedDecision,
  RunFinishedEntry,
  RunLogEntry,
} from "./run-log-entry.js";
import { OUTPUT_TOOL_NAME } from "./run-output.js";
import { SessionError } from "./session-error.js";
import type { JsonValue, SessionEntry } from "./session-store.js";
import { addUsage } from "./usage-totals.js";

/**
 * A run log folded into what the loop needs: the conversation (R2) and the state of the latest
 * run. Entries are applied one at a time, as they are appended or loaded, so a long run never
 * re-reads its log.
 */
export class RunLogState {
  #messages: ModelMessage[] = [];
  /**
   * For each message of the conversation, the index of the log entry it came from (C3: a
   * compaction names the entries it replaces).
   */
  #origins: number[] = [];
  /**
   * Mail texts to append to the last message (a user message), not yet merged into it: merged
   * once, when the conversation is read, so that a run of many mail entries costs linear time.
   */
  #mail: TextBlock[] | undefined;
  /** The latest run, once a `run_started` entry was applied. */
  run: LoggedRun | undefined;
  /** How many entries were applied. */
  size = 0;
  /**
   * The latest count of the request's size (C1): the input tokens the API counted for the
   * latest call (input, cache read and cache write), or a compaction's size after it; -1 while
   * none is known. It covers the conversation's first `countedMessages` messages, with the
   * system prompt and tools.
   */
  countedTokens = -1;
  /** How many messages `countedTokens` covers. */
  countedMessages = 0;
  /** The output tokens of the latest reply (part of the conversation since). */
  lastOutputTokens = 0;
  /** The version of the checkpoint the state was loaded from (0: none), C8. */
  checkpointVersion = 0;
  /** Whether a compaction was applied since the checkpoint (or the start). */
  compactedSinceCheckpoint = false;

  /**
   * The conversation, derived from the entries (R2): what the next model call is sent. A
   * message is never changed in place once in it (a merge replaces it).
   */
  get messages(): ModelMessage[] {
    if (this.#mail !== undefined) this.#mergeMail();
    return this.#messages;
  }

  /**
   * Checks one entry of a stored log and applies it: the one place where a stored log is
   * folded (loading a session for a prompt, `resume()`, `step()`, `endRun()`,
   * `stepMessages()`). The entry must have the fields of its type and fit the log before it
   * (H24, the rules `checkLogEntry` checks). Constant work per entry beyond its own size, so
   * loading stays linear in the log.
   *
   * @param sessionId - The session, for the error.
   * @param stored - The entry as the store gave it; its index is the count applied so far.
   * @returns The entry, typed.
   * @throws {@link SessionError} `"session_log_version"` or `"session_log_invalid"`, naming the
   *   session, the entry's index and the rule it breaks; nothing was applied then.
   */
  load(sessionId: string, stored: SessionEntry): RunLogEntry {
    const entry = checkLogEntry(sessionId, stored, this.size, this.run);
    if (entry.type === "compaction" && entry.replaced > this.messages.length) {
      throw new SessionError(
        "session_log_invalid",
        sessionId,
        `Session ${JSON.stringify(sessionId)}: run log entry ${this.size} (compaction) replaces ${entry.replaced} messages, but the conversation before it has ${this.messages.length}. The log was damaged, or written by something else: nothing was sent to the model and nothing was changed. Delete the session, or restore it from a backup.`,
      );
    }
    if (entry.type === "run_started") this.#rememberRun(entry.runId);
    this.apply(entry);
    return entry;
  }

  /**
   * Whether a run of this id started in the stored log loaded so far (a checkpoint's latest
   * {@link KEPT_RUN_IDS} runs, and the entries after it), so that a first step delivered twice
   * is not started again. Internal.
   */
  hasRun(runId: string): boolean {
    return this.#runIds?.includes(runId) === true;
  }

  /**
   * The ids of the runs whose `run_started` was loaded from a store (or that a checkpoint kept),
   * the latest last; a checkpoint keeps the latest {@link KEPT_RUN_IDS}.
   */
  #runIds: string[] | undefined;

  #rememberRun(runId: string): void {
    if (this.#runIds === undefined) this.#runIds = [runId];
    else this.#runIds.push(runId);
  }

  /** Applies one entry (already checked) to the conversation and the run. */
  apply(entry: RunLogEntry): void {
    this.size++;
    switch (entry.type) {
      case "run_started": {
        if (entry.history !== undefined) for (const message of entry.history) this.#push(message);
        this.#push(entry.message);
        this.run = newRun(entry.runId, entry.time);
        return;
      }
      case "run_resumed":
        return;
      case "reply": {
        const run = this.run!;
        const usage = entry.usage;
        const counted =
          usage.inputTokens +
          (usage.cacheReadInputTokens ?? 0) +
          (usage.cacheCreationInputTokens ?? 0);
        if (counted > 0) {
          // What the call was sent: every message before its reply (C1).
          this.countedTokens = counted;
          this.countedMessages = this.#messages.length;
          this.lastOutputTokens = usage.outputTokens;
        }
        this.#push(entry.message);
        run.numTurns = entry.turn;
        addUsage(run.usage, entry.usage);
        run.lastReply = entry;
        run.feedback = undefined;
        // A call whose model or provider prepareStep chose starts its own chain: when it did not
        // fall back, the run stays where it was (L12).
        if (entry.fallback !== undefined) run.fallbackIndex = entry.fallback;
        else if (entry.overrides?.model === undefined && entry.overrides?.provider === undefined) {
          run.fallbackIndex = 0;
        }
        if (entry.model !== undefined) addModelUsage(run, entry.model, entry.usage);
        const toolUses = toolUsesOf(entry.message.content);
        run.batch =
          toolUses.length === 0
            ? undefined
            : {
                toolUses,
                ids: new Set(toolUses.map((call) => call.id)),
                results: new Map(),
                complete: false,
              };
        run.decisions = undefined;
        return;
      }
      case "tool_result": {
        const run = this.run!;
        const batch = run.batch;
        if (entry.usage !== undefined) addChildUsage(run, entry.usage);
        if (batch === undefined || batch.complete) return;
        if (entry.toolName === OUTPUT_TOOL_NAME && entry.block.is_error === true) {
          run.outputFailures++;
          run.lastOutputError = blockText(entry.block);
        }
        batch.results.set(entry.toolUseId, entry);
        if (batch.results.size < batch.toolUses.length) return;
        batch.complete = true;
        const content: ToolResultBlock[] = [];
        for (const call of batch.toolUses) {
          const result = batch.results.get(call.id);
          if (result !== undefined) content.push(result.block);
        }
        this.#push({ role: "user", content });
        return;
      }
      case "mail": {
        const texts: TextBlock[] = entry.texts.map((text) => ({ type: "text", text }));
        const pending = this.#mail;
        if (pending !== undefined) {
          for (const text of texts) pending.push(text);
          return;
        }
        const messages = this.#messages;
        const last = messages[messages.length - 1];
        if (last !== undefined && last.role === "user" && Array.isArray(last.content)) {
          this.#mail = texts;
        } else {
          this.#push({ role: "user", content: texts });
        }
        return;
      }
      case "interrupt":
        this.run!.pending = entry.approvals;
        return;
      case "guardrail": {
        const run = this.run!;
        if (run.guardrails === undefined) run.guardrails = [entry];
        else run.guardrails.push(entry);
        if (entry.tripwire) run.tripped ??= entry;
        return;
      }
      case "output_feedback": {
        const run = this.run!;
        run.feedback = entry;
        run.outputFailures++;
        run.lastOutputError = entry.text;
        this.#push({ role: "user", content: [{ type: "text", text: entry.text }] });
        return;
      }
      case "decisions": {
        const run = this.run!;
        // Decisions add up within a batch: a resumed batch may pause again for other calls.
        const decisions = run.decisions ?? new Map<string, LoggedDecision>();
        for (const approval of run.pending ?? []) {
          if (!Object.hasOwn(entry.decisions, approval.approvalId)) continue;
          const decision = entry.decisions[approval.approvalId];
          if (decision !== undefined) decisions.set(approval.toolUseId, decision);
        }
        run.decisions = decisions;
        run.pending = undefined;
        run.answeredApprovalIds.push(new Set(Object.keys(entry.decisions)));
        return;
      }
      case "compaction": {
        this.#compact(entry);
        // Outside a run (a caller's compaction of a finished session), usage is the entry's own.
        const run = this.run;
        if (entry.usage !== undefined && run !== undefined && !run.finished) {
          addUsage(run.usage, entry.usage);
          if (entry.model !== undefined) addModelUsage(run, entry.model, entry.usage);
        }
        return;
      }
      case "run_finished": {
        const run = this.run!;
        run.finished = true;
        run.finishedEntry = entry;
        const batch = run.batch;
        if (batch !== undefined && !batch.complete) {
          this.#closeBatch(batch);
          // Closed: what follows the end (mail, a compaction) comes after an answered batch.
          batch.complete = true;
        }
        return;
      }
    }
  }

  /**
   * Makes the conversation one the next prompt can be sent on when a run ended with calls
   * that have no result (a reply that repeated a tool_use id, H13; a resumed run that failed
   * before its calls ran): the API refuses a tool_use without its tool_result. When the
   * reply's ids are distinct, each call without a logged result is answered with an
   * `is_error` result saying so, next to the results that were logged, so the model sees what
   * ran. When an id repeats, no call ran (H13) and no result could tell the calls apart: the
   * reply's tool_use blocks are left out, its other blocks kept (the reply is left out when
   * nothing else remains). The log itself is not changed.
   */
  #closeBatch(batch: OpenBatch): void {
    const messages = this.messages;
    // While a batch is open nothing follows its reply in the conversation.
    const reply = messages[messages.length - 1];
    if (duplicateToolUseId(batch.toolUses) !== undefined) {
      if (reply === undefined || reply.role !== "assistant" || !Array.isArray(reply.content)) {
        return;
      }
      const kept = (reply.content as readonly ContentBlock[]).filter(
        (block) => block.type !== "tool_use",
      );
      if (kept.length === 0) {
        messages.pop();
        this.#origins.pop();
      } else messages[messages.length - 1] = { role: "assistant", content: kept };
      return;
    }
    const content: ToolResultBlock[] = batch.toolUses.map(
      (call) =>
        batch.results.get(call.id)?.block ?? {
          type: "tool_result",
          tool_use_id: call.id,
          content: [
            {
              type: "text",
              text: `Tool call "${call.name}" (${call.id}) has no result: its run ended before the call settled (it may have started, or never ran).`,
            },
          ],
          is_error: true,
        },
    );
    this.#push({ role: "user", content });
  }

  /** Adds a message after the last, once pending mail is merged into the last. */
  #push(message: ModelMessage): void {
    if (this.#mail !== undefined) this.#mergeMail();
    this.#messages.push(message);
    // The entry being applied (size already counts it).
    this.#origins.push(this.size - 1);
  }

  /**
   * Applies a compaction (C3): the first `replaced` messages become the entry's `messages`, and
   * the cleared tool results' content becomes their placeholders. Messages are replaced, never
   * changed in place (they may be shared with the log's entries).
   */
  #compact(entry: CompactionEntry): void {
    const messages = this.messages;
    const origins = this.#origins;
    const index = this.size - 1;
    if (entry.cleared !== undefined && entry.cleared.length > 0) {
      // By message and id: ids may repeat across turns (a server that sends none gets made-up
      // ones), so a cleared result names the message it is in when the entry knows it.
      const placeholders = new Map<string, string>();
      for (const cleared of entry.cleared) {
        placeholders.set(
          cleared.message === undefined
            ? cleared.toolUseId
            : `${cleared.message}:${cleared.toolUseId}`,
          cleared.placeholder,
        );
      }
      for (let at = 0; at < messages.length; at++) {
        const message = messages[at]!;
        if (message.role !== "user" || !Array.isArray(message.content)) continue;
        let changed: ContentBlock[] | undefined;
        const content = message.content as readonly ContentBlock[];
        for (let block = 0; block < content.length; block++) {
          const current = content[block]!;
          if (current.type !== "tool_result") continue;
          const placeholder =
            placeholders.get(`${at}:${current.tool_use_id}`) ??
            placeholders.get(current.tool_use_id);
          if (placeholder === undefined) continue;
          changed ??= [...content];
          changed[block] = {
            type: "tool_result",
            tool_use_id: current.tool_use_id,
            content: [{ type: "text", text: placeholder }],
            ...(current.is_error === true ? { is_error: true } : {}),
          };
        }
        if (changed !== undefined) messages[at] = { role: "user", content: changed };
      }
    }
    if (entry.replaced > 0) {
      const added = entry.messages ?? [];
      const kept = messages.slice(entry.replaced);
      const keptOrigins = origins.slice(entry.replaced);
      this.#messages = [...added, ...kept];
      this.#origins = [...added.map(() => index), ...keptOrigins];
    }
    this.countedTokens = entry.tokensAfter;
    this.countedMessages = this.#messages.length;
    this.lastOutputTokens = 0;
    this.compactedSinceCheckpoint = true;
  }

  /**
   * The log entry each message of the conversation came from, by message index (C3). Internal.
   */
  originOf(messageIndex: number): number {
    return this.#origins[messageIndex] ?? this.size - 1;
  }

  /**
   * The conversation's size as the latest count says (C1): the tokens counted for the latest
   * call plus its reply's output, or `undefined` while none is known.
   */
  get contextTokens(): number | undefined {
    return this.countedTokens < 0 ? undefined : this.countedTokens + this.lastOutputTokens;
  }

  /**
   * The state as a checkpoint holds it (C8), JSON: only for a log whose latest run finished
   * (or that has none), so that nothing of a run in progress needs keeping. Internal.
   */
  toCheckpoint(): JsonValue | undefined {
    const run = this.run;
    if (run !== undefined && !run.finished) return undefined;
    const messages = this.messages;
    const state: { [key: string]: JsonValue } = {
      format: CHECKPOINT_FORMAT,
      messages: messages as unknown as JsonValue,
      origins: this.#origins,
      countedTokens: this.countedTokens,
      countedMessages: this.countedMessages,
      lastOutputTokens: this.lastOutputTokens,
    };
    const runIds = [...(this.#runIds ?? [])];
    if (run !== undefined && runIds.at(-1) !== run.runId) runIds.push(run.runId);
    state.runIds = runIds.slice(-KEPT_RUN_IDS);
    if (run !== undefined) {
      state.run = {
        runId: run.runId,
        startedTime: run.startedTime,
        numTurns: run.numTurns,
        finished: run.finishedEntry as unknown as JsonValue,
      };
    }
    return state;
  }

  /**
   * Restores the state from a checkpoint (C8), on a fresh state; `false` (and nothing changed)
   * when the checkpoint is not one this release wrote or its conversation is not one the API
   * accepts: the caller then folds the whole log. Internal.
   */
  fromCheckpoint(version: number, value: JsonValue): boolean {
    if (this.size !== 0 || value === null || typeof value !== "object" || Array.isArray(value)) {
      return false;
    }
    const state = value as { readonly [key: string]: JsonValue | undefined };
    const { messages, origins, countedTokens, countedMessages, lastOutputTokens } = state;
    if (
      state.format !== CHECKPOINT_FORMAT ||
      !Array.isArray(messages) ||
      !Array.isArray(origins) ||
      origins.length !== messages.length ||
      !origins.every((origin) => Number.isSafeInteger(origin)) ||
      typeof countedTokens !== "number" ||
      typeof countedMessages !== "number" ||
      typeof lastOutputTokens !== "number" ||
      (messages.length > 0 && historyProblem(messages as unknown as ModelMessage[]) !== undefined)
    ) {
      return false;
    }
    const run = state.run as
      | {
          readonly runId?: unknown;
          readonly startedTime?: unknown;
          readonly numTurns?: unknown;
          readonly finished?: unknown;
        }
      | undefined;
    let finished: RunFinishedEntry | undefined;
    if (run !== undefined) {
      if (
        typeof run.runId !== "string" ||
        typeof run.startedTime !== "string" ||
        !Number.isSafeInteger(run.numTurns)
      ) {
        return false;
      }
      try {
        const entry = checkStoredEntry("", run.finished, 0);
        if (entry.type !== "run_finished") return false;
        finished = entry;
      } catch {
        return false;
      }
    }
    const runIds = state.runIds;
    if (
      runIds !== undefined &&
      (!Array.isArray(runIds) || !runIds.every((id) => typeof id === "string"))
    ) {
      return false;
    }
    this.#runIds = runIds === undefined ? undefined : [...(runIds as string[])];
    this.#messages = messages as unknown as ModelMessage[];
    this.#origins = origins as number[];
    this.countedTokens = countedTokens;
    this.countedMessages = countedMessages;
    this.lastOutputTokens = lastOutputTokens;
    this.size = version;
    this.checkpointVersion = version;
    if (run !== undefined && finished !== undefined) {
      this.run = {
        ...newRun(run.runId as string, run.startedTime as string),
        finished: true,
        finishedEntry: finished,
        numTurns: run.numTurns as number,
      };
      addUsage(this.run.usage, finished.usage);
    }
    return true;
  }

  /** Merges the pending mail texts into the last message (a user message with blocks). */
  #mergeMail(): void {
    const messages = this.#messages;
    const last = messages[messages.length - 1]!;
    const content = [...(last.content as readonly ContentBlock[])];
    for (const text of this.#mail!) content.push(text);
    messages[messages.length - 1] = { role: "user", content };
    this.#mail = undefined;
  }
}

/**
 * How many of a session's latest run ids a checkpoint keeps (C8), so that a run's first step
 * delivered again is recognised without reading the whole log: one delivered again after more
 * than this many later runs of the same session is not.
 */
const KEPT_RUN_IDS = 1000;

/** The version of the checkpoints this release writes and reads (C8). */
const CHECKPOINT_FORMAT = 1;
