import { randomBytes } from "node:crypto";
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

/** Small chunks, a little apart: the page shows the text as it streams. */
const STREAMING = { chunkSize: 5, chunkDelayMs: 25 } as const;

const HELP =
  "I'm the offline model of this chat. Try \"what's the weather in Paris and Tokyo?\" (two " +
  'calls that run side by side), "email the report to ann and bob" (each email waits for ' +
  'your approval: approve one, deny the other), or "run the long job" (a slow tool: press ' +
  "Stop while it runs).";

const KNOWN_CITIES = ["Paris", "Tokyo", "London", "New York", "Berlin"];

/**
 * What the offline "model" answers. It reads only the request, as a real model would, and
 * keeps no state:
 *
 * - "weather in Paris and Tokyo": one `get_weather` call per city, in one reply (they run side
 *   by side), then a streamed answer from their results;
 * - "email the report to ann and bob": one `send_email` per person (each waits for approval),
 *   then a sentence on which were sent and which denied (a denial arrives as an `is_error`
 *   result);
 * - "run the long job": `long_job`, a tool that sleeps about 20 s (stop it from the page);
 * - anything else: what it can do.
 *
 * @param request - The request the scripted model server received.
 * @returns The reply, streamed in small chunks.
 */
export function offlineTurn(request: RecordedRequest): ScriptedTurn {
  const messages = (request.body as { messages: readonly WireMessage[] }).messages;
  const last = messages.at(-1);
  const prompt = textOf(last?.content ?? "").trim();
  const content =
    last !== undefined && prompt === "" && hasToolResults(last)
      ? afterTools(messages)
      : answer(prompt);
  return { ...STREAMING, content };
}

function answer(prompt: string): ScriptedBlock[] {
  const lower = prompt.toLowerCase();
  if (/\bweather\b|\bforecast\b|\btemperature\b/.test(lower)) {
    const found = KNOWN_CITIES.filter((city) => lower.includes(city.toLowerCase()));
    const cities = found.length > 0 ? found : ["Paris", "Tokyo"];
    return [
      {
        type: "text",
        text: `Let me look up ${cities.join(" and ")} at the same time.`,
      },
      ...cities.map((city) => toolUse("get_weather", { city })),
    ];
  }
  if (/\be-?mail\b|\bsend\b/.test(lower)) {
    const people = recipientsOf(prompt);
    const subject = /\b(?:email|send|mail)\s+(?:the\s+)?(.+?)\s+to\b/i.exec(prompt)?.[1] ?? "Hello";
    return [
      {
        type: "text",
        text: `I'll send one email to each of ${people.join(" and ")}; each waits for your approval.`,
      },
      ...people.map((to) =>
        toolUse("send_email", {
          to,
          subject: capitalize(subject),
          body: `Hi ${to}, here is the ${subject}.`,
        }),
      ),
    ];
  }
  if (/\blong\b|\bslow\b|\bjob\b/.test(lower)) {
    return [
      { type: "text", text: "Starting the long job; it takes about twenty seconds." },
      toolUse("long_job", { name: "nightly-report" }),
    ];
  }
  return [{ type: "text", text: HELP }];
}

function afterTools(messages: readonly WireMessage[]): ScriptedBlock[] {
  const results = blocksOf(messages.at(-1)?.content).filter((b) => b.type === "tool_result");
  const calls = blocksOf(messages.at(-2)?.content).filter((b) => b.type === "tool_use");
  const weather: string[] = [];
  const sentences: string[] = [];
  for (const result of results) {
    const call = calls.find((candidate) => candidate.id === result.tool_use_id);
    const text = textOf(result.content ?? "");
    const input = (call?.input ?? {}) as { to?: string; city?: string };
    if (call?.name === "get_weather") {
      weather.push(result.is_error === true ? `${input.city}: unknown (${text})` : text);
    } else if (call?.name === "send_email") {
      if (result.is_error !== true) sentences.push(`The email to ${input.to} was sent.`);
      else if (/\bdenied\b/i.test(text)) {
        const reason = /\bdenied\b[^:]*:\s*([\s\S]+)$/i.exec(text)?.[1]?.trim();
        sentences.push(
          `I did not send the email to ${input.to}: you denied it${reason ? ` ("${reason}")` : ""}.`,
        );
      } else sentences.push(`The email to ${input.to} failed: ${text}`);
    } else if (call?.name === "long_job") {
      sentences.push(
        result.is_error === true ? `The long job did not finish: ${text}` : `${text} All done.`,
      );
    } else {
      sentences.push(`${call?.name ?? "The tool"} says: ${text}`);
    }
  }
  if (weather.length > 0) {
    sentences.unshift(
      `Here is today's weather. ${weather.join(". ")}. Both lookups ran side by side, so the answer took about as long as one.`,
    );
  }
  return [{ type: "text", text: sentences.join(" ") || "Done." }];
}

/** "to ann and bob", "to ann, bob and carol": the people; ann and bob when none are named. */
function recipientsOf(prompt: string): string[] {
  const list = /\bto\s+(.+?)(?:[.?!]|$)/i.exec(prompt)?.[1] ?? "";
  const people = list
    .split(/\s*(?:,|\band\b|&)\s*/i)
    .map((name) => name.trim())
    .filter((name) => /^[\w.@+-]+$/.test(name));
  return people.length > 0 ? [...new Set(people)] : ["ann", "bob"];
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A `tool_use` block with an id unique across processes. */
function toolUse(name: string, input: object): ScriptedBlock {
  return { type: "tool_use", id: `toolu_offline_${randomBytes(9).toString("hex")}`, name, input };
}

function hasToolResults(message: WireMessage): boolean {
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
