import type { ModelMessage } from "@lattice/providers";
import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";

/**
 * Checks a conversation the caller kept (`query(prompt, { messages })`, R4) before any model
 * call: plain `{ role, content }` messages, a user message first, every `tool_use` of an
 * assistant message answered by a `tool_result` in the next (user) message, and no
 * `tool_result` without its call in the message before. A history whose last message is an
 * assistant message with unanswered `tool_use` blocks is an unfinished run: refused.
 *
 * @param messages - The history as the caller gave it.
 * @returns The same messages, typed.
 * @throws {@link InvalidOptionError} naming the message index and the rule broken.
 */
export function checkHistory(messages: unknown): readonly ModelMessage[] {
  const fail = (text: string): never => {
    throw new InvalidOptionError("QueryOptions:", "messages", text);
  };
  if (!Array.isArray(messages)) {
    return fail(
      `must be an array of { role, content } messages (for example result.messages of an earlier run), received ${describeValue(messages)}.`,
    );
  }
  let pending: Set<string> | undefined;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Partial<ModelMessage> | null;
    const at = `message ${index}`;
    if (message === null || typeof message !== "object") {
      fail(`${at} is ${describeValue(message)}; each message is { role, content }.`);
    }
    const { role, content } = message as Partial<ModelMessage>;
    if (role !== "user" && role !== "assistant") {
      fail(`${at} has role ${describeValue(role)}; a role is "user" or "assistant".`);
    }
    if (typeof content !== "string" && !Array.isArray(content)) {
      fail(
        `${at} has content ${describeValue(content)}; content is a string or an array of blocks.`,
      );
    }
    if (index === 0 && role !== "user") {
      fail(`${at} is an ${role} message; a conversation starts with a user message.`);
    }
    const blocks = Array.isArray(content) ? (content as readonly unknown[]) : [];
    for (const block of blocks) {
      if (
        block === null ||
        typeof block !== "object" ||
        typeof (block as { type?: unknown }).type !== "string"
      ) {
        fail(
          `${at} holds the block ${describeValue(block)}; each block is an object with a "type".`,
        );
      }
    }
    if (pending !== undefined) {
      // The previous assistant message called tools: this one must answer every call.
      if (role !== "user") {
        fail(
          `${at} follows tool calls (${[...pending].join(", ")}) of message ${index - 1} but is not a user message with their tool_result blocks.`,
        );
      }
      for (const block of blocks as { type: string; tool_use_id?: unknown }[]) {
        if (block.type === "tool_result") pending.delete(String(block.tool_use_id));
      }
      if (pending.size > 0) {
        fail(
          `${at} does not answer the tool call${pending.size === 1 ? "" : "s"} ${[...pending].join(", ")} of message ${index - 1}: every tool_use needs a tool_result in the next user message.`,
        );
      }
    }
    const answered = new Set<string>();
    if (index > 0) {
      const previous = messages[index - 1] as ModelMessage;
      if (previous.role === "assistant" && Array.isArray(previous.content)) {
        for (const block of previous.content as { type: string; id?: unknown }[]) {
          if (block.type === "tool_use") answered.add(String(block.id));
        }
      }
    }
    for (const block of blocks as { type: string; tool_use_id?: unknown }[]) {
      if (block.type === "tool_result" && !answered.has(String(block.tool_use_id))) {
        fail(
          `${at} holds a tool_result for ${describeValue(block.tool_use_id)}, but message ${index - 1} has no tool_use with that id: a result must follow its call.`,
        );
      }
    }
    pending = undefined;
    if (role === "assistant") {
      const calls = (blocks as { type: string; id?: unknown }[])
        .filter((block) => block.type === "tool_use")
        .map((block) => String(block.id));
      if (calls.length > 0) pending = new Set(calls);
    }
  }
  if (pending !== undefined) {
    fail(
      `ends with message ${messages.length - 1}, an assistant message whose tool calls (${[...pending].join(", ")}) have no results: that run is unfinished. Answer them with tool_result blocks in a user message, or drop that last message.`,
    );
  }
  return messages as readonly ModelMessage[];
}
