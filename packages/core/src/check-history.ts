import type { ContentBlock, ModelMessage } from "@lattice/providers";
import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import { contentBlocksProblem } from "./content-blocks-problem.js";

/**
 * Checks a conversation the caller kept (`query(prompt, { messages })`, R4) before any model
 * call: plain `{ role, content }` messages, a user message first, blocks of the types their
 * role may hold with the fields the providers read (the same check as a prompt's, a stored
 * reply's and a tool result's blocks), every `tool_use` of an assistant message (each id once)
 * answered by one `tool_result` in the next (user) message, and no `tool_result` without its
 * call in the message before. A history whose last message is an assistant message with
 * unanswered `tool_use` blocks is an unfinished run: refused.
 *
 * @param messages - The history as the caller gave it.
 * @returns The same messages, typed.
 * @throws {@link InvalidOptionError} naming the message index and the rule broken.
 */
export function checkHistory(messages: unknown): readonly ModelMessage[] {
  const problem = historyProblem(messages);
  if (problem !== undefined) throw new InvalidOptionError("QueryOptions:", "messages", problem);
  return messages as readonly ModelMessage[];
}

/**
 * What is wrong with a conversation by the rules of {@link checkHistory}, as the rest of a
 * sentence whose subject is the conversation (`"does not answer the tool call ..."`), or
 * `undefined` when nothing is. Also checks the history a stored `run_started` entry holds
 * (H24). Linear in the number of blocks.
 *
 * @param messages - The conversation.
 */
export function historyProblem(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) {
    return `must be an array of { role, content } messages (for example result.messages of an earlier run), received ${describeValue(messages)}.`;
  }
  let pending: Set<string> | undefined;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Partial<ModelMessage> | null;
    const at = `message ${index}`;
    if (message === null || typeof message !== "object") {
      return `${at} is ${describeValue(message)}; each message is { role, content }.`;
    }
    const { role, content } = message as Partial<ModelMessage>;
    if (role !== "user" && role !== "assistant") {
      return `${at} has role ${describeValue(role)}; a role is "user" or "assistant".`;
    }
    if (typeof content !== "string" && !Array.isArray(content)) {
      return `${at} has content ${describeValue(content)}; content is a string or an array of blocks.`;
    }
    if (index === 0 && role !== "user") {
      return `${at} is an ${role} message; a conversation starts with a user message.`;
    }
    const blocks = Array.isArray(content) ? (content as readonly unknown[]) : [];
    const blockProblem = contentBlocksProblem(blocks, role);
    if (blockProblem !== undefined) return `${at} holds ${blockProblem}.`;
    // The calls of the message before, when it is an assistant message: answered here, once.
    const answered = new Set<string>();
    for (const block of blocks as ContentBlock[]) {
      if (block.type !== "tool_result") continue;
      const id = block.tool_use_id;
      if (pending === undefined || !pending.has(id)) {
        return `${at} holds a tool_result for ${describeValue(id)}, but message ${index - 1} has no tool_use with that id: a result must follow its call.`;
      }
      if (answered.has(id)) return `${at} holds a second tool_result for ${describeValue(id)}.`;
      answered.add(id);
    }
    if (pending !== undefined) {
      // The previous assistant message called tools: this one must answer every call.
      if (role !== "user") {
        return `${at} follows tool calls (${listed(pending)}) of message ${index - 1} but is not a user message with their tool_result blocks.`;
      }
      const missing = [...pending].filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `${at} does not answer the tool call${missing.length === 1 ? "" : "s"} ${listed(missing)} of message ${index - 1}: every tool_use needs a tool_result in the next user message.`;
      }
    }
    pending = undefined;
    if (role === "assistant") {
      for (const block of blocks as ContentBlock[]) {
        if (block.type !== "tool_use") continue;
        pending ??= new Set();
        if (pending.has(block.id)) {
          return `${at} uses the tool_use id ${describeValue(block.id)} for more than one call; the model API refuses that.`;
        }
        pending.add(block.id);
      }
    }
  }
  if (pending !== undefined) {
    return `ends with message ${messages.length - 1}, an assistant message whose tool calls (${listed(pending)}) have no results: that run is unfinished. Answer them with tool_result blocks in a user message, or drop that last message.`;
  }
  return undefined;
}

/** Tool call ids for a message: the first few, each cut short. */
function listed(ids: Iterable<string>): string {
  const all = [...ids];
  const shown = all.slice(0, 3).map((id) => (id.length > 60 ? `${id.slice(0, 57)}...` : id));
  return all.length > 3 ? `${shown.join(", ")}, ...` : shown.join(", ");
}
