import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAgent, memorySessionStore, type TraceEvent } from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { type AnyToolDefinition, InvalidOptionError } from "@lattice/tools";
import { afterEach, describe, expect, it } from "vitest";
import { handWrittenServerCommand } from "../test-servers/commands.js";
import { type FaultHttpServer, startFaultHttpServer } from "../test-servers/fault-server-http.js";
import { McpConnectionError } from "./errors.js";
import { type McpToolSource, mcpServer } from "./mcp-server.js";
import { SecretRedactor } from "./secret-redactor.js";
import { call, callTraced } from "./test-helpers.js";

const TOKEN = "s3cr3t-T0KEN-4242";

/** Every string in a value, its errors' messages, stacks and causes included. */
function allText(value: unknown, seen = new Set<unknown>()): string {
  if (typeof value === "string") return value;
  if (value === null || typeof value !== "object" || seen.has(value)) return String(value);
  seen.add(value);
  const parts: string[] = [];
  if (value instanceof Error) {
    parts.push(
      value.message,
      value.stack ?? "",
      allText((value as { cause?: unknown }).cause, seen),
    );
  }
  for (const key of Object.keys(value)) {
    parts.push(key, allText((value as Record<string, unknown>)[key], seen));
  }
  return parts.join("\n");
}

/** An agent on the scripted model with `source`'s tools, its session store and its trace. */
function tracedAgent(model: ScriptedModelServer, source: McpToolSource) {
  const traces: TraceEvent[] = [];
  const store = memorySessionStore();
  const agent = createAgent({
    apiKey: "sk-test-mcp",
    baseURL: model.anthropicBaseURL,
    model: "scripted",
    tools: [source],
    sessionStore: store,
    onTrace: (event) => traces.push(event),
  });
  return { agent, store, traces };
}

describe("credentials never leak (H21)", () => {
  let server: FaultHttpServer | undefined;
  let model: ScriptedModelServer | undefined;
  let raw: Server | undefined;
  afterEach(async () => {
    await server?.close();
    await model?.close();
    if (raw !== undefined) await new Promise((resolve) => raw?.close(resolve));
    server = undefined;
    model = undefined;
    raw = undefined;
  });

  it("H21: a URL with a user name and password or a secret-looking query is refused, shown redacted", () => {
    const refused = [
      "http://alice:PASS-9876@example.com/mcp",
      "http://example.com/mcp?token=T-9876&page=2",
      "https://example.com/mcp?api_key=K-9876",
      "https://example.com/mcp?apiKey=K-9876",
      "https://example.com/mcp?X-Amz-Signature=S-9876",
      "https://example.com/mcp?client_secret=S-9876",
      "https://example.com/mcp?sig=S-9876",
      "https://example.com/mcp?password=P-9876",
      "https://example.com/mcp?auth=A-9876",
      // Names the first round let through.
      "https://example.com/mcp?accesskey=K-9876",
      "https://example.com/mcp?secretkey=K-9876",
      "https://example.com/mcp?privatekey=K-9876",
      "https://example.com/mcp?authkey=K-9876",
      "https://example.com/mcp?passcode=P-9876",
      "https://example.com/mcp?hmac=H-9876",
    ];
    for (const url of refused) {
      let error: unknown;
      try {
        mcpServer({ name: "web", url });
      } catch (caught) {
        error = caught;
      }
      expect(error, url).toBeInstanceOf(InvalidOptionError);
      const message = (error as Error).message;
      expect(message, url).toMatch(
        /^mcpServer\("web"\): option "url" holds a credential \(.+\), which would end up in errors and logs: https?:\/\/example\.com\/mcp\. Pass the secret in headers instead, for example headers: \{ Authorization: "Bearer <token>" \}, and remove it from the URL\.$/,
      );
      expect(message, url).not.toContain("9876");
      expect(message, url).not.toContain("alice");
    }
    expect(() => mcpServer({ name: "web", url: "http://alice:PASS-9876@example.com/mcp" })).toThrow(
      "holds a credential (a user name and password), which would end up in errors and logs: http://example.com/mcp.",
    );
    expect(() =>
      mcpServer({ name: "web", url: "http://example.com/mcp?token=T-9876&page=2" }),
    ).toThrow(
      'holds a credential (the query parameter "token"), which would end up in errors and logs: http://example.com/mcp.',
    );
    expect(() => mcpServer({ name: "web", url: "ftp://bob:PW-9876@example.com/" })).toThrow(
      /option "url" must be an http: or https: URL .*received "ftp:\/\/example\.com\/"\.$/,
    );
    for (const url of [
      "https://example.com/mcp?author=me&page=2&keyword=x",
      "https://example.com/mcp?monkey=1",
    ]) {
      expect(() => mcpServer({ name: "web", url }), url).not.toThrow();
    }
  });

  it("H21: a URL is never printed as given: an invalid one shows as (invalid URL), a fragment is refused, a connection error drops the query", async () => {
    for (const url of ["http://alice:pa/ss@host/mcp", "http://h:99999/mcp?token=SECRET-9876"]) {
      expect(() => mcpServer({ name: "web", url }), url).toThrow(
        'option "url" must be an http: or https: URL of the server\'s MCP endpoint, for example "http://127.0.0.1:3000/mcp", received "(invalid URL)".',
      );
    }
    expect(() =>
      mcpServer({ name: "web", url: "https://example.com/mcp#access_token=SECRET-9876" }),
    ).toThrow(
      'option "url" has a fragment ("#..."), which is never sent to a server and may hold a credential (#access_token=...): https://example.com/mcp. Remove the fragment; pass a secret in headers.',
    );
    // A query whose name looks harmless is accepted, and left out of what is printed.
    raw = createServer((_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end("down");
    });
    await new Promise<void>((resolve) => raw?.listen(0, "127.0.0.1", resolve));
    const port = (raw.address() as AddressInfo).port;
    await using source = mcpServer({
      name: "web",
      url: `http://127.0.0.1:${port}/mcp?code=SECRET-9876`,
    });
    const error = await source.tools().catch((caught: unknown) => caught);
    expect((error as Error).message).toMatch(
      new RegExp(`^mcp server "web": could not connect to http://127\\.0\\.0\\.1:${port}/mcp: `),
    );
    expect(allText(error)).not.toContain("SECRET-9876");
  });

  it("H21: only credential headers of 8 characters or more are secrets, and a result's keys are kept", () => {
    const redactor = SecretRedactor.forHeaders({
      Authorization: "Bearer abc123def456",
      "X-Tenant": "main",
      Accept: "application/json",
      "User-Agent": "my tool 1.0",
      "X-Api-Key": "short",
    });
    const text = '{"domain":"maintenance","type":"application/json","note":"my tool 1.0, short"}';
    expect(redactor.text(text)).toBe(text);
    expect(redactor.text("token abc123def456")).toBe("token [redacted]");
    expect(
      redactor.result({
        content: "ok",
        structuredContent: { abc123def456: { deep: [{ value: "abc123def456" }] } },
      }),
    ).toEqual({
      content: "ok",
      structuredContent: { abc123def456: { deep: [{ value: "[redacted]" }] } },
    });
  });

  it("H21: the env variables whose values are secrets are named by whole words", () => {
    const redactor = SecretRedactor.forEnv({
      GITHUB_TOKEN: "ghp_0123456789",
      OPENAI_API_KEY: "sk-0123456789",
      NODE_AUTH_TOKEN: "npm_0123456789",
      DB_PASSWORD: "hunter2hunter2",
      SESSION_DIR: "/tmp/sessions",
      PATH_KEYS: "/usr/local/bin",
      AUTHOR: "Ada Lovelace",
    });
    expect(
      redactor.text(
        "ghp_0123456789 sk-0123456789 npm_0123456789 hunter2hunter2 /tmp/sessions /usr/local/bin Ada Lovelace",
      ),
    ).toBe("[redacted] [redacted] [redacted] [redacted] /tmp/sessions /usr/local/bin Ada Lovelace");
  });

  it("H21: an echo of a secret is redacted percent-encoded, JSON-escaped, base64, and as a Basic credential's user:password", () => {
    const secret = 'tok/en+Secret=9999"q';
    const bearer = SecretRedactor.forHeaders({ Authorization: `Bearer ${secret}` });
    for (const echo of [
      encodeURIComponent(secret),
      JSON.stringify(secret).slice(1, -1),
      Buffer.from(secret).toString("base64"),
      Buffer.from(secret).toString("base64url"),
    ]) {
      expect(bearer.text(`echo: ${echo}.`), echo).toBe("echo: [redacted].");
    }
    const basic = SecretRedactor.forHeaders({
      Authorization: `Basic ${Buffer.from("alice:s3cret-pass").toString("base64")}`,
    });
    expect(basic.text("user alice:s3cret-pass, password s3cret-pass")).toBe(
      "user [redacted], password [redacted]",
    );
  });

  it("H21: a server's text is redacted before it is cut: a secret at the 2,000-character edge of an error or of stderr never shows in part", async () => {
    const secret = 'tok/en+Secret=9999"q';
    // Its "cut" tool fails with 1,990 characters and then the secret; its "stderr" tool writes
    // the secret and 1,990 characters to stderr, then exits.
    await using source = mcpServer({
      name: "leak",
      ...handWrittenServerCommand("echo_secret", secret),
    });
    const tools = await source.tools();
    for (const name of ["leak__cut", "leak__stderr"]) {
      const result = await call(tools, name, {});
      expect(result.isError, name).toBe(true);
      expect(result.text, name).toContain("[redacted]");
      // No piece of the secret: its last twelve characters, say.
      expect(allText(result), name).not.toContain(secret.slice(-12));
    }
  });

  it("H21: a tool's description, title and schema echoing a secret reach the model redacted, and so does the unchecked-pattern note", async () => {
    const secret = "s3cr3t-T0KEN-4242";
    const warnings: string[] = [];
    await using source = mcpServer({
      name: "echo",
      ...handWrittenServerCommand("echo_secret", secret),
      include: ["use"],
      onWarning: (warning) => warnings.push(warning.message),
    });
    const [definition] = await source.tools();
    expect(definition?.description).toBe("Calls with token [redacted]");
    expect(JSON.stringify(definition?.inputSchema)).toContain("defaults to [redacted]");
    expect(allText(definition)).not.toContain(secret);
    expect(warnings.join("\n")).toContain("[redacted]");
    expect(warnings.join("\n")).not.toContain(secret);
    const traced = await callTraced([definition as AnyToolDefinition], "echo__use", { key: "x" });
    const reports = traced.reports.map((report) => report.message ?? "");
    expect(reports.join("\n")).toContain("[redacted]");
    expect(reports.join("\n")).not.toContain(secret);
  });

  it("H21: a header echoed in a tool error, a JSON-RPC error or a 401 body is redacted from the tool_result, the errors, the trace and the session log", async () => {
    server = await startFaultHttpServer("hostile");
    model = await createScriptedModelServer();
    const progressMessages: string[] = [];
    const source = mcpServer({
      name: "web",
      url: server.url,
      headers: { Authorization: `Bearer ${TOKEN}`, "X-Api-Key": "k3y-value-77" },
      onWarning: () => {},
      onProgress: (event) => progressMessages.push(event.message ?? ""),
    });
    const direct = await source.tools();
    for (const name of ["web__echo_auth", "web__rpc_echo_auth", "web__reject_auth"]) {
      const result = await call(direct, name, {});
      expect(result.isError, name).toBe(true);
      expect(result.text, name).toContain("[redacted]");
      expect(allText(result), name).not.toContain(TOKEN);
    }
    expect((await call(direct, "web__reject_auth", {})).text).toMatch(
      /^mcp server "web": tool "reject_auth" failed: HTTP 401 from the server \(.*rejected \[redacted\].*\)\.$/,
    );
    // The server did receive the secret: it is only hidden in what Lattice reports.
    expect(server.authorizations).toContain(`Bearer ${TOKEN}`);

    const { agent, store, traces } = tracedAgent(model, source);
    model.enqueue(
      {
        content: [
          { type: "tool_use", id: "a", name: "web__echo_auth", input: {} },
          { type: "tool_use", id: "b", name: "web__rpc_echo_auth", input: {} },
          { type: "tool_use", id: "c", name: "web__reject_auth", input: {} },
        ],
      },
      { content: [{ type: "text", text: "done" }] },
    );
    const result = await agent.run("go", { sessionId: "h21" });
    expect(result.subtype).toBe("success");
    const sentToModel = JSON.stringify(model.requests.map((request) => request.body));
    expect(sentToModel).toContain("[redacted]");
    expect(sentToModel).not.toContain(TOKEN);
    expect(allText(result)).not.toContain(TOKEN);
    expect(allText(traces)).not.toContain(TOKEN);
    expect(allText(await store.load("h21"))).not.toContain(TOKEN);
    expect(progressMessages.join("")).not.toContain(TOKEN);
    await agent.close();
  });

  it("H21: a stdio server that prints a credential-named env variable's value does not leak it", async () => {
    const source = mcpServer({
      name: "gh",
      command: process.execPath,
      args: ["-e", "console.error('bad token: ' + process.env.GITHUB_TOKEN); process.exit(1)"],
      env: { GITHUB_TOKEN: TOKEN, LOG_LEVEL: "debug" },
    });
    const error = await source.tools().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpConnectionError);
    expect((error as McpConnectionError).stderrTail).toBe("bad token: [redacted]");
    expect(allText(error)).not.toContain(TOKEN);
    await source.close();
  });

  it("H21: a server that refuses the handshake with the token in its 401 body fails tools() and the run without it", async () => {
    raw = createServer((req, res) => {
      res.writeHead(401, { "content-type": "text/plain" });
      res.end(`unknown credential ${req.headers.authorization ?? ""}`);
    });
    await new Promise<void>((resolve) => raw?.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/mcp`;
    const source = mcpServer({ name: "web", url, headers: { Authorization: `Bearer ${TOKEN}` } });
    const error = await source.tools().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpConnectionError);
    expect((error as Error).message).toContain("unknown credential [redacted]");
    expect(allText(error)).not.toContain(TOKEN);

    model = await createScriptedModelServer();
    const { agent, store, traces } = tracedAgent(model, source);
    const result = await agent.run("go", { sessionId: "h21-connect" });
    expect(result.subtype).toBe("error_during_execution");
    expect(result.errors[0]).toContain("[redacted]");
    expect(allText(result)).not.toContain(TOKEN);
    expect(allText(traces)).not.toContain(TOKEN);
    expect(allText(await store.load("h21-connect"))).not.toContain(TOKEN);
    await agent.close();
  });
});
