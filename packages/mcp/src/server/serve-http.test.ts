import { request as httpRequest } from "node:http";
import { tool } from "@lattice/tools";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { initializeBody, MCP_POST_HEADERS } from "../test-servers/raw-session.js";
import { add } from "./fixtures/served-tools.js";
import { serveMcp } from "./serve-mcp.js";
import type { ServeMcpHttpHandle, ServeMcpHttpOptions } from "./serve-mcp-options.js";

const handles: ServeMcpHttpHandle[] = [];
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(handles.splice(0).map((handle) => handle.close()));
});

async function serve(
  tools: Parameters<typeof serveMcp>[0]["tools"],
  options: Partial<ServeMcpHttpOptions> = {},
): Promise<ServeMcpHttpHandle> {
  const handle = await serveMcp(
    { name: "http-test", version: "1.0.0", tools },
    { transport: "http", port: 0, ...options },
  );
  handles.push(handle);
  return handle;
}

async function connect(url: string, era: "legacy" | "modern" = "legacy"): Promise<Client> {
  const client = new Client(
    { name: "test-client", version: "1.0.0" },
    era === "modern" ? { versionNegotiation: { mode: "auto" } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

/** A raw POST with chosen headers (fetch may not set Host). */
function post(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const body = initializeBody();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: "POST",
        headers: { ...MCP_POST_HEADERS, ...headers },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("serveMcp over HTTP: binding and DNS rebinding (M13)", () => {
  it("M13: binds 127.0.0.1 by default, at /mcp", async () => {
    const handle = await serve([add]);
    expect(handle.url).toBe(`http://127.0.0.1:${handle.port}/mcp`);
    expect(handle.transport).toBe("http");
    expect((await post(handle.url, {})).status).toBe(200);
    expect((await post(handle.url.replace("/mcp", "/other"), {})).status).toBe(404);
  });

  it("M13: refuses a foreign Host or Origin with 403, accepts localhost ones", async () => {
    const handle = await serve([add]);
    const port = handle.port;
    const foreignHost = await post(handle.url, { host: `attacker.example:${port}` });
    expect(foreignHost.status).toBe(403);
    expect(foreignHost.body).toContain("Invalid Host: attacker.example");
    const foreignOrigin = await post(handle.url, { origin: "http://attacker.example" });
    expect(foreignOrigin.status).toBe(403);
    expect(foreignOrigin.body).toContain("Invalid Origin: attacker.example");
    expect((await post(handle.url, { origin: "null" })).status).toBe(403);
    expect((await post(handle.url, { host: `localhost:${port}` })).status).toBe(200);
    expect((await post(handle.url, { origin: `http://localhost:${port}` })).status).toBe(200);
  });

  it("M13: allowedHosts and allowedOrigins replace the defaults", async () => {
    const handle = await serve([add], {
      allowedHosts: ["mcp.internal"],
      allowedOrigins: ["app.internal"],
      path: "/tools",
    });
    expect(handle.url).toMatch(/\/tools$/);
    expect((await post(handle.url, {})).status).toBe(403);
    const allowed = await post(handle.url, {
      host: "mcp.internal",
      origin: "https://app.internal",
    });
    expect(allowed.status).toBe(200);
    expect(
      (await post(handle.url, { host: "mcp.internal", origin: "http://mcp.internal" })).status,
    ).toBe(403);
  });
});

describe("serveMcp close (M14)", () => {
  it.each(["legacy", "modern"] as const)(
    "M14: close() waits for a call in flight to be answered, then refuses connections (%s-era client)",
    async (era) => {
      let started: () => void = () => {};
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const slow = tool("slow", "Finishes when released", z.object({}), async () => {
        started();
        await gate;
        return { content: "finished" };
      });
      const handle = await serveMcp(
        { name: "closing", version: "1.0.0", tools: [slow] },
        { transport: "http", port: 0 },
      );
      const client = await connect(handle.url, era);
      const call = client.callTool({ name: "slow", arguments: {} });
      await running;

      let closed = false;
      const closing = handle.close().then(() => {
        closed = true;
      });
      expect(handle.close()).toBe(handle.close());
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(closed).toBe(false);

      release();
      const result = await call;
      expect(result.content).toEqual([{ type: "text", text: "finished" }]);
      await closing;
      await handle.closed;
      await expect(fetch(handle.url, { method: "POST" })).rejects.toThrow();
      await client.close().catch(() => {});
    },
  );

  it("M14: close() resolves at once when nothing is in flight, even with a client connected", async () => {
    const handle = await serve([add]);
    const client = await connect(handle.url);
    expect((await client.callTool({ name: "add", arguments: { a: 1, b: 1 } })).content).toEqual([
      { type: "text", text: "2" },
    ]);
    const started = Date.now();
    await handle.close();
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
