import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { anthropic } from "../anthropic/anthropic.js";
import type { ModelProviderV1 } from "../model-provider.js";
import type { ModelRequest } from "../model-request.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { openaiCompatible } from "../openai/openai-compatible.js";
import { ProviderError } from "../provider-error.js";
import { createScriptedModelServer, type ScriptedModelServer } from "../testing/index.js";

const KEY = "sk-secret-0123456789abcdef";
const HELLO = { content: [{ type: "text" as const, text: "Hello" }] };
const DEFAULT_REPLY = {
  content: [
    { type: "text" as const, text: "Let me check." },
    { type: "tool_use" as const, name: "lookup", input: { query: "x" } },
  ],
};
const TOOLS = [
  {
    name: "lookup",
    description: "Look something up",
    inputSchema: {
      type: "object" as const,
      properties: { query: { type: "string" } },
      required: ["query"],
    },
    kind: "tool" as const,
    schema: undefined as never,
    handler: () => ({ content: "" }),
  },
];

type Make = (
  server: ScriptedModelServer,
  extra?: { maxRetries?: number; timeoutMs?: number },
) => ModelProviderV1;
const PROTOCOLS: { name: string; make: Make }[] = [
  {
    name: "anthropic",
    make: (server, extra) => anthropic({ baseURL: server.anthropicBaseURL, apiKey: KEY, ...extra }),
  },
  {
    name: "openai-compatible",
    make: (server, extra) =>
      openaiCompatible({ baseURL: server.openaiBaseURL, apiKey: KEY, ...extra }),
  },
];

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "test-model",
    maxTokens: 256,
    messages: [{ role: "user", content: "Hi" }],
    tools: TOOLS,
    ...extra,
  };
}

async function drain(
  iterable: AsyncIterable<ModelStreamEvent>,
): Promise<{ events: ModelStreamEvent[]; error: unknown }> {
  const events: ModelStreamEvent[] = [];
  try {
    for await (const event of iterable) events.push(event);
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

function expectNoKey(value: unknown): void {
  const seen = new Set<unknown>();
  const text = JSON.stringify(value, (_key, inner: unknown) => {
    if (inner instanceof Error) {
      if (seen.has(inner)) return undefined;
      seen.add(inner);
      return {
        ...inner,
        message: inner.message,
        name: inner.name,
        cause: (inner as { cause?: unknown }).cause,
      };
    }
    return inner;
  });
  expect(text ?? "").not.toContain(KEY);
}

function expectProviderError(error: unknown): ProviderError {
  expect(error).toBeInstanceOf(ProviderError);
  expectNoKey(error);
  return error as ProviderError;
}

describe.each(PROTOCOLS)("fault matrix: $name", ({ make }) => {
  let server: ScriptedModelServer;
  beforeEach(async () => {
    server = await createScriptedModelServer({ apiKey: KEY });
  });
  afterEach(async () => {
    await server.close();
  });

  it.each([400, 401, 403, 404, 413, 422])(
    "never retries %i and says what to do",
    async (status) => {
      server.enqueue({ status, headers: { "retry-after-ms": "1" } }, HELLO);
      const { events, error } = await drain(make(server).stream(request()));
      const failure = expectProviderError(error);
      expect(failure.status).toBe(status);
      expect(failure.retryable).toBe(false);
      expect(failure.requestId).toBe("req_scripted_1");
      expect(failure.message).toContain(failure.endpoint);
      expect(failure.endpoint.startsWith(server.url)).toBe(true);
      expect(failure.apiMessage).toBe(`Scripted error ${status}.`);
      expect(failure.type).toBeTypeOf("string");
      expect(server.requests).toHaveLength(1);
      expect(events.some((event) => event.type === "retry")).toBe(false);
      const codes: Record<number, string> = {
        400: "provider_invalid_request",
        401: "provider_authentication",
        403: "provider_permission",
        404: "provider_not_found",
        413: "provider_request_too_large",
        422: "provider_invalid_request",
      };
      expect(failure.code).toBe(codes[status]);
      if (status === 401) expect(failure.message).toContain("apiKey option");
      if (status === 404) expect(failure.message).toContain("baseURL");
    },
  );

  it.each([408, 409, 429, 500, 502, 503, 529])(
    "retries %i (honouring retry-after-ms) and then succeeds",
    async (status) => {
      server.enqueue({ status, headers: { "retry-after-ms": "5" } }, HELLO);
      const { events, error } = await drain(make(server).stream(request()));
      expect(error).toBeUndefined();
      const retry = events.find((event) => event.type === "retry");
      expect(retry).toMatchObject({ type: "retry", attempt: 1, delayMs: 5, status });
      expectNoKey(retry);
      const last = events.at(-1);
      expect(last?.type).toBe("response");
      if (last?.type === "response") {
        expect(last.response.retries).toBe(1);
        expect(last.response.message.content).toEqual([{ type: "text", text: "Hello" }]);
      }
      expect(server.requests).toHaveLength(2);
    },
  );

  it("gives up after maxRetries (default 2) with the status, the code and the retry count", async () => {
    const fault = { status: 529, headers: { "retry-after-ms": "1" } };
    server.enqueue(fault, fault, fault, HELLO);
    const { events, error } = await drain(make(server).stream(request()));
    const failure = expectProviderError(error);
    expect(failure.code).toBe("provider_overloaded");
    expect(failure.retryable).toBe(true);
    expect(failure.message).toContain("after 2 retries");
    expect(events.filter((event) => event.type === "retry")).toHaveLength(2);
    expect(server.requests).toHaveLength(3);
  });

  it("refuses a redirect with a clear, non-retryable error and does not follow it", async () => {
    server.enqueue({ status: 308, headers: { location: `${server.url}/elsewhere` } }, HELLO);
    const { error } = await drain(make(server).stream(request()));
    const failure = expectProviderError(error);
    expect(failure.code).toBe("provider_redirect");
    expect(failure.retryable).toBe(false);
    expect(failure.message).toContain("Set baseURL to the address the server redirects to");
    expect(server.requests).toHaveLength(1);
  });

  it("makes one attempt with maxRetries: 0", async () => {
    server.enqueue({ status: 500 }, HELLO);
    const { error } = await drain(make(server, { maxRetries: 0 }).stream(request()));
    expect(expectProviderError(error).code).toBe("provider_server_error");
    expect(server.requests).toHaveLength(1);
  });

  it("does not retry when the API says x-should-retry: false", async () => {
    server.enqueue({ status: 500, headers: { "x-should-retry": "false" } }, HELLO);
    const { error } = await drain(make(server).stream(request()));
    expect(expectProviderError(error).retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it("honours retry-after in seconds", async () => {
    server.enqueue({ status: 429, headers: { "retry-after": "1" } }, HELLO);
    const started = performance.now();
    const { events, error } = await drain(make(server).stream(request()));
    expect(error).toBeUndefined();
    expect(events.find((event) => event.type === "retry")).toMatchObject({
      delayMs: 1000,
      status: 429,
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("aborts a hanging request at once and throws an AbortError", async () => {
    server.enqueue({ fault: "hang" });
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(), 100);
    const { error } = await drain(make(server).stream(request({ signal: controller.signal })));
    expect((error as Error).name).toBe("AbortError");
    expect(performance.now() - started).toBeLessThan(3000);
    expect(server.requests).toHaveLength(1);
  });

  it("throws an AbortError without a request when the signal is already aborted", async () => {
    const { error } = await drain(make(server).stream(request({ signal: AbortSignal.abort() })));
    expect((error as Error).name).toBe("AbortError");
    expect(server.requests).toHaveLength(0);
  });

  it("aborts mid-stream and throws an AbortError", async () => {
    server.enqueue({
      content: [{ type: "text", text: "one two three four five six" }],
      chunkSize: 4,
      chunkDelayMs: 50,
    });
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    let error: unknown;
    try {
      for await (const event of make(server).stream(request({ signal: controller.signal }))) {
        events.push(event);
        if (event.type === "text_delta") controller.abort();
      }
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).name).toBe("AbortError");
    expect(events.some((event) => event.type === "response")).toBe(false);
  });

  it("aborts while waiting to retry", async () => {
    server.enqueue({ status: 503, headers: { "retry-after-ms": "10000" } }, HELLO);
    const controller = new AbortController();
    const started = performance.now();
    const events: ModelStreamEvent[] = [];
    let error: unknown;
    try {
      for await (const event of make(server).stream(request({ signal: controller.signal }))) {
        events.push(event);
        if (event.type === "retry") controller.abort();
      }
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).name).toBe("AbortError");
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it("times out a hanging request with timeoutMs", async () => {
    server.enqueue({ fault: "hang" });
    const { error } = await drain(
      make(server, { timeoutMs: 150, maxRetries: 0 }).stream(request()),
    );
    const failure = expectProviderError(error);
    expect(failure.code).toBe("provider_timeout");
    expect(failure.message).toContain("timeoutMs");
  });

  it("ends a stream cut after content with a ProviderError and does not replay it", async () => {
    server.enqueue({ fault: "cut" }, HELLO);
    const { events, error } = await drain(make(server).stream(request()));
    const failure = expectProviderError(error);
    expect(failure.code).toBe("provider_stream_truncated");
    expect(events.length).toBeGreaterThan(0);
    expect(events.some((event) => event.type === "response")).toBe(false);
    expect(events.some((event) => event.type === "block_stop" && event.index === 1)).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it("retries a stream cut before any event was yielded", async () => {
    server.enqueue({ fault: "cut", afterBytes: 5 }, HELLO);
    const { events, error } = await drain(make(server).stream(request()));
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "response", response: { retries: 1 } });
    expect(server.requests).toHaveLength(2);
  });

  it("retries a non-streaming response cut mid-body", async () => {
    server.enqueue({ fault: "cut" }, HELLO);
    const { events, error } = await drain(make(server).stream(request({ stream: false })));
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "response", response: { retries: 1 } });
  });

  it("retries a malformed event that arrives before any event was yielded", async () => {
    server.enqueue({ fault: "malformed_event", afterEvents: 2 }, HELLO);
    const { events, error } = await drain(make(server).stream(request()));
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "response", response: { retries: 1 } });
  });

  it("reports a malformed event after content as a ProviderError, never an unhandled exception", async () => {
    const reply = { ...DEFAULT_REPLY, chunkDelayMs: 5 };
    server.enqueue({ fault: "malformed_event", afterEvents: 3, reply }, HELLO);
    const { error } = await drain(make(server).stream(request()));
    const failure = expectProviderError(error);
    expect(failure.code).toBe("provider_malformed_response");
    expect(server.requests).toHaveLength(1);
  });

  it("reports a malformed non-streaming body as a ProviderError", async () => {
    server.enqueue({ fault: "malformed_event" });
    const { error } = await drain(make(server).stream(request({ stream: false })));
    expect(expectProviderError(error).code).toBe("provider_malformed_response");
  });

  it.each([true, false])(
    "turns tool input JSON that does not parse into inputError naming the tool (stream: %s)",
    async (stream) => {
      server.enqueue({ fault: "malformed_json" });
      const { events, error } = await drain(make(server).stream(request({ stream })));
      expect(error).toBeUndefined();
      const last = events.at(-1);
      if (last?.type !== "response") throw new Error("expected a response");
      const block = last.response.message.content[0];
      expect(block).toMatchObject({ type: "tool_use", name: "lookup", input: {} });
      expect(block?.type === "tool_use" && block.inputError).toContain('tool "lookup"');
    },
  );

  it("ends with a ProviderError on an error event mid-stream", async () => {
    server.enqueue(
      { fault: "error_event", afterEvents: 3, reply: { ...DEFAULT_REPLY, chunkDelayMs: 5 } },
      HELLO,
    );
    const { events, error } = await drain(make(server).stream(request()));
    const failure = expectProviderError(error);
    expect(failure.code).toBe("provider_overloaded");
    expect(failure.type).toBe("overloaded_error");
    expect(failure.apiMessage).toBe("Overloaded");
    expect(events.some((event) => event.type === "response")).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it("retries an error event that arrives before any event was yielded", async () => {
    server.enqueue({ fault: "error_event", afterEvents: 0 }, HELLO);
    const { events, error } = await drain(make(server).stream(request()));
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: "response", response: { retries: 1 } });
  });

  it("retries slow chunks without timing out while data keeps arriving", async () => {
    server.enqueue({
      content: [{ type: "text", text: "slow but steady" }],
      chunkSize: 3,
      chunkDelayMs: 40,
    });
    const { events, error } = await drain(make(server, { timeoutMs: 400 }).stream(request()));
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({
      type: "response",
      response: { message: { content: [{ type: "text", text: "slow but steady" }] } },
    });
  });
});

describe.each(PROTOCOLS)("connection failures: $name", ({ make }) => {
  it("retries a refused connection with backoff, then throws provider_connection", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const fake = {
      anthropicBaseURL: `http://127.0.0.1:${port}`,
      openaiBaseURL: `http://127.0.0.1:${port}/v1`,
    } as ScriptedModelServer;
    const { events, error } = await drain(make(fake, { maxRetries: 1 }).stream(request()));
    const failure = expectProviderError(error);
    expect(failure.code).toBe("provider_connection");
    expect(failure.retryable).toBe(true);
    expect(failure.message).toContain(`127.0.0.1:${port}`);
    const retry = events.find((event) => event.type === "retry");
    expect(retry).toMatchObject({ attempt: 1 });
    expect(retry?.type === "retry" && retry.delayMs).toBeGreaterThanOrEqual(375);
    expect(retry?.type === "retry" && retry.status).toBeUndefined();
  });
});
