import { describe, expect, it } from "vitest";
import { parseContextOverflow } from "./context-overflow.js";
import { httpStatusError } from "./http-status-error.js";

const CONTEXT = {
  label: "Anthropic API",
  endpoint: "https://api.anthropic.com/v1/messages",
  secrets: [],
  keyHint: "ANTHROPIC_API_KEY",
};
const NO_HEADERS = { get: () => null };

describe("parseContextOverflow", () => {
  it("C4: reads Anthropic's prompt is too long", () => {
    expect(
      parseContextOverflow(400, undefined, "prompt is too long: 210000 tokens > 200000 maximum"),
    ).toEqual({ promptTokens: 210_000, contextLimit: 200_000 });
    expect(parseContextOverflow(400, undefined, "Prompt is too long")).toEqual({
      promptTokens: undefined,
      contextLimit: undefined,
    });
    expect(
      parseContextOverflow(
        400,
        undefined,
        "input length and `max_tokens` exceed context limit: 187254 + 20000 > 200000, decrease input length or `max_tokens` and try again",
      ),
    ).toEqual({ promptTokens: 187_254, contextLimit: 200_000 });
  });

  it("C4: reads OpenAI's context_length_exceeded and the same words without the code", () => {
    const openai =
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.";
    expect(parseContextOverflow(400, "context_length_exceeded", openai)).toEqual({
      promptTokens: 130_512,
      contextLimit: 128_000,
    });
    expect(parseContextOverflow(400, undefined, openai)).toEqual({
      promptTokens: 130_512,
      contextLimit: 128_000,
    });
    expect(parseContextOverflow(400, "context_length_exceeded", "Too long.")).toEqual({
      promptTokens: undefined,
      contextLimit: undefined,
    });
    expect(
      parseContextOverflow(
        400,
        undefined,
        "Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 300001 tokens. Please reduce the length of the messages.",
      ),
    ).toEqual({ promptTokens: 300_001, contextLimit: 272_000 });
  });

  it("C4: anything else is not an overflow", () => {
    expect(parseContextOverflow(400, undefined, "max_tokens: Field required")).toBeUndefined();
    expect(parseContextOverflow(400, "invalid_request_error", undefined)).toBeUndefined();
    expect(
      parseContextOverflow(413, undefined, "prompt is too long: 2 tokens > 1 maximum"),
    ).toBeUndefined();
    expect(parseContextOverflow(500, "context_length_exceeded", undefined)).toBeUndefined();
  });

  it("C4: httpStatusError builds the overflow error: not retryable, what happened, where, what next", () => {
    const body = JSON.stringify({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "prompt is too long: 210000 tokens > 200000 maximum",
      },
    });
    const error = httpStatusError(
      CONTEXT,
      400,
      body,
      { get: (name: string) => (name === "x-should-retry" ? "true" : null) },
      "req_1",
      0,
    );
    expect(error).toMatchObject({
      code: "provider_context_overflow",
      retryable: false,
      promptTokens: 210_000,
      contextLimit: 200_000,
      requestId: "req_1",
    });
    expect(error.message).toBe(
      "Anthropic API at https://api.anthropic.com/v1/messages refused the request as longer than the model's context window (210000 tokens > 200000 maximum); it answered 400 invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum. Retrying it unchanged will not help: shorten the conversation (drop or summarise old turns and large tool results, or lower maxTokens), or set contextManagement on the Lattice agent so that it compacts the conversation before the window is full. (request id req_1)",
    );
    const other = httpStatusError(CONTEXT, 400, "{}", NO_HEADERS, undefined, 0);
    expect(other.code).toBe("provider_invalid_request");
    expect(other.promptTokens).toBeUndefined();
    expect(other.contextLimit).toBeUndefined();
  });
});
