import { execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { parseToolInput } from "@lattice/tools";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRawSession, postInSession } from "../test-servers/raw-session.js";
import { add } from "./fixtures/served-tools.js";

const packageDir = fileURLToPath(new URL("../..", import.meta.url));
const NODE_ARGS = ["--conditions=@lattice/source", "--import", "tsx", "src/bin/lattice-mcp.ts"];

function binTransport(...args: string[]): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: [...NODE_ARGS, ...args],
    cwd: packageDir,
    stderr: "pipe",
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function text(result: { content: unknown }): string {
  return (result.content as { type: string; text?: string }[])
    .map((block) => block.text ?? "")
    .join("\n");
}

describe("lattice-mcp serve over stdio, with the official MCP client", () => {
  const client = new Client({ name: "test-client", version: "1.0.0" });

  beforeAll(async () => {
    await client.connect(binTransport("serve", "src/server/fixtures/served-tools.ts"));
  });
  afterAll(async () => {
    await client.close();
  });

  it("M11: lists the module's tools with their JSON Schema, readOnlyHint only for constant-true rules", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((listed) => listed.name)).toEqual(["add", "fail", "lookup", "report", "slow"]);
    const listedAdd = tools.find((listed) => listed.name === "add");
    expect(listedAdd?.inputSchema).toEqual(add.inputSchema);
    expect(listedAdd?.description).toBe("Add two numbers");
    expect(listedAdd?.annotations).toEqual({ readOnlyHint: true });
    expect(tools.find((listed) => listed.name === "lookup")?.annotations).toBeUndefined();
  });

  it("M11: a valid call is answered with the handler's content", async () => {
    const result = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe("5");
  });

  it("M11: an invalid input is answered isError with the text a model would get", async () => {
    const result = await client.callTool({ name: "add", arguments: { a: "two" } });
    const expected = await parseToolInput(add, { a: "two" });
    expect(expected.success).toBe(false);
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(expected.success ? "" : expected.error.message);
    expect(text(result)).toContain('Invalid input for tool "add"');
  });

  it("M11: a handler's throw is answered isError with its message", async () => {
    const result = await client.callTool({ name: "fail", arguments: {} });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe("the disk is full");
  });

  it("M11: a handler's structuredResult becomes structuredContent", async () => {
    const result = await client.callTool({ name: "report", arguments: { items: [1, 2, 3] } });
    expect(text(result)).toBe("total 6");
    expect(result.structuredContent).toEqual({ total: 6, count: 3 });
  });
});

describe("lattice-mcp shutdown over stdio (M14)", () => {
  it("M14: SIGTERM mid-call: the call is still answered, then the server process ends", async () => {
    const transport = binTransport("serve", "src/server/fixtures/served-tools.ts");
    let stderr = "";
    const started = new Promise<void>((resolve) => {
      transport.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes("slow started")) resolve();
      });
    });
    const client = new Client({ name: "test-client", version: "1.0.0" });
    await client.connect(transport);
    const exited = new Promise<number | null>((resolve) => {
      client.onclose = () => resolve(null);
    });
    const call = client.callTool({ name: "slow", arguments: {} });
    await started;
    const pid = transport.pid as number;
    process.kill(pid, "SIGTERM");
    expect(text(await call)).toBe("slow done");
    await exited;
    await expect.poll(() => isAlive(pid)).toBe(false);
    expect(stderr).toContain(
      "lattice-mcp: serving 5 tool(s) over stdio: add, fail, lookup, report, slow",
    );
  });
});

describe("lattice-mcp module contract", () => {
  it("a default export decides alone what is served", async () => {
    const client = new Client({ name: "test-client", version: "1.0.0" });
    await client.connect(binTransport("serve", "src/server/fixtures/default-array.ts"));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((listed) => listed.name)).toEqual(["ping"]);
    } finally {
      await client.close();
    }
  });

  it("a default export holding something else, or a module with nothing to serve, fails with a message", async () => {
    const run = (...args: string[]) =>
      promisify(execFile)(process.execPath, [...NODE_ARGS, ...args], { cwd: packageDir });
    const [invalid, nothing, usage] = await Promise.allSettled([
      run("serve", "src/server/fixtures/default-invalid.ts"),
      run("serve", "src/server/fixtures/nothing.ts"),
      run("serve"),
    ]);
    expect(invalid).toMatchObject({
      status: "rejected",
      reason: {
        code: 1,
        stderr: expect.stringContaining(
          'default export [1] of "src/server/fixtures/default-invalid.ts" is "oops"',
        ),
      },
    });
    expect(nothing).toMatchObject({
      status: "rejected",
      reason: { code: 1, stderr: expect.stringContaining("exports no tool and no agent") },
    });
    expect(usage).toMatchObject({
      status: "rejected",
      reason: { code: 2, stderr: expect.stringContaining("Usage: lattice-mcp serve <module>") },
    });
  });
});

/** Starts `lattice-mcp serve --http` with `args`; resolves with its URL and the process. */
async function startHttpBin(args: readonly string[]) {
  const child = spawn(
    process.execPath,
    [...NODE_ARGS, "serve", "src/server/fixtures/served-tools.ts", "--http", ...args],
    { cwd: packageDir, stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const found = /at (http:\/\/\S+):/.exec(stderr);
      if (found?.[1] !== undefined) resolve(found[1]);
    });
    child.once("exit", () => reject(new Error(`lattice-mcp exited: ${stderr}`)));
  });
  return { url, child };
}

const ping = { jsonrpc: "2.0", id: 2, method: "ping" } as const;

describe("lattice-mcp serve --http keeps a bounded number of sessions (H23)", () => {
  it("H23: --max-sessions caps the 2025-era sessions; a bad value is refused", async () => {
    const { url, child } = await startHttpBin(["--max-sessions", "2"]);
    try {
      const ids = [await openRawSession(url), await openRawSession(url), await openRawSession(url)];
      const statuses = await Promise.all(
        ids.map(async (id) => (await postInSession(url, id, ping)).status),
      );
      expect(statuses).toEqual([404, 200, 200]);
    } finally {
      child.kill("SIGTERM");
    }
    const bad = await promisify(execFile)(
      process.execPath,
      [
        ...NODE_ARGS,
        "serve",
        "src/server/fixtures/served-tools.ts",
        "--http",
        "--max-sessions",
        "0",
      ],
      { cwd: packageDir },
    ).catch((error: unknown) => error);
    expect(bad).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--max-sessions must be a whole number >= 1, received "0"'),
    });
  }, 20_000);

  it("H23: --session-idle-timeout closes an idle session, with the GET event stream it holds open; a bad value is refused", async () => {
    const { url, child } = await startHttpBin(["--session-idle-timeout", "300"]);
    try {
      const id = await openRawSession(url);
      const stream = await fetch(url, {
        headers: {
          accept: "text/event-stream",
          "mcp-session-id": id,
          "mcp-protocol-version": "2025-06-18",
        },
      });
      expect(stream.status).toBe(200);
      const outcome = await Promise.race([
        stream.text().then(
          () => "closed by the server",
          () => "broken",
        ),
        new Promise((resolve) => setTimeout(() => resolve("still open after 10 s"), 10_000)),
      ]);
      expect(outcome).toBe("closed by the server");
      expect((await postInSession(url, id, ping)).status).toBe(404);
    } finally {
      child.kill("SIGTERM");
    }
    const bad = await promisify(execFile)(
      process.execPath,
      [
        ...NODE_ARGS,
        ...["serve", "src/server/fixtures/served-tools.ts", "--http"],
        ...["--session-idle-timeout", "soon"],
      ],
      { cwd: packageDir },
    ).catch((error: unknown) => error);
    expect(bad).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        '--session-idle-timeout must be a number of milliseconds >= 1, received "soon"',
      ),
    });
  }, 30_000);
});
