import { inspect } from "node:util";
import { InvalidOptionError } from "@lattice/tools";
import { afterEach, describe, expect, it, vi } from "vitest";
import { anthropic } from "../anthropic/anthropic.js";
import type { ModelProviderV1 } from "../model-provider.js";
import type { ModelRequest } from "../model-request.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { openaiCompatible } from "../openai/openai-compatible.js";
import { ProviderError } from "../provider-error.js";

const SECRET = "sk-secret-0123456789abcdef";

interface AdapterCase {
  readonly name: string;
  readonly prefix: string;
  readonly keyOptions: string;
  readonly example: string;
  readonly path: string;
  readonly make: (options: Record<string, unknown>) => ModelProviderV1;
}

const ADAPTERS: readonly AdapterCase[] = [
  {
    name: "anthropic",
    prefix: "anthropic():",
    keyOptions: "apiKey or authToken",
    example: "https://api.anthropic.com",
    path: "/v1/messages",
    make: (options) => anthropic(options),
  },
  {
    name: "openaiCompatible",
    prefix: "openaiCompatible():",
    keyOptions: "apiKey",
    example: "https://api.openai.com/v1",
    path: "/chat/completions",
    make: (options) => openaiCompatible(options),
  },
];

const REQUEST: ModelRequest = {
  model: "m",
  maxTokens: 16,
  messages: [{ role: "user", content: "Hi" }],
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

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe.each(ADAPTERS)("$name(): baseURL", (adapter) => {
  it("refuses a user name or password, without printing them", () => {
    for (const baseURL of [
      `https://user:${SECRET}@api.example.com`,
      `https://${SECRET}@h.example`,
    ]) {
      const error = thrown(() => adapter.make({ apiKey: "k", baseURL }));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as InvalidOptionError).option).toBe("baseURL");
      expect((error as Error).message).toBe(
        `${adapter.prefix} option "baseURL" must not contain a user name or password ("user:password@"): credentials in a URL end up in logs. Pass the key with ${adapter.keyOptions}, or send it in headers.`,
      );
      expect((error as Error).message).not.toContain(SECRET);
    }
  });

  it("refuses a query string or a fragment", () => {
    for (const baseURL of [
      `https://api.example.com/v1?key=${SECRET}`,
      "https://api.example.com/v1?",
      "https://api.example.com/v1#frag",
    ]) {
      const error = thrown(() => adapter.make({ apiKey: "k", baseURL }));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as Error).message).toBe(
        `${adapter.prefix} option "baseURL" must not contain a query string or a fragment ("?…", "#…"): the request path is appended to baseURL. Pass the key with ${adapter.keyOptions}, and other values in headers.`,
      );
    }
  });

  it("refuses anything but an absolute http(s) URL", () => {
    for (const baseURL of ["ftp://x", "api.example.com", "/v1", "", SECRET, 42]) {
      const error = thrown(() => adapter.make({ apiKey: "k", baseURL }));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as Error).message).toBe(
        `${adapter.prefix} option "baseURL" must be an absolute http(s) URL, for example ${adapter.example}.`,
      );
    }
  });

  it("normalises an accepted URL and appends the path to it", async () => {
    const urls: string[] = [];
    const fetchImpl = (async (url: string) => {
      urls.push(url);
      return new Response("{}", { status: 400 });
    }) as unknown as typeof fetch;
    const provider = adapter.make({
      apiKey: "k",
      baseURL: " HTTPS://API.Example.com/base// ",
      fetch: fetchImpl,
    });
    expect(provider.baseURL).toBe("https://api.example.com/base");
    await drain(provider.stream(REQUEST));
    expect(urls).toEqual([`https://api.example.com/base${adapter.path}`]);
  });
});

describe.each(ADAPTERS)("$name(): connection failures", (adapter) => {
  it("never print the key or URL credentials a fetch error quotes", async () => {
    let calls = 0;
    const fetchImpl = (async (url: string) => {
      calls++;
      const withCredentials = url.replace("https://", `https://user:${SECRET}@`);
      throw new TypeError(`fetch failed for ${withCredentials}?token=${SECRET}`, {
        cause: new Error(`proxy refused header x-api-key: ${SECRET}`),
      });
    }) as unknown as typeof fetch;
    const provider = adapter.make({
      apiKey: SECRET,
      baseURL: "https://api.example.com/v1",
      fetch: fetchImpl,
      maxRetries: 1,
      timeoutMs: 60_000,
    });
    const { events, error } = await drain(provider.stream(REQUEST));
    expect(calls).toBe(2);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe("provider_connection");
    const message = (error as Error).message;
    expect(message).not.toContain(SECRET);
    expect(message).not.toContain("user:");
    expect(message).toContain(`fetch failed for https://api.example.com/v1${adapter.path}`);
    expect(message).toContain("proxy refused header x-api-key: [redacted]");
    const retry = events.find((event) => event.type === "retry");
    expect(retry).toBeDefined();
    expect(JSON.stringify(retry)).not.toContain(SECRET);
  });
});

describe.each(ADAPTERS)("$name(): maxRetries and timeoutMs", (adapter) => {
  it("refuse a maxRetries that is not an integer ≥ 0", () => {
    for (const [value, shown] of [
      [1.5, "1.5"],
      [-1, "-1"],
      [Number.NaN, "NaN"],
      [Number.POSITIVE_INFINITY, "Infinity"],
      ["2", '"2"'],
    ] as const) {
      const error = thrown(() => adapter.make({ apiKey: "k", maxRetries: value }));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as Error).message).toBe(
        `${adapter.prefix} option "maxRetries" must be an integer ≥ 0 (0 for no retries), received ${shown}. Omit it for the default (2).`,
      );
    }
    expect(() => adapter.make({ apiKey: "k", maxRetries: 0 })).not.toThrow();
    expect(() => adapter.make({ apiKey: "k", maxRetries: 5 })).not.toThrow();
  });

  it("refuse a timeoutMs that is not a positive number", () => {
    for (const [value, shown] of [
      [0, "0"],
      [-5, "-5"],
      [Number.NaN, "NaN"],
      ["100", '"100"'],
    ] as const) {
      const error = thrown(() => adapter.make({ apiKey: "k", timeoutMs: value }));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as Error).message).toBe(
        `${adapter.prefix} option "timeoutMs" must be a positive number of milliseconds (Infinity for no timeout), received ${shown}. Omit it for the default (600000).`,
      );
    }
    expect(() => adapter.make({ apiKey: "k", timeoutMs: 0.5 })).not.toThrow();
    expect(() => adapter.make({ apiKey: "k", timeoutMs: Number.POSITIVE_INFINITY })).not.toThrow();
  });

  it("handle a timeoutMs beyond setTimeout's range without a timer overflow", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on("warning", onWarning);
    try {
      const fetchImpl = (async () => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        return new Response("{}", { status: 400 });
      }) as unknown as typeof fetch;
      const provider = adapter.make({ apiKey: "k", timeoutMs: 2 ** 40, fetch: fetchImpl });
      const { error } = await drain(provider.stream(REQUEST));
      expect((error as ProviderError).code).toBe("provider_invalid_request");
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("TimeoutOverflowWarning");
  });
});

/** Everything a log or trace could print of an error: message, stack and the cause chain. */
function everything(error: unknown): string {
  return inspect(error, { depth: 10 });
}

function respondWith(body: string, status: number, contentType: string): typeof fetch {
  return (async () =>
    new Response(body, {
      status,
      headers: { "content-type": contentType },
    })) as unknown as typeof fetch;
}

describe.each(ADAPTERS)("$name(): keys in headers", (adapter) => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("refuses a key that cannot be sent in a header, without printing it", () => {
    const bad = "sk-bad\nkey-0123456789";
    const error = thrown(() => adapter.make({ apiKey: bad }));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toBe(
      `${adapter.prefix} option "apiKey" contains a line break, a control character or a character outside Latin-1, which cannot be sent in an HTTP header (the key is not printed): check the apiKey option.`,
    );
    expect(everything(error)).not.toContain("sk-bad");
  });

  it("names the environment variable when the key from it cannot be sent", () => {
    const variable = adapter.name === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
    vi.stubEnv(variable, "sk-first-0123456789\nsk-second-0123456789");
    const error = thrown(() => adapter.make({}));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toContain(`check the ${variable} environment variable`);
    expect(everything(error)).not.toContain("0123456789");
  });

  it("accepts a key with surrounding whitespace (fetch trims it) and redacts the trimmed key", async () => {
    const provider = adapter.make({
      apiKey: `${SECRET}\n`,
      fetch: respondWith(
        JSON.stringify({ error: { message: `bad key ${SECRET}` } }),
        401,
        "application/json",
      ),
    });
    const { error } = await drain(provider.stream(REQUEST));
    expect((error as ProviderError).code).toBe("provider_authentication");
    expect(everything(error)).not.toContain(SECRET);
  });

  it("refuses a header value that cannot be sent, without printing it", () => {
    const error = thrown(() =>
      adapter.make({ apiKey: "k", headers: { "x-custom": "sk-hidden\r\nx: y" } }),
    );
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toBe(
      `${adapter.prefix} option "headers" has a value for "x-custom" that contains a line break, a control character or a character outside Latin-1, which cannot be sent in an HTTP header (the value is not printed).`,
    );
    expect((error as Error).message).not.toContain("sk-hidden");
  });

  it("redacts credentials passed in headers from API error messages", async () => {
    for (const headers of [
      { "api-key": SECRET },
      { "proxy-authorization": `Basic ${SECRET}` },
      { "X-Goog-Api-Key": SECRET },
    ]) {
      const provider = adapter.make({
        apiKey: "k",
        headers,
        fetch: respondWith(
          JSON.stringify({ error: { type: "authentication_error", message: `bad key ${SECRET}` } }),
          401,
          "application/json",
        ),
      });
      const { error } = await drain(provider.stream(REQUEST));
      expect((error as ProviderError).code).toBe("provider_authentication");
      expect((error as ProviderError).apiMessage).toBe("bad key [redacted]");
      expect(everything(error)).not.toContain(SECRET);
    }
  });
});

describe.each(ADAPTERS)("$name(): keys the API echoes back", (adapter) => {
  it("redacts a key from a long non-JSON error body before cutting it", async () => {
    const body = `${"x".repeat(490)} ${SECRET} trailing text`;
    const provider = adapter.make({
      apiKey: SECRET,
      maxRetries: 0,
      fetch: respondWith(body, 500, "text/plain"),
    });
    const { error } = await drain(provider.stream(REQUEST));
    expect((error as ProviderError).code).toBe("provider_server_error");
    expect(everything(error)).not.toContain(SECRET.slice(0, 8));
  });

  it("redacts a key from a malformed stream event and from its cause", async () => {
    const provider = adapter.make({
      apiKey: SECRET,
      maxRetries: 1,
      fetch: respondWith(`data: {"echo": "${SECRET}"\n\n`, 200, "text/event-stream"),
    });
    const { events, error } = await drain(provider.stream(REQUEST));
    expect((error as ProviderError).code).toBe("provider_malformed_response");
    expect(everything(error)).not.toContain(SECRET);
    expect((error as Error).message).toContain("[redacted]");
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });

  it("redacts a key from the cause of a 200 body that is not JSON", async () => {
    // V8 quotes short invalid JSON whole in its SyntaxError, which becomes the cause.
    const key = "key-1234";
    const provider = adapter.make({
      apiKey: key,
      fetch: respondWith(`oops ${key}`, 200, "application/json"),
    });
    const { error } = await drain(provider.stream({ ...REQUEST, stream: false }));
    expect((error as ProviderError).code).toBe("provider_malformed_response");
    expect(((error as Error).cause as Error).message).toContain("[redacted]");
    expect(everything(error)).not.toContain(key);
  });

  it("redacts a key from the cause chain of a connection failure", async () => {
    const fetchImpl = (async () => {
      throw new TypeError("fetch failed", {
        cause: new Error(`tunnel refused x-api-key ${SECRET}`, {
          cause: new Error(`deeper ${SECRET}`),
        }),
      });
    }) as unknown as typeof fetch;
    const provider = adapter.make({ apiKey: SECRET, maxRetries: 0, fetch: fetchImpl });
    const { error } = await drain(provider.stream(REQUEST));
    expect((error as ProviderError).code).toBe("provider_connection");
    expect(everything(error)).not.toContain(SECRET);
    const cause = (error as Error).cause as Error;
    expect(cause.name).toBe("TypeError");
    expect(((cause.cause as Error).cause as Error).message).toBe("deeper [redacted]");
  });
});
