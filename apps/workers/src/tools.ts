import { setTimeout as sleep } from "node:timers/promises";
import { type AnyToolDefinition, type ToolContext, tool } from "agent-lattice";
import { z } from "zod/v4";
import { describeCustomer, describeService, describeTicket, SERVICES } from "./tickets.js";

/** A tool call starting or ending on this worker, as the tools report it. */
export interface CallEvent {
  readonly phase: "start" | "end";
  readonly toolName: string;
  /** The call's tool_use id. */
  readonly toolUseId: string;
  readonly runId: string;
  readonly sessionId: string;
}

/** Options of {@link triageTools}. */
export interface TriageToolsOptions {
  /** How long each call takes, in milliseconds (it waits, as a slow API would). */
  readonly workMs: number;
  /** Told when a call starts and when it ends (not when it is cut by a crash). */
  readonly onCall: (event: CallEvent) => void;
}

/**
 * The triage agent's tools, each a pretend API call that takes `workMs`: `read_ticket`, then
 * `check_service` and `lookup_customer`, which the model calls together in one reply. They
 * may run at once (`isConcurrencySafe`): a batch of two takes `workMs`, not twice that.
 *
 * @param options - {@link TriageToolsOptions}.
 * @returns The tools, for the agent's `tools`.
 */
export function triageTools(options: TriageToolsOptions): AnyToolDefinition[] {
  const { workMs, onCall } = options;
  const work = async (toolName: string, ctx: ToolContext, answer: string) => {
    const call = {
      toolName,
      toolUseId: ctx.toolUseId,
      runId: ctx.run?.runId ?? "",
      sessionId: ctx.run?.sessionId ?? "",
    };
    onCall({ phase: "start", ...call });
    await sleep(workMs, undefined, { signal: ctx.signal });
    onCall({ phase: "end", ...call });
    return { content: answer };
  };
  const safe = { isConcurrencySafe: () => true };
  return [
    tool(
      "read_ticket",
      "Reads a support ticket: who wrote it and about which service.",
      z.object({ ticket: z.number().int().positive().describe("The ticket's number") }),
      ({ ticket }, ctx) => work("read_ticket", ctx, describeTicket(ticket)),
      safe,
    ),
    tool(
      "check_service",
      "Says whether a service is healthy right now.",
      z.object({ service: z.enum(SERVICES).describe("The service") }),
      ({ service }, ctx) => work("check_service", ctx, describeService(service)),
      safe,
    ),
    tool(
      "lookup_customer",
      "Finds a customer's plan.",
      z.object({ customer: z.number().int().describe("The customer's number") }),
      ({ customer }, ctx) => work("lookup_customer", ctx, describeCustomer(customer)),
      safe,
    ),
  ];
}
