import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { anthropic } from "../anthropic/anthropic.js";
import type { ModelProviderV1 } from "../model-provider.js";
import { openaiCompatible } from "../openai/openai-compatible.js";
import { ProviderError } from "../provider-error.js";
import { MAX_RESPONSE_EVENT_SIZE } from "./call-model.js";
import {
  MAX_TOOL_INPUT_DEPTH,
  MAX_TOOL_INPUT_LENGTH,
  objectToolCallInput,
  parseToolCallInput,
} from "./parse-tool-input.js";

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

let server: Server | undefined;
const timers = new Set<ReturnType<typeof setInterval>>();

afterEach(async () => {
  for (const timer of timers) clearInterval(timer);
  timers.clear();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Starts a loopback server with `handler`; resolves with its base URL. */
async function serve(handler: Handler): Promise<string> {
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => handler(request, response));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
}

/** Writes `piece` every `ms` until the connection closes. */
function trickle(response: ServerResponse, piece: string, ms: number): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  const timer = setInterval(() => {
    if (response.destroyed) clearInterval(timer);
    else response.write(piece);
  }, ms);
  timers.add(timer);
}

/**
 * Writes `block` again and again, honouring backpressure, until `total` characters were sent
 * or the client hung up; then calls `end` (if given).
 */
function flood(response: ServerResponse, block: string, total: number, end?: () => void): void {
  let sent = 0;
  const write = (): void => {
    while (sent < total && !response.destroyed) {
      sent += block.length;
      if (!response.write(block)) {
        response.once("drain", write);
        return;
      }
    }
    end?.();
  };
  write();
}

const PROTOCOLS: { name: string; make: (baseURL: string, extra: object) => ModelProviderV1 }[] = [
  { name: "anthropic", make: (baseURL, extra) => anthropic({ baseURL, apiKey: "k", ...extra }) },
  {
    name: "openai-compatible",
    make: (baseURL, extra) => openaiCompatible({ baseURL, apiKey: "k", ...extra }),
  },
];

async function failure(provider: ModelProviderV1, stream = true): Promise<ProviderError> {
  try {
    for await (const _event of provider.stream({
      model: "m",
      maxTokens: 16,
      messages: [{ role: "user", content: "Hi" }],
      ...(stream ? {} : { stream: false }),
    })) {
      // drain
    }
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }
  throw new Error("the stream ended without an error");
}

describe.each(PROTOCOLS)("a hostile server ($name)", ({ make }) => {
  it("H4: a server that trickles one byte at a time never completing an event ends in provider_timeout (idle timeout counts events, not bytes)", async () => {
    const baseURL = await serve((_request, response) => trickle(response, "d", 20));
    const started = performance.now();
    const error = await failure(make(baseURL, { timeoutMs: 300, maxRetries: 0 }));
    expect(error.code).toBe("provider_timeout");
    expect(error.message).toContain("no complete stream event");
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it("H4: a server that sends only SSE comments ends in provider_timeout", async () => {
    const baseURL = await serve((_request, response) => trickle(response, ": keep-alive\n\n", 20));
    const error = await failure(make(baseURL, { timeoutMs: 300, maxRetries: 0 }));
    expect(error.code).toBe("provider_timeout");
  });

  it("H4: a server that keeps sending complete events without finishing ends at requestTimeoutMs", async () => {
    const baseURL = await serve((_request, response) =>
      trickle(response, "event: ping\ndata: {}\n\n", 20),
    );
    const started = performance.now();
    const error = await failure(
      make(baseURL, { timeoutMs: 200, requestTimeoutMs: 500, maxRetries: 0 }),
    );
    const elapsed = performance.now() - started;
    expect(error.code).toBe("provider_timeout");
    expect(error.message).toContain("requestTimeoutMs (500 ms)");
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(3000);
  });

  it("H4: requestTimeoutMs is checked strictly", () => {
    expect(() => make("http://127.0.0.1:1", { requestTimeoutMs: 0 })).toThrow(
      /requestTimeoutMs" must be a positive number of milliseconds/,
    );
  });

  it("H7: one SSE event larger than the bound ends in provider_malformed_response, without buffering it all", async () => {
    const baseURL = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: ");
      // Up to twice the bound, in one line that never ends.
      flood(response, "x".repeat(1024 * 1024), 2 * MAX_RESPONSE_EVENT_SIZE);
    });
    const error = await failure(make(baseURL, { maxRetries: 0 }));
    expect(error.code).toBe("provider_malformed_response");
    expect(error.message).toContain(`one stream event larger than ${MAX_RESPONSE_EVENT_SIZE}`);
    expect(error.retryable).toBe(false);
  });

  it("H7: a non-streaming body larger than the bound ends in provider_malformed_response", async () => {
    const baseURL = await serve((_request, response) => {
      // No content-length: chunked, so the size is only known by reading.
      response.writeHead(200, { "content-type": "application/json" });
      flood(response, "x".repeat(1024 * 1024), 2 * MAX_RESPONSE_EVENT_SIZE, () => response.end());
    });
    const error = await failure(make(baseURL, { maxRetries: 0 }), false);
    expect(error.code).toBe("provider_malformed_response");
    expect(error.message).toContain(`a response body larger than ${MAX_RESPONSE_EVENT_SIZE}`);
  });
});

describe("tool input bounds (H6)", () => {
  it("H6: JSON nested deeper than MAX_TOOL_INPUT_DEPTH gives {} and an inputError", () => {
    const deep = (depth: number) => `{"a":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
    expect(parseToolCallInput("t", deep(MAX_TOOL_INPUT_DEPTH)).inputError).toBeUndefined();
    const parsed = parseToolCallInput("t", deep(MAX_TOOL_INPUT_DEPTH + 1));
    expect(parsed).toEqual({
      input: {},
      inputError: `The input for tool "t" is nested more than ${MAX_TOOL_INPUT_DEPTH} levels deep, so the call did not run. Send a flatter input.`,
    });
    // The already-parsed path (non-streaming bodies) is bounded the same way.
    const value = JSON.parse(deep(100_000)) as object;
    expect(objectToolCallInput("t", value).inputError).toContain("nested more than");
  });

  it("H6: input longer than MAX_TOOL_INPUT_LENGTH gives {} and an inputError, as text or as a parsed object", () => {
    const long = JSON.stringify({ content: "x".repeat(MAX_TOOL_INPUT_LENGTH) });
    const expected = {
      input: {},
      inputError: `The input for tool "t" is longer than the ${MAX_TOOL_INPUT_LENGTH} characters of JSON allowed, so the call did not run. Send a smaller input (split a large file into several calls).`,
    };
    expect(parseToolCallInput("t", long)).toEqual(expected);
    expect(objectToolCallInput("t", JSON.parse(long))).toEqual(expected);
    const fits = { content: "x".repeat(1000) };
    expect(objectToolCallInput("t", fits)).toEqual({ input: fits });
  });
});

describe("bounds that a server cannot talk around (H7)", () => {
  it("H7: comment lines between the data lines of one huge event do not reset its bound", async () => {
    const baseURL = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      flood(
        response,
        `data: ${"x".repeat(1024 * 1024)}\n: keep-alive\n`,
        2 * MAX_RESPONSE_EVENT_SIZE,
      );
    });
    const error = await failure(anthropic({ baseURL, apiKey: "k", maxRetries: 0 }));
    expect(error.code).toBe("provider_malformed_response");
  });

  it("H7: a compressed body is bounded by its decoded size, not its content-length", async () => {
    const { gzipSync } = await import("node:zlib");
    const huge = gzipSync(Buffer.alloc(MAX_RESPONSE_EVENT_SIZE + 1024 * 1024, 0x20));
    const baseURL = await serve((_request, response) => {
      response.writeHead(200, {
        "content-type": "application/json",
        "content-encoding": "gzip",
        "content-length": huge.length,
      });
      response.end(huge);
    });
    const error = await failure(anthropic({ baseURL, apiKey: "k", maxRetries: 0 }), false);
    expect(error.code).toBe("provider_malformed_response");
    expect(error.message).toContain(`a response body larger than ${MAX_RESPONSE_EVENT_SIZE}`);
  });
});
