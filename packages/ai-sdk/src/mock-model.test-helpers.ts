// Helpers shared by the bridge's tests over MockLanguageModelV3 (ai/test).
import type { LanguageModelV3StreamPart, LanguageModelV3Usage } from "@ai-sdk/provider";
import type { ModelRequest, ModelStreamEvent, ProviderError } from "@lattice/providers";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";

/** A V3 usage object: `input` uncached tokens, plus the cache counts given. */
export const usage = (
  input: number,
  output: number,
  cacheRead?: number,
  cacheWrite?: number,
): LanguageModelV3Usage => ({
  inputTokens: {
    total: input + (cacheRead ?? 0) + (cacheWrite ?? 0),
    noCache: input,
    cacheRead,
    cacheWrite,
  },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/** A V3 `finish` part. */
export const finish = (
  unified: "stop" | "tool-calls" | "length" | "content-filter" | "other" | "error",
  raw?: string,
  tokens: LanguageModelV3Usage = usage(10, 5),
): LanguageModelV3StreamPart => ({ type: "finish", finishReason: { unified, raw }, usage: tokens });

/** A mock V3 model that streams `turns[i]` on its i-th `doStream` call. */
export function streamingModel(...turns: LanguageModelV3StreamPart[][]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider: "mock.chat",
    modelId: "mock-model",
    doStream: turns.map((parts) => ({ stream: convertArrayToReadableStream(parts) })),
  });
}

/** A Lattice request with one user message, overridden by `extra`. */
export const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "ignored",
  maxTokens: 256,
  messages: [{ role: "user", content: "Hi" }],
  ...extra,
});

/** Every event of a provider stream. */
export async function collect(
  events: AsyncIterable<ModelStreamEvent>,
): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** The response of the last event (which must be `response`). */
export function responseOf(events: readonly ModelStreamEvent[]) {
  const last = events.at(-1);
  if (last?.type !== "response") throw new Error(`last event is ${last?.type}`);
  return last.response;
}

/** The error a provider stream throws (fails the test when it does not). */
export async function failure(events: AsyncIterable<ModelStreamEvent>): Promise<ProviderError> {
  try {
    await collect(events);
  } catch (error) {
    return error as ProviderError;
  }
  throw new Error("the stream did not fail");
}
