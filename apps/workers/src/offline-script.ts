import { randomBytes } from "node:crypto";
import type { RecordedRequest, ScriptedBlock, ScriptedTurn } from "agent-lattice/testing";
import { ticketOf } from "./tickets.js";

/** A content block as it travels in an Anthropic Messages request. */
interface WireBlock {
  readonly type: string;
  readonly text?: string;
  readonly id?: string;
  readonly name?: string;
  readonly input?: unknown;
  readonly tool_use_id?: string;
  readonly content?: string | readonly WireBlock[];
}

/** A message as it travels in an Anthropic Messages request. */
interface WireMessage {
  readonly role: "user" | "assistant";
  readonly content: string | readonly WireBlock[];
}

const HELP =
  'I\'m the offline triage model. Ask me to "triage ticket 7": I read the ticket, then check ' +
  "its service and its customer, and give it a priority.";

/**
 * What the offline "model" answers. Every worker process starts its own scripted model
 * server, so this reads only the request, as a real model would, and keeps no state: a step
 * taken over by another worker gets the answer the first worker would have got.
 *
 * - "triage ticket 7": calls `read_ticket` (step 0);
 * - after `read_ticket`'s result: calls `check_service` and `lookup_customer` in one reply
 *   (step 2), a batch of two calls that run at once (step 3);
 * - after those results: one sentence with the ticket's priority (step 4), and the run ends.
 *
 * @param request - The request the scripted model server received.
 * @returns The reply.
 */
export function offlineTurn(request: RecordedRequest): ScriptedTurn {
  const messages = (request.body as { messages: readonly WireMessage[] }).messages;
  const last = messages.at(-1);
  if (last === undefined || !isToolResults(last)) return { content: answer(textOf(last)) };
  const calls = blocksOf(messages.at(-2)?.content).filter((block) => block.type === "tool_use");
  const results = new Map<string, string>();
  for (const block of blocksOf(last.content)) {
    const call = calls.find((candidate) => candidate.id === block.tool_use_id);
    if (call?.name !== undefined) results.set(call.name, textOf(block));
  }
  const ticket = results.get("read_ticket");
  if (ticket !== undefined) return { content: afterTicket(ticket) };
  return { content: verdict(ticketOf(latestPrompt(messages)), results) };
}

function answer(prompt: string): ScriptedBlock[] {
  const ticket = ticketOf(prompt);
  if (ticket === undefined) return [{ type: "text", text: HELP }];
  return [
    { type: "text", text: `I'll read ticket ${ticket} first.` },
    toolUse("read_ticket", { ticket }),
  ];
}

/** After `read_ticket`: check the service and the customer, in one reply. */
function afterTicket(ticket: string): ScriptedBlock[] {
  const match = /^Ticket (\d+) from customer (\d+) about (\w+)/.exec(ticket);
  if (match === null) return [{ type: "text", text: `I could not read the ticket: ${ticket}` }];
  const [, number, customer, service] = match;
  return [
    { type: "text", text: `Ticket ${number} is about ${service}: I'll check it and the customer.` },
    toolUse("check_service", { service }),
    toolUse("lookup_customer", { customer: Number(customer) }),
  ];
}

/** After the service and the customer: the ticket's priority, in one sentence. */
function verdict(
  ticket: number | undefined,
  results: ReadonlyMap<string, string>,
): ScriptedBlock[] {
  const service = results.get("check_service") ?? "";
  const customer = results.get("lookup_customer") ?? "";
  const degraded = /\bdegraded\b/.test(service);
  const plan = /on the (\w+) plan/.exec(customer)?.[1] ?? "unknown";
  const priority = !degraded ? "low" : plan === "free" ? "normal" : "high";
  const name = /^(\w+) is/.exec(service)?.[1] ?? "the service";
  const text =
    `Ticket ${ticket ?? "?"}: priority ${priority}. ${name} is ${degraded ? "degraded" : "healthy"}` +
    ` and the customer is on the ${plan} plan.`;
  return [{ type: "text", text }];
}

/** A `tool_use` block with an id unique across processes (each starts its own server). */
function toolUse(name: string, input: object): ScriptedBlock {
  return { type: "tool_use", id: `toolu_offline_${randomBytes(9).toString("hex")}`, name, input };
}

/** The latest prompt of the conversation: the last user message that is not tool results. */
function latestPrompt(messages: readonly WireMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role === "user" && !isToolResults(message)) return textOf(message);
  }
  return "";
}

function isToolResults(message: WireMessage): boolean {
  return message.role === "user" && blocksOf(message.content).some((b) => b.type === "tool_result");
}

function blocksOf(content: WireMessage["content"] | undefined): readonly WireBlock[] {
  return Array.isArray(content) ? content : [];
}

function textOf(item: { readonly content?: string | readonly WireBlock[] } | undefined): string {
  const content = item?.content ?? "";
  if (typeof content === "string") return content;
  return content.map((block) => block.text ?? "").join("");
}
