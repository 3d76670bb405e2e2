import { tool } from "@lattice/tools";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { mcpServer } from "../client/mcp-server.js";
import { waitFor } from "../test-servers/commands.js";
import {
  initializeBody,
  MCP_POST_HEADERS,
  openRawSession,
  postInSession,
} from "../test-servers/raw-session.js";
import { add } from "./fixtures/served-tools.js";
import { serveMcp } from "./serve-mcp.js";
import type { ServeMcpHttpHandle, ServeMcpHttpOptions } from "./serve-mcp-options.js";

const handles: ServeMcpHttpHandle[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup().catch(() => {})));
  await Promise.all(handles.splice(0).map((handle) => handle.close()));
});

/** A tool whose calls wait until the test releases them: a POST held in flight. */
function holdTool() {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const state = { started: 0, release: () => release() };
  const hold = tool("hold", "Waits until released", z.object({}), async () => {
    state.started++;
    await released;
    return { content: "released" };
  });
  return { hold, state };
}

async function serve(
  options: Partial<ServeMcpHttpOptions>,
  tools: Parameters<typeof serveMcp>[0]["tools"] = [add],
): Promise<ServeMcpHttpHandle> {
  const handle = await serveMcp(
    { name: "sessions", version: "1.0.0", tools },
    { transport: "http", port: 0, ...options },
  );
  handles.push(handle);
  return handle;
}

/** Sends `tools/list` in a session: the HTTP status and the body. */
function listIn(url: string, sessionId: string) {
  return postInSession(url, sessionId, { jsonrpc: "2.0", id: 2, method: "tools/list" });
}

/** Calls the `hold` tool in a session; settles when the call is answered. */
function holdIn(url: string, sessionId: string) {
  return postInSession(url, sessionId, {
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "hold", arguments: {} },
  });
}

describe("serveMcp over HTTP keeps a bounded number of sessions (H23)", () => {
  // (3,000 sessions, as in the attack, take 10-15 s on a busy 2-core machine: 1,000 show it.)
  it("H23: 1,000 abandoned 2025-era sessions: only the newest maxSessions stay, the evicted ones are told the session is not found", async () => {
    const handle = await serve({ maxSessions: 50 });
    // Opened 20 at a time, in order: each batch after the one before.
    const ids: string[] = [];
    for (let batch = 0; batch < 1_000 / 20; batch++) {
      ids.push(
        ...(await Promise.all(Array.from({ length: 20 }, () => openRawSession(handle.url)))),
      );
    }
    for (const id of ids.slice(0, 5)) {
      const evicted = await listIn(handle.url, id);
      expect(evicted.status).toBe(404);
      expect(evicted.body).toContain("Session not found");
    }
    for (const id of ids.slice(-50)) expect((await listIn(handle.url, id)).status).toBe(200);
    expect((await listIn(handle.url, ids.at(-51) as string)).status).toBe(404);
  }, 60_000);

  it("H23: at the cap, the session idle longest goes first, not one in use", async () => {
    const handle = await serve({ maxSessions: 3 });
    const [first, second, third] = [
      await openRawSession(handle.url),
      await openRawSession(handle.url),
      await openRawSession(handle.url),
    ] as [string, string, string];
    // The first session is used again: the second is now the one idle longest.
    expect((await listIn(handle.url, first)).status).toBe(200);
    const fourth = await openRawSession(handle.url);
    expect((await listIn(handle.url, second)).status).toBe(404);
    for (const id of [first, third, fourth])
      expect((await listIn(handle.url, id)).status).toBe(200);
  });

  it("H23: a session with a POST in flight outlives the idle time many times over; an idle one expires", async () => {
    const { hold, state } = holdTool();
    const handle = await serve({ sessionIdleTimeoutMs: 300 }, [add, hold]);
    const busy = await openRawSession(handle.url);
    const idle = await openRawSession(handle.url);
    const call = holdIn(handle.url, busy);
    cleanups.push(async () => state.release());
    expect(await waitFor(() => state.started === 1)).toBe(true);
    // Five idle times and more, with no other request in either session.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const expired = await listIn(handle.url, idle);
    expect(expired.status).toBe(404);
    expect(expired.body).toContain("Session not found");
    state.release();
    // The call's answer came back on its session: the session lived through.
    const answered = await call;
    expect(answered.status).toBe(200);
    expect(answered.body).toContain("released");
  });

  it("H23: real clients keep a GET event stream open; their idle sessions still give way at the cap", async () => {
    const handle = await serve({ maxSessions: 2 });
    const clients = ["a", "b", "c"].map((name) =>
      mcpServer({ name, url: handle.url, connectTimeoutMs: 10_000 }),
    );
    cleanups.push(() => Promise.all(clients.map((client) => client.close())));
    for (const client of clients) {
      // The third evicts the session idle longest, GET stream and all.
      expect(await client.tools()).toHaveLength(1);
    }
  }, 30_000);

  it("H23: an idle session with its GET event stream open expires, and the stream is closed with it", async () => {
    const handle = await serve({ sessionIdleTimeoutMs: 300 });
    const id = await openRawSession(handle.url);
    await postInSession(handle.url, id, { jsonrpc: "2.0", method: "notifications/initialized" });
    const controller = new AbortController();
    cleanups.push(async () => controller.abort());
    const stream = await fetch(handle.url, {
      headers: {
        accept: "text/event-stream",
        "mcp-session-id": id,
        "mcp-protocol-version": "2025-06-18",
      },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return "closed by the server";
    })().catch(() => "broken");
    const outcome = await Promise.race([
      ended,
      new Promise((resolve) => setTimeout(() => resolve("still open after 10 s"), 10_000)),
    ]);
    expect(outcome).toBe("closed by the server");
    expect((await listIn(handle.url, id)).status).toBe(404);
  }, 20_000);

  it("H23: when every session has a POST in flight, a new one is refused with 503; once one is answered, a new one gets in", async () => {
    const { hold, state } = holdTool();
    const handle = await serve({ maxSessions: 2 }, [add, hold]);
    cleanups.push(async () => state.release());
    const calls = [await openRawSession(handle.url), await openRawSession(handle.url)].map((id) =>
      holdIn(handle.url, id),
    );
    expect(await waitFor(() => state.started === 2)).toBe(true);
    const refused = await fetch(handle.url, {
      method: "POST",
      headers: MCP_POST_HEADERS,
      body: initializeBody("third"),
    });
    expect(refused.status).toBe(503);
    expect(await refused.text()).toContain("Too many sessions: all 2 are in use. Try again later.");
    state.release();
    await Promise.all(calls);
    await expect(openRawSession(handle.url)).resolves.toMatch(/./);
  });

  it("H23: a 2026-07-28 subscriptions/listen stream holds nothing open: the server honours no subscription and ends it at once", async () => {
    const handle = await serve({ maxSessions: 1 });
    const client = new Client(
      { name: "listener", version: "1.0.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(handle.url)));
    cleanups.push(() => client.close());
    // Past maxSessions too (the SDK's maxSubscriptions): each one ends as soon as it opens.
    for (let round = 0; round < 3; round++) {
      const subscription = await client.listen({ toolsListChanged: true });
      expect(subscription.honoredFilter).toEqual({});
      await expect(subscription.closed).resolves.toBe("graceful");
    }
  }, 20_000);

  it("H23: maxSessions and sessionIdleTimeoutMs are checked", async () => {
    for (const [key, value] of [
      ["maxSessions", 0],
      ["maxSessions", 1.5],
      ["sessionIdleTimeoutMs", 0],
      ["sessionIdleTimeoutMs", Number.POSITIVE_INFINITY],
    ] as const) {
      await expect(
        serveMcp(
          { name: "sessions", version: "1.0.0", tools: [add] },
          { transport: "http", port: 0, [key]: value },
        ),
      ).rejects.toThrow(`option "${key}" must be`);
    }
  });
});
