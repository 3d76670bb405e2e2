import { historyProblem } from "@lattice/core/internal";
import type { ContentBlock, ModelMessage, ToolResultBlock } from "@lattice/providers";
import type { ImageBlock, TextBlock } from "@lattice/tools";
import type { UIMessage } from "ai";
import { isToolPart, type ToolPartLike, toolNameOf } from "./approval-responses.js";
import { ChatRequestError } from "./chat-request-error.js";

/**
 * Turns a `useChat` history into a Lattice conversation (W4), checked as `query()` checks a
 * caller's history (R4): pass it as `agent.query(prompt, { messages })` when the page keeps
 * the conversation (without a `sessionId`).
 *
 * - A user message's text parts become text blocks, its image files (`data:` or `https:` URLs)
 *   image blocks.
 * - An assistant message becomes one assistant message per step (`step-start` parts split
 *   them), each followed by a user message with the results of its tool calls:
 *   `output-available` as the call's content (a string, text and image blocks, or JSON text
 *   of any other value), `output-error` and `output-denied` as `is_error` results.
 * - Reasoning is sent back only with the signature a Lattice stream put in its
 *   `providerMetadata` (the APIs refuse thinking without one); data, source and step parts are
 *   for the page only.
 *
 * @param messages - The `messages` of a `useChat` request.
 * @returns The conversation, ending with the last message (whose role is kept).
 * @throws {@link ChatRequestError} `chat_history_invalid` naming the message (by index and id)
 *   and the rule broken: a system message, a part Lattice cannot send, a call without its
 *   result (a run that has not finished), a conversation that does not start with a user.
 */
export function fromUIMessages(messages: readonly UIMessage[]): ModelMessage[] {
  if (!Array.isArray(messages)) {
    throw new ChatRequestError("chat_history_invalid", "messages must be an array of UIMessages.");
  }
  const conversation: { role: "user" | "assistant"; content: ContentBlock[] }[] = [];
  const push = (message: { role: "user" | "assistant"; content: ContentBlock[] }): void => {
    const previous = conversation.at(-1);
    if (previous !== undefined && previous.role === "user" && message.role === "user") {
      // Tool results and the next user text travel in one user message.
      for (const block of message.content) previous.content.push(block);
    } else conversation.push(message);
  };
  messages.forEach((message, index) => {
    const at = `message ${index}${typeof message?.id === "string" ? ` (id ${JSON.stringify(message.id)})` : ""}`;
    if (message === null || typeof message !== "object" || !Array.isArray(message.parts)) {
      throw new ChatRequestError("chat_history_invalid", `${at} is not a UIMessage with parts.`);
    }
    if (message.role === "user") push({ role: "user", content: userBlocks(message, at) });
    else if (message.role === "assistant") {
      const last = index === messages.length - 1;
      for (const step of assistantSteps(message, at, last)) {
        push({ role: "assistant", content: step.blocks });
        if (step.results.length > 0) push({ role: "user", content: step.results });
      }
    } else {
      throw new ChatRequestError(
        "chat_history_invalid",
        `${at} has role ${JSON.stringify(message.role)}: a chat sends user and assistant messages; put instructions in the agent's systemPrompt.`,
      );
    }
  });
  const problem = historyProblem(conversation);
  if (problem !== undefined) {
    throw new ChatRequestError("chat_history_invalid", `The conversation ${problem}`);
  }
  return conversation;
}

function userBlocks(message: UIMessage, at: string): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  message.parts.forEach((part, index) => {
    if (part.type === "text") blocks.push({ type: "text", text: part.text });
    else if (part.type === "file") blocks.push(imageBlock(part, `${at}, part ${index}`));
    else if (part.type === "step-start" || part.type.startsWith("data-")) return;
    else {
      throw new ChatRequestError(
        "chat_history_invalid",
        `${at}, part ${index} is a ${JSON.stringify(part.type)} part; a user message sends text and image files.`,
      );
    }
  });
  return blocks;
}

function imageBlock(part: { mediaType: string; url: string }, at: string): ImageBlock {
  if (typeof part.mediaType !== "string" || !part.mediaType.startsWith("image/")) {
    throw new ChatRequestError(
      "chat_history_invalid",
      `${at} is a file of type ${JSON.stringify(part.mediaType)}; only images can be sent for now.`,
    );
  }
  if (typeof part.url !== "string") {
    throw new ChatRequestError("chat_history_invalid", `${at} is a file without a url string.`);
  }
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(part.url);
  if (data !== null) {
    return {
      type: "image",
      source: { type: "base64", media_type: data[1] as string, data: data[2] as string },
    };
  }
  if (part.url.startsWith("https://"))
    return { type: "image", source: { type: "url", url: part.url } };
  throw new ChatRequestError(
    "chat_history_invalid",
    `${at} is an image whose url is neither a base64 data: URL nor https:.`,
  );
}

interface AssistantStep {
  readonly blocks: ContentBlock[];
  readonly results: ToolResultBlock[];
}

/**
 * @param last - Whether the message is the history's last: calls of an earlier message that
 *   have no result were never run (the run was stopped, or the user wrote instead of
 *   answering an approval) and get an `is_error` result saying so, as `endRun` gives them.
 */
function assistantSteps(message: UIMessage, at: string, last: boolean): AssistantStep[] {
  const steps: AssistantStep[] = [];
  let step: AssistantStep = { blocks: [], results: [] };
  const close = (): void => {
    if (step.blocks.length > 0) steps.push(step);
    step = { blocks: [], results: [] };
  };
  message.parts.forEach((part, index) => {
    if (part.type === "step-start") close();
    else if (part.type === "text") {
      if (part.text !== "") step.blocks.push({ type: "text", text: part.text });
    } else if (part.type === "reasoning") {
      const signature = (part.providerMetadata?.lattice as { signature?: unknown } | undefined)
        ?.signature;
      if (typeof signature === "string" && signature !== "") {
        step.blocks.push({ type: "thinking", thinking: part.text, signature });
      }
    } else if (isToolPart(part)) toolCall(part, step, `${at}, part ${index}`, last);
  });
  close();
  return steps;
}

function toolCall(part: ToolPartLike, step: AssistantStep, at: string, last: boolean): void {
  const id = part.toolCallId;
  step.blocks.push({ type: "tool_use", id, name: toolNameOf(part), input: part.input ?? {} });
  if (part.state === "output-available") {
    step.results.push({
      type: "tool_result",
      tool_use_id: id,
      content: resultContent(part.output),
    });
  } else if (part.state === "output-error") {
    step.results.push({
      type: "tool_result",
      tool_use_id: id,
      content: [
        {
          type: "text",
          text: typeof part.errorText === "string" ? part.errorText : "The call failed.",
        },
      ],
      is_error: true,
    });
  } else if (part.state === "output-denied") {
    // The text the scheduler gives a denied call (R15), so the model reads what it read then.
    const reason = (part.approval as { reason?: unknown } | undefined)?.reason;
    const denied = `Tool call ${JSON.stringify(toolNameOf(part))} (${id}) was denied by the person asked to approve it`;
    step.results.push({
      type: "tool_result",
      tool_use_id: id,
      content: [
        {
          type: "text",
          text: typeof reason === "string" && reason !== "" ? `${denied}: ${reason}` : `${denied}.`,
        },
      ],
      is_error: true,
    });
  } else if (
    part.state === "input-available" ||
    part.state === "input-streaming" ||
    part.state === "approval-requested" ||
    part.state === "approval-responded"
  ) {
    if (!last) {
      step.results.push({
        type: "tool_result",
        tool_use_id: id,
        content: [
          {
            type: "text",
            text: `Tool call ${JSON.stringify(toolNameOf(part))} (${id}) has no result: it did not run (the run was stopped, or the user wrote instead of answering).`,
          },
        ],
        is_error: true,
      });
    }
  } else {
    throw new ChatRequestError(
      "chat_history_invalid",
      `${at} is a tool part in state ${JSON.stringify(part.state)}, which no release of the protocol Lattice speaks has.`,
    );
  }
}

/** A tool output as a tool_result's content: a string as one text block, text/image block lists as they are, any other value as JSON text. */
function resultContent(output: unknown): ToolResultBlock["content"] {
  if (typeof output === "string") return [{ type: "text", text: output }];
  if (Array.isArray(output) && output.every(isResultBlock))
    return output as (TextBlock | ImageBlock)[];
  return [{ type: "text", text: JSON.stringify(output) ?? "" }];
}

function isResultBlock(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  const block = value as { type?: unknown; text?: unknown; source?: unknown };
  return (
    (block.type === "text" && typeof block.text === "string") ||
    (block.type === "image" && typeof block.source === "object")
  );
}
