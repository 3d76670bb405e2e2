import { InvalidOptionError, UnknownOptionError } from "@lattice/tools";
import { describe, expect, it } from "vitest";
import type { ModelStreamEvent } from "../model-stream-event.js";
import {
  createHttpTransport,
  type DecodedModelResponse,
  type ModelResponseCodec,
  ProviderError,
  parseToolInput,
  redactSecret,
} from "./index.js";

const KEY = "sk-http-test-0123456789";
const SECRET = "query-secret-abcdef";

interface Captured {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A fetch that records each request and answers with the next of `responses`. */
function scriptedFetch(...responses: (() => Response)[]): {
  fetch: typeof fetch;
  calls: Captured[];
} {
  const calls: Captured[] = [];
  const fetchImpl = (async (url: string, init: RequestInit) => {
    calls.push({
      url,
      headers: init.headers as Record<string, string>,
      body: init.body as string,
    });
    const next = responses[calls.length - 1] ?? responses.at(-1)!;
    return next();
  }) as unknown as typeof fetch;
  return { fetch: fetchImpl, calls };
}

const sse =
  (...events: string[]) =>
  () =>
    new Response(events.map((data) => `data: ${data}\n\n`).join(""), {
      status: 200,
      headers: { "content-type": "text/event-stream", "request-id": "req_1" },
    });
const json = (status: number, body: unknown) => () =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });

const DONE: DecodedModelResponse = {
  model: "toy",
  content: [{ type: "text", text: "hi" }],
  stopReason: "end_turn",
  usage: { inputTokens: 1, outputTokens: 1 },
};

/** A codec for a toy protocol: each event's data is a text delta, `end` ends the message. */
const toyCodec: ModelResponseCodec = {
  createStreamDecoder({ emit }) {
    let text = "";
    let ended = false;
    return {
      handle(event) {
        if (event.data === "end") {
          ended = true;
          return;
        }
        if (event.data === "throw") throw new TypeError(`cannot read ${KEY}`);
        if (text === "") emit({ type: "block_start", index: 0, block: { type: "text" } });
        text += event.data;
        emit({ type: "text_delta", index: 0, text: event.data });
      },
      finish() {
        if (!ended) {
          throw new ProviderError({
            code: "provider_stream_truncated",
            message: "cut",
            endpoint: "x",
            retryable: true,
          });
        }
        return { ...DONE, content: [{ type: "text", text }] };
      },
    };
  },
  decodeMessage(body) {
    const record = body as { text?: unknown };
    if (typeof record.text !== "string") throw new TypeError("no text");
    return { ...DONE, content: [{ type: "text", text: record.text }] };
  },
};

async function drain(
  iterable: AsyncIterable<ModelStreamEvent>,
): Promise<{ events: ModelStreamEvent[]; error: unknown }> {
  const events: ModelStreamEvent[] = [];
  try {
    for await (const event of iterable) events.push(event);
  } catch (error) {
    return { events, error };
  }
  return { events, error: undefined };
}

describe("createHttpTransport()", () => {
  it("checks its options strictly, and the options of each call", () => {
    const base = { label: "Toy API", url: "https://toy.test/v1/chat" };
    expect(() => createHttpTransport({ ...base, retries: 1 } as never)).toThrow(UnknownOptionError);
    expect(() => createHttpTransport({ ...base, label: "" })).toThrow(/label/);
    expect(() => createHttpTransport({ ...base, url: "toy.test/v1" })).toThrow(InvalidOptionError);
    expect(() => createHttpTransport({ ...base, maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => createHttpTransport({ ...base, timeoutMs: 0 })).toThrow(/timeoutMs/);
    const transport = createHttpTransport(base);
    expect(() => transport.call({ body: {}, codec: toyCodec, retry: true } as never)).toThrow(
      UnknownOptionError,
    );
    expect(() => transport.call({ body: {}, codec: {} as never })).toThrow(/codec/);
    expect(() => transport.call({ body: undefined, codec: toyCodec })).toThrow(/body/);
  });

  it("refuses credentials in a URL and a header value fetch would refuse, printing neither", () => {
    const withPassword = () =>
      createHttpTransport({ label: "Toy API", url: `https://user:${KEY}@toy.test/v1` });
    expect(withPassword).toThrow(/user name or password/);
    expect(() => withPassword()).not.toThrow(new RegExp(KEY));
    const badHeader = () =>
      createHttpTransport({
        label: "Toy API",
        url: "https://toy.test/v1",
        headers: { authorization: `Bearer ${KEY}\nx-injected: 1` },
      });
    expect(badHeader).toThrow(/"authorization"/);
    let message = "";
    try {
      badHeader();
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).not.toContain(KEY);
  });

  it("POSTs a body value as JSON (a string as it is) with lower-case headers and a JSON content type", async () => {
    const { fetch, calls } = scriptedFetch(sse("a", "end"));
    const transport = createHttpTransport({
      label: "Toy API",
      url: "https://toy.test/v1/chat?version=2",
      headers: { "X-Api-Key": KEY, "X-Extra": "1" },
      fetch,
    });
    expect(transport.endpoint).toBe("https://toy.test/v1/chat");
    await drain(transport.call({ body: { model: "toy", n: 1 }, codec: toyCodec }));
    await drain(transport.call({ body: '{"raw":true}', codec: toyCodec }));
    expect(calls[0]).toEqual({
      url: "https://toy.test/v1/chat?version=2",
      headers: { "x-api-key": KEY, "x-extra": "1", "content-type": "application/json" },
      body: '{"model":"toy","n":1}',
    });
    expect(calls[1]!.body).toBe('{"raw":true}');
  });

  it("sends one call to its own url with its own headers, printing neither its query nor its key", async () => {
    const { fetch, calls } = scriptedFetch(
      json(404, { error: { message: `no model here (key ${KEY}, ${SECRET})` } }),
    );
    const transport = createHttpTransport({
      label: "Toy API",
      url: "https://toy.test/v1/models/default:stream",
      headers: { "x-goog-api-key": "placeholder-key" },
      secrets: [SECRET],
      fetch,
    });
    const { error } = await drain(
      transport.call({
        body: {},
        codec: toyCodec,
        url: `https://toy.test/v1/models/toy-2:stream?alt=sse&key=${SECRET}`,
        headers: { "X-Goog-Api-Key": KEY },
      }),
    );
    expect(calls[0]!.url).toContain("toy-2:stream?alt=sse");
    expect(calls[0]!.headers["x-goog-api-key"]).toBe(KEY);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      code: "provider_not_found",
      status: 404,
      endpoint: "https://toy.test/v1/models/toy-2:stream",
    });
    const text = `${(error as ProviderError).message} ${(error as ProviderError).apiMessage}`;
    expect(text).toContain("Toy API at https://toy.test/v1/models/toy-2:stream");
    expect(text).toContain("[redacted]");
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(SECRET);
  });

  it("yields a decoder's events in order, then the response with requestId, retries and latency", async () => {
    const { fetch } = scriptedFetch(sse("Hel", "lo", "end"));
    const transport = createHttpTransport({ label: "Toy API", url: "https://toy.test/v1", fetch });
    const { events, error } = await drain(transport.call({ body: {}, codec: toyCodec }));
    expect(error).toBeUndefined();
    expect(events.slice(0, 3)).toEqual([
      { type: "block_start", index: 0, block: { type: "text" } },
      { type: "text_delta", index: 0, text: "Hel" },
      { type: "text_delta", index: 0, text: "lo" },
    ]);
    const last = events.at(-1);
    expect(last?.type).toBe("response");
    if (last?.type !== "response") return;
    expect(last.response).toMatchObject({
      model: "toy",
      message: { role: "assistant", content: [{ type: "text", text: "Hello" }] },
      stopReason: "end_turn",
      requestId: "req_1",
      retries: 0,
    });
  });

  it("decodes a JSON response with decodeMessage, even when a stream was asked for", async () => {
    const { fetch } = scriptedFetch(json(200, { text: "whole" }));
    const transport = createHttpTransport({ label: "Toy API", url: "https://toy.test/v1", fetch });
    const { events } = await drain(transport.call({ body: {}, codec: toyCodec, stream: true }));
    expect(events.map((event) => event.type)).toEqual(["usage", "stop", "response"]);
    expect(events.at(-1)).toMatchObject({
      response: { message: { content: [{ type: "text", text: "whole" }] } },
    });
  });

  it("retries a 503 and a stream its decoder could not read, with a retry event before each", async () => {
    const { fetch, calls } = scriptedFetch(
      json(503, { error: { message: "busy" } }),
      sse("throw"),
      sse("ok", "end"),
    );
    const transport = createHttpTransport({
      label: "Toy API",
      url: "https://toy.test/v1",
      headers: { authorization: `Bearer ${KEY}` },
      fetch,
    });
    const { events, error } = await drain(transport.call({ body: {}, codec: toyCodec }));
    expect(error).toBeUndefined();
    expect(calls).toHaveLength(3);
    const retries = events.filter((event) => event.type === "retry");
    expect(retries).toMatchObject([
      { attempt: 1, status: 503 },
      { attempt: 2, message: expect.stringContaining("decoder could not read (TypeError") },
    ]);
    expect(JSON.stringify(retries)).not.toContain(KEY);
    expect(events.at(-1)).toMatchObject({ response: { retries: 2 } });
  }, 10_000);

  it("ends a call its decoder could not read as provider_malformed_response, with a redacted cause", async () => {
    const { fetch } = scriptedFetch(sse("throw"));
    const transport = createHttpTransport({
      label: "Toy API",
      url: "https://toy.test/v1",
      headers: { authorization: `Bearer ${KEY}` },
      maxRetries: 0,
      fetch,
    });
    const { error } = await drain(transport.call({ body: {}, codec: toyCodec }));
    expect(error).toMatchObject({ code: "provider_malformed_response", retryable: true });
    const cause = (error as Error).cause as Error;
    expect(cause).toMatchObject({ name: "TypeError" });
    expect(cause.message).toContain("[redacted]");
    expect(`${(error as Error).message} ${cause.message} ${cause.stack}`).not.toContain(KEY);
  });

  it("keeps a decoder's own ProviderError, and does not retry a body decodeMessage could not read", async () => {
    const cut = scriptedFetch(sse("a"));
    const truncated = await drain(
      createHttpTransport({
        label: "Toy API",
        url: "https://toy.test/v1",
        maxRetries: 0,
        fetch: cut.fetch,
      }).call({ body: {}, codec: toyCodec }),
    );
    expect(truncated.error).toMatchObject({ code: "provider_stream_truncated", message: "cut" });
    const unreadable = scriptedFetch(json(200, { other: 1 }));
    const { error } = await drain(
      createHttpTransport({
        label: "Toy API",
        url: "https://toy.test/v1",
        fetch: unreadable.fetch,
      }).call({ body: {}, codec: toyCodec, stream: false }),
    );
    expect(error).toMatchObject({ code: "provider_malformed_response", retryable: false });
    expect(unreadable.calls).toHaveLength(1);
  });
});

describe("parseToolInput()", () => {
  it("reads JSON text or a parsed value, and turns anything but an object into an inputError", () => {
    expect(parseToolInput("f", '{"a":1}')).toEqual({ input: { a: 1 } });
    expect(parseToolInput("f", "")).toEqual({ input: {} });
    expect(parseToolInput("f", { a: 1 })).toEqual({ input: { a: 1 } });
    expect(parseToolInput("f", undefined)).toEqual({ input: {} });
    expect(parseToolInput("f", '{"a":')).toMatchObject({
      input: {},
      inputError: expect.stringContaining('tool "f" is not valid JSON'),
    });
    expect(parseToolInput("f", [1])).toMatchObject({ input: {}, inputError: expect.any(String) });
  });
});

describe("redactSecret()", () => {
  it("replaces every occurrence of a key", () => {
    expect(redactSecret(`a ${KEY} b ${KEY}`, KEY)).toBe("a [redacted] b [redacted]");
    expect(redactSecret("abc", undefined)).toBe("abc");
  });
});
