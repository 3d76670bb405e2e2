import {
  type AgentQuery,
  createAgent,
  memorySessionStore,
  type SDKResultMessage,
} from "@lattice/core";
import type { ModelMessage } from "@lattice/providers";
import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptedBlock,
  type ScriptedModelServer,
  type ScriptedTurn,
} from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import type { UIMessage } from "ai";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  fromUIMessages,
  type LatticeUIMessageChunk,
  toUIMessageStream,
  toUIMessages,
  traceRelay,
  uiMessagesOfSession,
} from "./index.js";
import { assembleWithAiSdk, comparable, readChunks } from "./ui-stream.test-helpers.js";

/** One scripted model call: optional thinking and text, then calls of the three test tools. */
interface TurnPlan {
  readonly thinking: string | null;
  readonly text: string | null;
  readonly calls: readonly { readonly tool: "echo" | "fail" | "gate"; readonly arg: string }[];
}

const turnPlan: fc.Arbitrary<TurnPlan> = fc.record({
  thinking: fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: null }),
  text: fc.option(fc.string({ minLength: 1, maxLength: 60 }), { nil: null }),
  calls: fc.array(
    fc.record({
      tool: fc.constantFrom("echo" as const, "fail" as const, "gate" as const),
      // "refuse" makes the batch policy refuse the batch it is in.
      arg: fc.oneof(fc.constant("refuse"), fc.string({ maxLength: 12 })),
    }),
    { maxLength: 3 },
  ),
});

const scenario = fc.record({
  turns: fc.array(turnPlan, { minLength: 1, maxLength: 4 }),
  answer: fc.string({ minLength: 1, maxLength: 80 }),
  /** Per call needing approval, in order: approve or deny (with or without a reason). */
  decisions: fc.array(fc.constantFrom("approve", "deny", "deny with reason"), {
    minLength: 12,
    maxLength: 12,
  }),
  chunkSize: fc.integer({ min: 1, max: 16 }),
});

/** The model's reply to a request: the turn numbered by how many assistant messages the request has. */
function reply(turns: readonly TurnPlan[], answer: string, chunkSize: number) {
  return (request: RecordedRequest): ScriptedTurn => {
    const messages = (request.body as { messages: { role: string }[] }).messages;
    const index = messages.filter((message) => message.role === "assistant").length;
    const plan = turns[index];
    if (plan === undefined) {
      return { content: [{ type: "text", text: answer }], chunkSize };
    }
    const content: ScriptedBlock[] = [];
    if (plan.thinking !== null)
      content.push({ type: "thinking", thinking: plan.thinking, signature: `sig-${index}` });
    if (plan.text !== null) content.push({ type: "text", text: plan.text });
    plan.calls.forEach((call, at) => {
      content.push({
        type: "tool_use",
        id: `call_${index}_${at}`,
        name: call.tool,
        input: { arg: call.arg },
      });
    });
    if (content.length === 0) content.push({ type: "text", text: answer });
    return { content, stopReason: plan.calls.length > 0 ? "tool_use" : "end_turn", chunkSize };
  };
}

let server: ScriptedModelServer;
let respond: (request: RecordedRequest) => ScriptedTurn = () => ({
  content: [{ type: "text", text: "-" }],
});
beforeAll(async () => {
  server = await createScriptedModelServer({
    respond: (request) => respond(request),
    recordRequests: false,
  });
});
afterAll(async () => {
  await server.close();
});

function makeAgent() {
  const relay = traceRelay();
  const args = z.object({ arg: z.string() });
  const tools = [
    tool("echo", "Echoes", args, async ({ arg }) => ({ content: `echo ${arg}` }), {
      isConcurrencySafe: () => true,
    }),
    tool("fail", "Fails", args, async ({ arg }) => {
      throw new Error(`fail ${arg}`);
    }),
    tool("gate", "Needs a person", args, async ({ arg }) => ({ content: `gate ${arg}` }), {
      needsApproval: true,
    }),
  ];
  const agent = createAgent({
    apiKey: "sk-test-differential",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    tools,
    includePartialMessages: true,
    maxTurns: 10,
    sessionStore: memorySessionStore(),
    onTrace: relay.onTrace,
    toolBatchPolicy: {
      validate: ({ toolCalls }) =>
        toolCalls.some((call) => (call.input as { arg?: unknown }).arg === "refuse")
          ? { allowed: false, code: "refused", message: "This batch asks for a refusal." }
          : { allowed: true },
    },
  });
  return { agent, relay };
}

/** Streams a query through the official reader, continuing `message` when given. */
async function stream(
  query: AgentQuery,
  relay: ReturnType<typeof traceRelay>,
  message?: UIMessage,
  approvals?: Parameters<typeof toUIMessageStream>[1],
) {
  const chunks = await readChunks(toUIMessageStream(query, { trace: relay, ...approvals }));
  const assembled = await assembleWithAiSdk(chunks, message);
  return { chunks, ...assembled };
}

/** A conversation with every string content as one text block, as the UI round trip gives it back. */
function blocksOnly(messages: readonly ModelMessage[]): unknown {
  return messages.map((message) => ({
    role: message.role,
    content:
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : message.content.map((block) =>
            block.type === "tool_result" && typeof block.content === "string"
              ? { ...block, content: [{ type: "text", text: block.content }] }
              : block,
          ),
  }));
}

/** A comparable message with approvals left out, and denied and failed calls both as failures. */
function withoutApprovals(message: unknown): unknown {
  const { parts, ...rest } = message as { parts: Record<string, unknown>[] };
  return {
    ...rest,
    parts: parts.map(({ approval: _approval, ...part }) =>
      part.state === "output-denied" || part.state === "output-error"
        ? { ...part, state: "failed", errorText: undefined }
        : part,
    ),
  };
}

describe("the stream against the official client (W5)", () => {
  it("W5: over random runs (parallel calls, errors, refusals, approvals, reasoning) the ai reader assembles the run's messages", async () => {
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ turns, answer, decisions, chunkSize }) => {
        cases++;
        respond = reply(turns, answer, chunkSize);
        const { agent, relay } = makeAgent();
        const sessionId = `diff-${cases}`;
        const query = agent.query("Go", { sessionId });
        let { chunks, message, errors } = await stream(query, relay);
        let result: SDKResultMessage = await query.finalResult();
        expect(errors).toEqual([]);
        let decided = 0;
        // Answer every pause as a person would, on the page, and continue the same message.
        while (result.subtype === "interrupted") {
          const pending = result.pendingApprovals ?? [];
          expect(
            chunks
              .filter((chunk) => chunk.type === "tool-approval-request")
              .map((chunk) => chunk.approvalId),
          ).toEqual(pending.map((approval) => approval.approvalId));
          const answered = structuredClone(message as UIMessage);
          const denied: string[] = [];
          const verdicts: Record<
            string,
            { approved: true } | { approved: false; reason?: string }
          > = {};
          for (const approval of pending) {
            const choice = decisions[decided++ % decisions.length];
            const part = answered.parts.find(
              (candidate) =>
                (candidate as { toolCallId?: string }).toolCallId === approval.toolUseId,
            ) as { state: string; approval: Record<string, unknown> };
            expect(part.state).toBe("approval-requested");
            part.state = "approval-responded";
            if (choice === "approve") {
              part.approval = { ...part.approval, approved: true };
              verdicts[approval.approvalId] = { approved: true };
            } else {
              const reason = choice === "deny with reason" ? "not now" : undefined;
              part.approval = { ...part.approval, approved: false, ...(reason ? { reason } : {}) };
              verdicts[approval.approvalId] = reason
                ? { approved: false, reason }
                : { approved: false };
              denied.push(approval.toolUseId);
            }
          }
          const resumed = agent.resume(sessionId, { decisions: verdicts });
          ({ chunks, message, errors } = await stream(resumed, relay, answered, {
            approvals: { decisions: verdicts, deniedToolCallIds: denied },
          }));
          result = await resumed.finalResult();
          expect(errors).toEqual([]);
        }
        expect(result.subtype).toBe("success");

        // 1. The run's own messages, as UI parts: the same parts in the same order. (A
        // conversation does not say which calls a person approved or denied: a denial is an
        // is_error result there. The log, below, says it, and the round trip checks the texts.)
        const truth = toUIMessages(result.messages).at(-1) as UIMessage;
        expect(withoutApprovals(comparable({ ...(message as UIMessage), id: truth.id }))).toEqual(
          withoutApprovals(comparable(truth)),
        );
        // 2. The chat after a reload (the session's log): the same message, id included.
        const { entries } = await agent.sessionStore.load(sessionId);
        expect(comparable(message)).toEqual(
          comparable(uiMessagesOfSession(entries, sessionId).at(-1)),
        );
        // 3. What the page would send back is the conversation the model saw.
        const prompt: UIMessage = { id: "p", role: "user", parts: [{ type: "text", text: "Go" }] };
        expect(fromUIMessages([prompt, message as UIMessage])).toEqual(blocksOnly(result.messages));
        // Every chunk kind that the run's facts call for was sent.
        // (A turn without calls ends the run: the turns after it are never asked for.)
        const last = turns.findIndex((turn) => turn.calls.length === 0);
        const calls = turns
          .slice(0, last === -1 ? turns.length : last)
          .flatMap((turn) => turn.calls);
        if (calls.length > 0) {
          const kinds = new Set((message as UIMessage).parts.map((part) => part.type));
          expect([...kinds].some((kind) => kind === "data-lattice-tool-call")).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it("W5: a run aborted at any chunk leaves a stream the ai reader accepts, and its session resumes cleanly", async () => {
    await fc.assert(
      fc.asyncProperty(
        scenario,
        fc.integer({ min: 1, max: 60 }),
        async ({ turns, answer, chunkSize }, cutAt) => {
          const noApprovals = turns.map((turn) => ({
            ...turn,
            calls: turn.calls.map((call) =>
              call.tool === "gate" ? { ...call, tool: "echo" as const } : call,
            ),
          }));
          respond = reply(noApprovals, answer, chunkSize);
          const { agent, relay } = makeAgent();
          const sessionId = `abort-${Math.random()}`;
          const reader = toUIMessageStream(agent.query("Go", { sessionId }), {
            trace: relay,
          }).getReader();
          const chunks: LatticeUIMessageChunk[] = [];
          for (let index = 0; index < cutAt; index++) {
            const next = await reader.read();
            if (next.done) break;
            chunks.push(next.value);
          }
          await reader.cancel();
          const cut = await assembleWithAiSdk(chunks);
          expect(cut.errors).toEqual([]);
          const { entries } = await agent.sessionStore.load(sessionId);
          const finished = entries.some((entry) => entry.type === "run_finished");
          if (!finished) {
            const resumed = agent.resume(sessionId);
            const after = await stream(resumed, relay, cut.message);
            expect(after.errors).toEqual([]);
            expect((await resumed.finalResult()).subtype).toBe("success");
          }
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
