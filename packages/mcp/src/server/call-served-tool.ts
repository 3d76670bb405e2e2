import { randomUUID } from "node:crypto";
import {
  type AnyToolDefinition,
  parseToolInput,
  type ToolContext,
  type ToolResult,
} from "@lattice/tools";
import { executeTool } from "@lattice/tools/internal";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { toMcpContent } from "./to-mcp-content.js";

/**
 * Runs one MCP `tools/call` on a Lattice tool (M11) and answers it as MCP does:
 *
 * 1. The arguments are validated by Lattice (`parseToolInput`); an invalid input is answered
 *    `isError` with the text a model would get, and the handler never runs.
 * 2. A call whose `needsApproval` says yes is answered `isError`: nobody can approve it over
 *    MCP, so it is not run.
 * 3. The handler runs with the request's abort signal (MCP cancellation) and, when the tool has
 *    `timeoutMs`, a deadline; a throw, a malformed return or `isError: true` become an `isError`
 *    result with the handler's message, a deadline an `isError` "timed out" result.
 * 4. The handler's `structuredResult` becomes `structuredContent` (with or without `endTurn`,
 *    which means nothing to an MCP client).
 *
 * Never throws.
 *
 * @param definition - The tool.
 * @param args - The call's `arguments` (`{}` when the client sent none).
 * @param signal - Aborted when the client cancels the request.
 */
export async function callServedTool(
  definition: AnyToolDefinition,
  args: unknown,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const parsed = await parseToolInput(definition, args);
  if (!parsed.success) return errorResult(parsed.error.message);
  const deadline =
    definition.timeoutMs !== undefined ? AbortSignal.timeout(definition.timeoutMs) : undefined;
  const context: ToolContext = {
    signal: deadline === undefined ? signal : AbortSignal.any([signal, deadline]),
    toolUseId: `mcp_${randomUUID()}`,
    toolName: definition.name,
  };
  const refusal = await approvalRefusal(definition, parsed.input, context);
  if (refusal !== undefined) return errorResult(refusal);

  let structuredResult: unknown;
  const capturing: AnyToolDefinition = {
    ...definition,
    async handler(input, ctx) {
      const value = await definition.handler(input, ctx);
      if (value !== null && typeof value === "object") {
        structuredResult = (value as { structuredResult?: unknown }).structuredResult;
      }
      return value;
    },
  };
  const running = executeTool(capturing, parsed.input, context);
  const result =
    deadline === undefined ? await running : await raceDeadline(running, deadline, definition);
  return toCallToolResult(result, result.isError ? undefined : structuredResult);
}

/** Why a call may not run without a person's decision, or `undefined` when it may run. */
async function approvalRefusal(
  definition: AnyToolDefinition,
  input: unknown,
  context: ToolContext,
): Promise<string | undefined> {
  const rule = definition.needsApproval;
  if (rule === undefined) return undefined;
  let needed: boolean;
  try {
    needed = rule === true ? true : (await rule(input, context)) === true;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return `Tool "${definition.name}" was not run: deciding whether the call needs approval failed (${reason}).`;
  }
  return needed
    ? `Tool "${definition.name}" was not run: this call needs a person's approval, which this MCP server cannot ask for. Ask the server's owner to run it, or call it with an input that needs no approval.`
    : undefined;
}

/** The tool's result, or a "timed out" result at its deadline (as an agent's scheduler words it). */
function raceDeadline(
  running: Promise<ToolResult>,
  deadline: AbortSignal,
  definition: AnyToolDefinition,
): Promise<ToolResult> {
  return new Promise((resolve) => {
    const onTimeout = () =>
      resolve({
        content: [
          {
            type: "text",
            text: `Tool "${definition.name}" timed out after ${definition.timeoutMs} ms.`,
          },
        ],
        isError: true,
        endTurn: false,
      });
    if (deadline.aborted) onTimeout();
    deadline.addEventListener("abort", onTimeout, { once: true });
    running.then((result) => {
      deadline.removeEventListener("abort", onTimeout);
      resolve(result);
    });
  });
}

/** A Lattice tool result as an MCP `CallToolResult`. */
function toCallToolResult(result: ToolResult, structuredResult: unknown): CallToolResult {
  const content = toMcpContent(result.content);
  const answer: CallToolResult = { content, ...(result.isError ? { isError: true } : {}) };
  if (structuredResult === undefined) return answer;
  let json: unknown;
  try {
    const text = JSON.stringify(structuredResult);
    json = text === undefined ? undefined : JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      ...answer,
      content: [
        ...content,
        { type: "text", text: `(structuredResult left out: it is not JSON: ${reason})` },
      ],
    };
  }
  return json === undefined ? answer : { ...answer, structuredContent: json as never };
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
