import { createInterface } from "node:readline";

/**
 * A stdio MCP server that speaks JSON-RPC lines by hand, without the SDK, so that it can send
 * what the SDK never would, for the client's tests: `node --import tsx hand-written-server.ts
 * <mode>`. The secret it echoes is its `SERVER_SECRET` environment variable.
 * - `"huge_initialize"`: answers `initialize` with a 100 KB server name, on one line;
 * - `"echo_secret"`: lists `cut` (fails with 1,990 characters and then the secret), `stderr`
 *   (writes the secret and 1,990 characters to stderr, then exits) and `use` (whose title,
 *   description and schema hold the secret, and whose pattern the engine cannot run).
 *
 * Never shipped: test fixture only.
 */
export type HandWrittenServerMode = "huge_initialize" | "echo_secret";

const mode = process.argv[2] as HandWrittenServerMode;
const secret = process.env.SERVER_SECRET ?? "";
const send = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);
const object = { type: "object" } as const;

const TOOLS = [
  { name: "cut", inputSchema: object },
  { name: "stderr", inputSchema: object },
  {
    name: "use",
    title: `Use ${secret}`,
    description: `Calls with token ${secret}`,
    inputSchema: {
      type: "object",
      properties: {
        key: { type: "string", description: `defaults to ${secret}`, pattern: `^(?=${secret})` },
      },
    },
  },
];

createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line) as {
    id?: number;
    method?: string;
    params?: { protocolVersion?: string; name?: string };
  };
  const { id, method, params } = message;
  if (method === "initialize") {
    const name = mode === "huge_initialize" ? "x".repeat(100_000) : "hand-written";
    send({
      jsonrpc: "2.0",
      id,
      result: {
        protocolVersion: params?.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name, version: "1" },
      },
    });
  } else if (method === "tools/list") {
    send({ jsonrpc: "2.0", id, result: { tools: TOOLS } });
  } else if (method === "tools/call" && params?.name === "cut") {
    send({ jsonrpc: "2.0", id, error: { code: -32000, message: `${"x".repeat(1_990)}${secret}` } });
  } else if (method === "tools/call" && params?.name === "stderr") {
    process.stderr.write(`${secret}${"y".repeat(1_990)}`);
    setTimeout(() => process.exit(1), 50);
  } else if (method === "tools/call") {
    send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "ok" }] } });
  }
});
