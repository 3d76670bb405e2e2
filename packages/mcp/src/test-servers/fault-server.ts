import { ProtocolError, Server, type Tool } from "@modelcontextprotocol/server";

/**
 * A scriptable MCP server for the client's tests, written with the official MCP SDK's
 * low-level `Server` so it can send what a well-behaved server never would: an invalid
 * input schema, two tools whose names collide once sanitised, a JSON-RPC error, a crash in
 * the middle of a call. Never shipped: test fixture only.
 */

/**
 * What the fault server lists, chosen by the test that starts it:
 * - `"normal"`: the base tools;
 * - `"collide"`: two tools, `a.b` and `a_b`, that sanitise to one name;
 * - `"hostile"`: the base tools and {@link HOSTILE_TOOLS} (a catastrophic pattern, huge and
 *   endless answers, echoed credentials);
 * - `"silent_list"`: never answers `tools/list`;
 * - `"many"`: {@link MANY_TOOLS_COUNT} tools with distinct schemas, and `relist`, which says
 *   the list changed.
 */
export type FaultServerMode = "normal" | "collide" | "hostile" | "silent_list" | "many";

/** What the fault server does, chosen by the test that starts it. */
export interface FaultServerOptions {
  /** What it lists; see {@link FaultServerMode}. Default `"normal"`. */
  readonly mode?: FaultServerMode;
  /** Called by the `crash` tool: ends the process (stdio) or drops every connection (HTTP). */
  readonly crash: () => void;
}

/** What the fault server saw, for the tests' assertions (the `stats` tool returns it). */
export interface FaultServerStats {
  /** Calls per tool name that reached the server. */
  readonly calls: Record<string, number>;
  /** Tool names whose call was cancelled by the client (`notifications/cancelled`). */
  readonly cancelled: string[];
  /** How many calls ran at the same time, at most. */
  maxInFlight: number;
  /** The server process id (stdio) or this process's (HTTP). */
  readonly pid: number;
}

const EMPTY_INPUT = { type: "object", properties: {} } as const;

const BASE_TOOLS: Tool[] = [
  {
    name: "echo",
    description: "Returns its text.",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string", minLength: 1 } },
      required: ["text"],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: "slow",
    description: "Waits `ms` milliseconds (read-only); stops early when cancelled.",
    inputSchema: { type: "object", properties: { ms: { type: "integer", minimum: 0 } } },
    annotations: { readOnlyHint: true },
  },
  {
    name: "write",
    description: "Waits `ms` milliseconds, then reports a write (destructive).",
    inputSchema: { type: "object", properties: { ms: { type: "integer", minimum: 0 } } },
    annotations: { readOnlyHint: false, destructiveHint: true },
  },
  { name: "crash", description: "Dies in the middle of the call.", inputSchema: EMPTY_INPUT },
  { name: "rpc_error", description: "Answers with a JSON-RPC error.", inputSchema: EMPTY_INPUT },
  { name: "tool_error", description: "Answers isError: true.", inputSchema: EMPTY_INPUT },
  { name: "mixed", description: "Returns every kind of content.", inputSchema: EMPTY_INPUT },
  {
    name: "structured_only",
    description: "Returns structuredContent and no content.",
    inputSchema: EMPTY_INPUT,
  },
  {
    name: "progress",
    description: "Sends `steps` progress notifications.",
    inputSchema: { type: "object", properties: { steps: { type: "integer" } } },
    annotations: { readOnlyHint: true },
  },
  {
    name: "bad_schema",
    description: "Its input schema is not valid JSON Schema.",
    inputSchema: { type: "object", properties: { x: { type: "strang" } } },
  },
  {
    name: "add_tool",
    description: "Adds the tool `added` and says the list changed.",
    inputSchema: EMPTY_INPUT,
  },
  { name: "stats", description: "What the server saw.", inputSchema: EMPTY_INPUT },
  {
    name: "needs.sanitizing tool",
    description: "A name that is not a valid Lattice tool name.",
    inputSchema: EMPTY_INPUT,
  },
];

const COLLIDING_TOOLS: Tool[] = [
  { name: "a.b", description: "One.", inputSchema: EMPTY_INPUT },
  { name: "a_b", description: "Two.", inputSchema: EMPTY_INPUT },
];

/**
 * Tools of the `"hostile"` mode. Over HTTP, `flood_json`, `flood_sse`, `echo_auth`,
 * `rpc_echo_auth` and `reject_auth` are answered by the HTTP layer (see
 * `startFaultHttpServer`), which sees the request's headers and can write without end.
 */
export const HOSTILE_TOOLS: Tool[] = [
  {
    name: "redos",
    description: "Its input pattern backtracks catastrophically in a backtracking engine.",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string", pattern: "^(a+)+$" } },
      required: ["text"],
    },
  },
  {
    name: "lookahead",
    description: "Its input pattern uses a lookahead, which a linear-time engine cannot run.",
    inputSchema: {
      type: "object",
      properties: {
        code: { type: "string", pattern: "^(?=[A-Z])\\w+$" },
        count: { type: "integer", maximum: 3 },
      },
      required: ["code"],
    },
  },
  {
    name: "keyed",
    description: "Its patternProperties key uses a lookahead; its other key is checked.",
    inputSchema: {
      type: "object",
      patternProperties: { "^(?=x)": { type: "number" }, "^n_": { type: "integer" } },
      additionalProperties: false,
    },
  },
  {
    name: "lookaheads",
    description: "Five input patterns a linear-time engine cannot run, one 3,000 characters long.",
    inputSchema: {
      type: "object",
      properties: Object.fromEntries(
        ["a", "b", "c", "d"]
          .map((key) => [key, { type: "string", pattern: `^(?=${key})` }])
          .concat([["e", { type: "string", pattern: `^(?=e)${"e".repeat(3_000)}` }]]),
      ),
    },
  },
  {
    name: "late_unchecked",
    description: "A property name RE2 does not know, found only when the pattern is compiled.",
    inputSchema: {
      type: "object",
      properties: { word: { type: "string", pattern: "^\\p{Letter}+$", maxLength: 5 } },
    },
  },
  {
    name: "lookahead_output",
    description: "Its output pattern uses a lookahead; its answer does not match it.",
    inputSchema: EMPTY_INPUT,
    outputSchema: {
      type: "object",
      properties: { code: { type: "string", pattern: "^(?=[A-Z])\\w+$" } },
    },
  },
  {
    name: "redos_output",
    description: "Its output pattern backtracks catastrophically; its answer does not match it.",
    inputSchema: EMPTY_INPUT,
    outputSchema: {
      type: "object",
      properties: { text: { type: "string", pattern: "^(a+)+$" } },
      required: ["text"],
    },
  },
  {
    name: "huge",
    description: "Answers with a text of `bytes` bytes.",
    inputSchema: { type: "object", properties: { bytes: { type: "integer", minimum: 0 } } },
  },
  { name: "flood_json", description: "HTTP: an endless JSON body.", inputSchema: EMPTY_INPUT },
  { name: "flood_sse", description: "HTTP: an endless SSE line.", inputSchema: EMPTY_INPUT },
  {
    name: "echo_auth",
    description: "HTTP: an isError result echoing the Authorization header.",
    inputSchema: EMPTY_INPUT,
  },
  {
    name: "rpc_echo_auth",
    description: "HTTP: a JSON-RPC error echoing the Authorization header.",
    inputSchema: EMPTY_INPUT,
  },
  {
    name: "reject_auth",
    description: "HTTP: a 401 whose body echoes the Authorization header.",
    inputSchema: EMPTY_INPUT,
  },
];

/** How many tools the `"many"` mode lists (besides `relist`). */
export const MANY_TOOLS_COUNT = 200;

/** Tool `index` of the `"many"` mode: a schema of its own, with a pattern, an enum, bounds. */
function manyTool(index: number, generation: number): Tool {
  return {
    name: `t${index}`,
    description: `Tool ${index} of listing ${generation}.`,
    inputSchema: {
      type: "object",
      properties: {
        q: { type: "string", pattern: `^x${index}_${generation}[a-z]*$`, maxLength: 100 },
        n: { type: "integer", minimum: index, maximum: index + generation + 10 },
        tags: { type: "array", items: { enum: ["a", "b", `c${index}`, `g${generation}`] } },
      },
      required: ["q"],
      additionalProperties: false,
    },
  };
}

const TINY_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/**
 * Builds one fault server (one per connection, as the SDK wants) sharing `stats`.
 *
 * @param options - Mode and how to crash.
 * @param stats - Where to count calls and cancellations.
 */
export function createFaultServer(options: FaultServerOptions, stats: FaultServerStats): Server {
  const server = new Server(
    { name: "fault-server", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true } } },
  );
  let added = false;
  let inFlight = 0;
  let generation = 0;

  server.setRequestHandler("tools/list", async () => {
    if (options.mode === "collide") return { tools: [...COLLIDING_TOOLS, BASE_TOOLS[0] as Tool] };
    if (options.mode === "silent_list") return new Promise<never>(() => {});
    if (options.mode === "many") {
      const tools = Array.from({ length: MANY_TOOLS_COUNT }, (_, index) =>
        manyTool(index, generation),
      );
      tools.push({
        name: "relist",
        description: "Says the list changed.",
        inputSchema: EMPTY_INPUT,
      });
      return { tools };
    }
    const tools = [...BASE_TOOLS, ...(options.mode === "hostile" ? HOSTILE_TOOLS : [])];
    if (added) {
      tools.push({ name: "added", description: "Added at run time.", inputSchema: EMPTY_INPUT });
    }
    return { tools };
  });

  server.setRequestHandler("tools/call", async (request, ctx) => {
    const { name } = request.params;
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    stats.calls[name] = (stats.calls[name] ?? 0) + 1;
    inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
    const signal = ctx.mcpReq.signal;
    const onAbort = () => stats.cancelled.push(name);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      switch (name) {
        case "echo":
        case "a.b":
        case "a_b":
        case "added":
        case "needs.sanitizing tool":
          return { content: [{ type: "text", text: `${name}:${String(args.text ?? "")}` }] };
        case "slow":
        case "write":
          await sleep(typeof args.ms === "number" ? args.ms : 0, signal);
          return { content: [{ type: "text", text: `${name} done` }] };
        case "crash":
          setTimeout(options.crash, 20);
          await sleep(10_000, signal);
          return { content: [{ type: "text", text: "unreachable" }] };
        case "rpc_error":
          throw new ProtocolError(-32001, "the database is locked");
        case "tool_error":
          return { content: [{ type: "text", text: "disk full" }], isError: true };
        case "mixed":
          return {
            content: [
              { type: "text", text: "hello" },
              { type: "image", data: TINY_PNG, mimeType: "image/png" },
              { type: "audio", data: "AAAA", mimeType: "audio/wav" },
              {
                type: "resource_link",
                uri: "file:///tmp/a.txt",
                name: "a",
                mimeType: "text/plain",
              },
              {
                type: "resource",
                resource: { uri: "file:///tmp/b.txt", mimeType: "text/plain", text: "inner text" },
              },
              {
                type: "resource",
                resource: {
                  uri: "file:///tmp/c.bin",
                  mimeType: "application/octet-stream",
                  blob: "AAAA",
                },
              },
            ],
            structuredContent: { ok: true, count: 2 },
          };
        case "structured_only":
          return { content: [], structuredContent: { temperature: 21, unit: "C" } };
        case "progress": {
          const steps = typeof args.steps === "number" ? args.steps : 3;
          const token = request.params._meta?.progressToken;
          for (let step = 1; step <= steps; step++) {
            if (token !== undefined) {
              await ctx.mcpReq.notify({
                method: "notifications/progress",
                params: {
                  progressToken: token,
                  progress: step,
                  total: steps,
                  message: `step ${step}`,
                },
              });
            }
            await sleep(5, signal);
          }
          return { content: [{ type: "text", text: `${steps} steps` }] };
        }
        case "add_tool":
          added = true;
          await server.sendToolListChanged();
          return { content: [{ type: "text", text: "added" }] };
        case "stats":
          return { content: [{ type: "text", text: JSON.stringify(stats) }] };
        case "redos":
        case "lookahead":
        case "lookaheads":
        case "late_unchecked":
        case "keyed":
          return { content: [{ type: "text", text: `${name}:${JSON.stringify(args)}` }] };
        case "lookahead_output":
          return {
            content: [{ type: "text", text: "lower" }],
            structuredContent: { code: "lower" },
          };
        case "redos_output": {
          const text = `${"a".repeat(26)}!`;
          return { content: [{ type: "text", text }], structuredContent: { text } };
        }
        case "huge": {
          const bytes = typeof args.bytes === "number" ? args.bytes : 0;
          return { content: [{ type: "text", text: "a".repeat(bytes) }] };
        }
        case "relist":
          generation++;
          await server.sendToolListChanged();
          return { content: [{ type: "text", text: `listing ${generation}` }] };
        default:
          if (/^t\d+$/.test(name)) return { content: [{ type: "text", text: `${name} ok` }] };
          throw new ProtocolError(-32602, `unknown tool ${name}`);
      }
    } finally {
      inFlight--;
      signal.removeEventListener("abort", onAbort);
    }
  });
  return server;
}

/** Fresh, empty stats. */
export function createFaultServerStats(): FaultServerStats {
  return { calls: {}, cancelled: [], maxInFlight: 0, pid: process.pid };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
