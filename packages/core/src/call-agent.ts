import type { ToolContext, ToolHandlerResult } from "@lattice/tools";
import { type ParentRun, parentRunOf } from "./child-runs.js";
import type { MemberRuntime } from "./member-runtime.js";
import { AgentDepthError } from "./multi-agent-errors.js";
import { runAgent } from "./run-agent.js";
import type { SDKResultMessage } from "./sdk-message.js";

/**
 * How deep agents may nest by default: an agent tool or a handoff that would make the chain
 * of agents (first agent = depth 0) deeper than this is refused with an {@link AgentDepthError}.
 */
export const DEFAULT_MAX_DEPTH = 8;

/** Where the next agent of a chain would stand. Internal. */
export interface NextLink {
  /** The agents from the first one to the next one. */
  readonly chain: readonly string[];
  /** The next agent's depth: `chain.length - 1`. */
  readonly depth: number;
  /** The limit in force, handed on to the next agent's run. */
  readonly maxDepth: number;
}

/**
 * Extends the parent run's chain of agents with `member`, or refuses. Internal.
 *
 * @param prefix - Who asks, for the error: `agentTool("writer"):`.
 * @param parent - The parent run, if any.
 * @param member - The next agent's name.
 * @param maxDepth - The tool's own limit; default the parent's, then {@link DEFAULT_MAX_DEPTH}.
 * @throws {@link AgentDepthError} when the chain would be deeper than the limit.
 */
export function nextLink(
  prefix: string,
  parent: ParentRun | undefined,
  member: string,
  maxDepth: number | undefined,
): NextLink {
  const limit = maxDepth ?? parent?.maxDepth ?? DEFAULT_MAX_DEPTH;
  const chain = [...(parent?.chain ?? []), member];
  const depth = chain.length - 1;
  if (depth > limit) throw new AgentDepthError(prefix, chain, limit);
  return { chain, depth, maxDepth: limit };
}

/**
 * Runs a member agent to completion inside a tool call ("call" mode): the parent's provider
 * and model unless the member sets its own, the parent's AbortSignal, the member's own
 * `maxTurns`. Its messages go to the parent's stream with `parentToolUseId` set to this call;
 * its usage is added to the parent's. Internal.
 *
 * @returns The member's result text, `isError` when its run failed (with its errors).
 * @throws {@link AgentDepthError} when the chain is too deep; an `AbortError` when the parent aborts.
 */
export async function callAgent(
  member: MemberRuntime,
  task: string,
  context: ToolContext,
  prefix: string,
  maxDepth: number | undefined,
): Promise<ToolHandlerResult> {
  const parent = parentRunOf(context);
  const name = member.definition.name;
  const link = nextLink(prefix, parent, name, maxDepth);
  const runtime = await member.runtimeFor(
    parent === undefined ? undefined : { provider: parent.provider, model: parent.model },
  );
  const result = await runAgent(runtime, { kind: "prompt", prompt: task }, context.signal, {
    parentToolUseId: context.toolUseId,
    emit: parent?.emit ?? ignore,
    depth: link.depth,
    agentName: name,
    chain: link.chain,
    mailbox: parent?.mailbox,
    maxDepth: link.maxDepth,
    trace: parent?.trace,
    // The child run belongs to the parent's conversation and sees the caller's context (R9).
    sessionId: parent?.sessionId,
    context: parent !== undefined ? parent.context : context.context,
    // A parent step whose lease lapsed stops its child run too (H28).
    mayStart: parent?.mayStart,
  });
  parent?.reportUsage(context.toolUseId, result.usage);
  if (!result.isError) return { content: result.result };
  return { content: failureText(name, result), isError: true };
}

/** The tool_result text of a member whose run failed. Internal. */
export function failureText(name: string, result: SDKResultMessage): string {
  const errors = result.errors.length > 0 ? result.errors.join("\n") : "no error message";
  const partial = result.result !== "" ? `\nIts last text was: ${result.result}` : "";
  return `Agent "${name}" failed (${result.subtype}): ${errors}${partial}`;
}

function ignore(): void {}
