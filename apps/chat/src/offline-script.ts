import type { RecordedRequest, ScriptedBlock, ScriptedTurn } from "agent-lattice/testing";

/** A content block as it travels in an Anthropic Messages request. */
interface WireBlock {
  readonly type: string;
  readonly text?: string;
  readonly id?: string;
  readonly name?: string;
  readonly input?: unknown;
  readonly tool_use_id?: string;
  readonly content?: string | readonly WireBlock[];
  readonly is_error?: boolean;
}

/** A message as it travels in an Anthropic Messages request. */
interface WireMessage {
  readonly role: "user" | "assistant";
  readonly content: string | readonly WireBlock[];
}

const STREAMING = { chunkSize: 6, chunkDelayMs: 8 } as const;

/**
 * What the offline "model" answers. It reads only the request, as a real model would: the
 * whole conversation the agent sent (earlier runs of the session included), so its replies
 * show that a restarted chat continues where it stopped.
 *
 * - "what time is it?" calls `get_time`;
 * - "remember that …" calls `remember_note`;
 * - "ask me something" calls `ask_user` (which waits for your answer);
 * - "what did I tell you?" lists your earlier messages and notes, read from the request;
 * - a message with "overload" in it gets a 529 from the main model, and the backup answers;
 * - after tool results, a sentence about them; anything else, a short help text.
 *
 * @param request - The request the scripted model server received.
 * @returns The reply, streamed in small chunks.
 */
export function offlineTurn(request: RecordedRequest): ScriptedTurn {
  const { messages, model, system } = request.body as {
    messages: readonly WireMessage[];
    model: string;
    system?: unknown;
  };
  // A compaction's summary call: the transcript of the earlier turns, to summarize.
  if (JSON.stringify(system ?? "").includes("You write summaries")) {
    return { content: [{ type: "text", text: summarize(textOf(messages.at(-1)?.content ?? "")) }] };
  }
  const last = messages.at(-1);
  // "overload": the main model answers 529 (overloaded), so the chat's fallback takes over.
  if (model === "scripted-model" && /\boverload/i.test(textOf(last?.content ?? ""))) {
    return { status: 529 };
  }
  const content =
    last !== undefined && isToolResults(last) ? afterTools(messages) : answer(messages);
  return { ...STREAMING, content };
}

function answer(messages: readonly WireMessage[]): ScriptedBlock[] {
  const prompt = textOf(messages.at(-1)?.content ?? "").trim();
  const lower = prompt.toLowerCase();
  if (/what did i (tell|say)|recap|summar/.test(lower)) {
    return [{ type: "text", text: recap(messages) }];
  }
  if (/\bask me\b|\bquiz me\b/.test(lower)) {
    return [
      { type: "text", text: "Sure, one question for you." },
      { type: "tool_use", name: "ask_user", input: { question: "What is your name?" } },
    ];
  }
  const remember = /\b(?:remember|note)(?: that)?\s+(.+)$/i.exec(prompt);
  if (remember?.[1] !== undefined) {
    return [
      { type: "text", text: "I'll write that down." },
      { type: "tool_use", name: "remember_note", input: { note: remember[1] } },
    ];
  }
  if (/\btime\b|\bclock\b|\bdate\b|what day/.test(lower)) {
    return [
      { type: "text", text: "Let me look at the clock." },
      { type: "tool_use", name: "get_time", input: {} },
    ];
  }
  const earlier = messages.length - 1;
  return [
    {
      type: "text",
      text:
        `You said "${prompt}". (${earlier} earlier ${earlier === 1 ? "message" : "messages"} in this session.) ` +
        `I'm the offline model: ask me the time, or say "remember that …", "ask me something" ` +
        `or "what did I tell you?".`,
    },
  ];
}

function afterTools(messages: readonly WireMessage[]): ScriptedBlock[] {
  const results = blocksOf(messages.at(-1)?.content).filter((b) => b.type === "tool_result");
  const calls = blocksOf(messages.at(-2)?.content).filter((b) => b.type === "tool_use");
  const sentences = results.map((result) => {
    const call = calls.find((candidate) => candidate.id === result.tool_use_id);
    const text = textOf(result.content ?? "");
    if (result.is_error === true) return `The ${call?.name ?? "tool"} call failed: ${text}`;
    switch (call?.name) {
      case "get_time":
        return `It is ${text}.`;
      case "remember_note":
        return 'Noted. Ask me "what did I tell you?" any time, even after a restart.';
      case "ask_user":
        return `Nice to meet you, ${text}!`;
      default:
        return `${call?.name ?? "The tool"} says: ${text}`;
    }
  });
  return [{ type: "text", text: sentences.join(" ") }];
}

/**
 * The offline model's summary of a transcript: the user's messages and the notes taken, so that
 * "what did I tell you?" still knows them after a compaction.
 */
function summarize(transcript: string): string {
  const said = [...transcript.matchAll(/^User: (.+)$/gm)]
    .map((match) => match[1]!)
    .filter((text) => !text.startsWith(SUMMARY_START));
  const earlier =
    /^User: This conversation continues.*?Summary of the earlier part:\n\n([\s\S]*?)(?=\n\n(?:User|Assistant|Result)|$)/m.exec(
      transcript,
    )?.[1];
  const notes = [...transcript.matchAll(/called the tool remember_note with (\{.*\})/g)].map(
    (match) => (JSON.parse(match[1]!) as { note?: string }).note ?? "",
  );
  const parts = [
    ...(earlier !== undefined ? [earlier.trim()] : []),
    ...(said.length > 0 ? [`The user said: ${said.map((text) => `"${text}"`).join(", ")}.`] : []),
    ...(notes.length > 0 ? [`Notes: ${notes.map((note) => `"${note}"`).join(", ")}.`] : []),
  ];
  return parts.length > 0 ? parts.join(" ") : "Nothing of note yet.";
}

/** How a compacted conversation's summary message begins. */
const SUMMARY_START = "This conversation continues";

function recap(messages: readonly WireMessage[]): string {
  const summary = messages.find(
    (message) => message.role === "user" && textOf(message.content).startsWith(SUMMARY_START),
  );
  const prompts = messages
    .slice(0, -1)
    .filter((message) => message !== summary)
    .filter((message) => message.role === "user" && !isToolResults(message))
    .map((message) => `"${textOf(message.content)}"`);
  if (summary !== undefined) {
    const text = textOf(summary.content).split("\n\n").slice(1).join(" ");
    return `Earlier (compacted): ${text} Since then you told me ${prompts.join(", ") || "nothing"}.`;
  }
  const notes = messages
    .flatMap((message) => blocksOf(message.content))
    .filter((block) => block.type === "tool_use" && block.name === "remember_note")
    .map((block) => `"${(block.input as { note?: string }).note ?? ""}"`);
  if (prompts.length === 0) return "Nothing yet: this is the first message of this session.";
  const told = `So far you told me ${prompts.join(", ")}.`;
  return notes.length === 0 ? told : `${told} My notes: ${notes.join(", ")}.`;
}

function isToolResults(message: WireMessage): boolean {
  return message.role === "user" && blocksOf(message.content).some((b) => b.type === "tool_result");
}

function blocksOf(content: WireMessage["content"] | undefined): readonly WireBlock[] {
  return Array.isArray(content) ? content : [];
}

function textOf(content: string | readonly WireBlock[]): string {
  if (typeof content === "string") return content;
  return content
    .filter((block) => block.type === "text")
    .map((block) => block.text ?? "")
    .join("");
}
